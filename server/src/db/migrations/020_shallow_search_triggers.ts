import { foldedLower, foldedUpper } from './002_directory_search';
import { searchKeyTriggers } from './sqlParts';

/**
 * The search-key triggers of migrations 002 and 004, rewritten so that the sqlite3 command-line
 * tool of Debian 12 (SQLite 3.40) can open the database. Their one expression nested a replace()
 * per folded letter (134 deep); SQLite before 3.46 has a fixed parser stack and refused the whole
 * schema ("parser stack overflow"), so an operator could not inspect the file.
 *
 * Same keys, same folding: the trigger first writes lower() of the searchable columns joined by
 * U+001F, then folds that key in place, a few letters per statement. Folding letter by letter
 * commutes with joining (the separator is not a letter of the table), so the keys equal the old
 * ones and are not rebuilt. 3.40 takes about 29 nested calls inside a trigger; 12 leaves room.
 */
export const lettersPerStatement = 12;

const upperLetters = [...foldedUpper];
const lowerLetters = [...foldedLower];

/** `UPDATE … SET search_key = replace(…(search_key, 'À', 'à')…)` for each run of letters. */
function foldInPlace(table: string): string[] {
  const statements: string[] = [];
  for (let start = 0; start < upperLetters.length; start += lettersPerStatement) {
    const folded = upperLetters
      .slice(start, start + lettersPerStatement)
      .reduce(
        (expression, letter, offset) =>
          `replace(${expression}, '${letter}', '${lowerLetters[start + offset]}')`,
        'search_key',
      );
    statements.push(`UPDATE ${table} SET search_key = ${folded} WHERE id = NEW.id;`);
  }
  return statements;
}

function shallowTriggers(table: string, columns: string[]): string {
  const joined = columns.map((column) => `coalesce(NEW.${column}, '')`).join(` || char(31) || `);
  const body = [
    `UPDATE ${table} SET search_key = lower(${joined}) WHERE id = NEW.id;`,
    ...foldInPlace(table),
  ].join('\n  ');
  return `
${searchKeyTriggers(table, columns.join(', '), body)}
`;
}

export const shallowSearchTriggers = [
  shallowTriggers('organizations', ['name', 'code']),
  shallowTriggers('roles', ['name', 'code']),
  shallowTriggers('users', ['name', 'email', 'username', 'code']),
  shallowTriggers('dossiers', ['title']),
  shallowTriggers('process_steps', ['name']),
].join('\n');

/**
 * Nothing to do on PostgreSQL: this migration exists for old SQLite shells only. Its keys and
 * trigger names equal migration 002's and 004's, which PostgreSQL already has (one translate()
 * per key, no nesting to split).
 */
export const shallowSearchTriggersPostgres = `
-- Migration 020 rewrites SQLite triggers for SQLite 3.40's parser only: no change on PostgreSQL.
`;
