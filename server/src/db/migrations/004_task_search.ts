import { fold } from './002_directory_search';
import { rebuildSearchKeysPostgres, searchKeyTriggersPostgres } from './sqlParts';

/**
 * `keyword` of the task list (endpoint 6): a case-insensitive substring of the dossier title or
 * the step name, Vietnamese letters included. As for the directory (migration 002), each row
 * carries `search_key`, its text folded to lower case, kept by triggers whoever writes the row;
 * the query side folds with `foldForSearch`. The folding (SQL and table) is migration 002's, so both
 * sides fold alike. Never edit: a new folding is a new migration that rebuilds the keys.
 */
function searchKeyOf(table: string, column: string): string {
  return `
ALTER TABLE ${table} ADD COLUMN search_key TEXT NOT NULL DEFAULT '';
CREATE TRIGGER ${table}_search_key_insert AFTER INSERT ON ${table} BEGIN
  UPDATE ${table} SET search_key = ${fold(`NEW.${column}`)} WHERE id = NEW.id;
END;
CREATE TRIGGER ${table}_search_key_update AFTER UPDATE OF ${column} ON ${table} BEGIN
  UPDATE ${table} SET search_key = ${fold(`NEW.${column}`)} WHERE id = NEW.id;
END;
UPDATE ${table} SET search_key = ${fold(column)};
`;
}

export const taskSearch = [
  searchKeyOf('dossiers', 'title'),
  searchKeyOf('process_steps', 'name'),
].join('\n');

/** The same keys on PostgreSQL, by migration 002's `esign_fold_case`. */
export const taskSearchPostgres = (
  [
    ['dossiers', 'title'],
    ['process_steps', 'name'],
  ] as const
)
  .map(
    ([table, column]) => `
ALTER TABLE ${table} ADD COLUMN search_key TEXT NOT NULL DEFAULT '';
${searchKeyTriggersPostgres(table, [column], 'esign_fold_case')}
${rebuildSearchKeysPostgres(table, [column], 'esign_fold_case')}`,
  )
  .join('\n');
