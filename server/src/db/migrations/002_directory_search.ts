import {
  foldFunctionPostgres,
  rebuildSearchKeysPostgres,
  searchKeyTriggersPostgres,
} from './sqlParts';

/**
 * Case-insensitive search of the directory (`q` of endpoints 9–11). SQLite's lower() folds only
 * ASCII, so every organization, role and user row carries `search_key`: its searchable fields
 * folded to lower case, joined by U+001F. Triggers keep it current whoever writes the row (the
 * API, the operator CLI, fixtures), so no writer has to remember it.
 *
 * The folding is lower() for ASCII plus one replace() per upper-case letter below: Latin-1,
 * Latin Extended-A and the Vietnamese letters (Ơ, Ư and U+1EA0–U+1EF9). `foldForSearch` applies
 * the same table to the query text, so both sides fold alike. Never edit: a new table of letters
 * is a new migration that rebuilds the keys.
 */
export const foldedUpper =
  'ÀÁÂÃÄÅÆÇÈÉÊËÌÍÎÏÐÑÒÓÔÕÖØÙÚÛÜÝÞĀĂĄĆĈĊČĎĐĒĔĖĘĚĜĞĠĢĤĦĨĪĬĮĲĴĶĹĻĽĿŁŃŅŇŊŌŎŐŒŔŖŘŚŜŞŠŢŤŦŨŪŬŮŰŲŴŶŸŹŻŽƠƯẠẢẤẦẨẪẬẮẰẲẴẶẸẺẼẾỀỂỄỆỈỊỌỎỐỒỔỖỘỚỜỞỠỢỤỦỨỪỬỮỰỲỴỶỸ';
export const foldedLower =
  'àáâãäåæçèéêëìíîïðñòóôõöøùúûüýþāăąćĉċčďđēĕėęěĝğġģĥħĩīĭįĳĵķĺļľŀłńņňŋōŏőœŕŗřśŝşšţťŧũūŭůűųŵŷÿźżžơưạảấầẩẫậắằẳẵặẹẻẽếềểễệỉịọỏốồổỗộớờởỡợụủứừửữựỳỵỷỹ';

const upperLetters = [...foldedUpper];
const lowerLetters = [...foldedLower];
const foldMap = new Map(upperLetters.map((letter, index) => [letter, lowerLetters[index]!]));

/** The query-side twin of the SQL folding below: NFC, ASCII lower case, then the letter table. */
export function foldForSearch(text: string): string {
  let folded = '';
  for (const letter of text.normalize('NFC')) {
    folded +=
      foldMap.get(letter) ?? (letter >= 'A' && letter <= 'Z' ? letter.toLowerCase() : letter);
  }
  return folded;
}

/** SQL of the same folding, applied to one expression (migration 004 reuses it). */
export function fold(expression: string): string {
  return upperLetters.reduce(
    (folded, letter, index) => `replace(${folded}, '${letter}', '${lowerLetters[index]}')`,
    `lower(coalesce(${expression}, ''))`,
  );
}

function searchKey(columns: string[], row: string): string {
  return columns.map((column) => fold(`${row}${column}`)).join(' || char(31) || ');
}

function keyed(table: string, columns: string[]): string {
  const refresh = `UPDATE ${table} SET search_key = ${searchKey(columns, 'NEW.')} WHERE id = NEW.id;`;
  return `
ALTER TABLE ${table} ADD COLUMN search_key TEXT NOT NULL DEFAULT '';
CREATE TRIGGER ${table}_search_key_insert AFTER INSERT ON ${table} BEGIN
  ${refresh}
END;
CREATE TRIGGER ${table}_search_key_update AFTER UPDATE OF ${columns.join(', ')} ON ${table} BEGIN
  ${refresh}
END;
UPDATE ${table} SET search_key = ${searchKey(columns, '')};
`;
}

export const directorySearch = [
  keyed('organizations', ['name', 'code']),
  keyed('roles', ['name', 'code']),
  keyed('users', ['name', 'email', 'username', 'code']),
].join('\n');

/** ASCII letters, folded by SQLite's lower() (it folds nothing else). */
export const asciiUpper = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ';
export const asciiLower = asciiUpper.toLowerCase();

/**
 * Throws unless translate(text, from, to) equals SQLite's chain of replace() calls over the same
 * pairs: one character for one (or none, past the end of `to`), each `from` character once, and
 * no `to` character that a later replace() would fold again.
 */
export function assertTranslatable(from: string, to: string): void {
  const sources = [...from];
  const targets = [...to];
  if (new Set(sources).size !== sources.length || targets.length > sources.length) {
    throw new Error('a folding table must map each character once');
  }
  if (targets.some((target) => sources.includes(target))) {
    throw new Error('a folding table must not fold its own results');
  }
}

const caseFrom = asciiUpper + foldedUpper;
const caseTo = asciiLower + foldedLower;
assertTranslatable(caseFrom, caseTo);

/**
 * The same keys on PostgreSQL. `esign_fold_case` is SQLite's folding as one translate() over the
 * same tables: ASCII A–Z (what SQLite's lower() folds; PostgreSQL's lower() would depend on the
 * cluster's locale and fold more) and the letters above. The triggers keep SQLite's names and
 * write the key before the row (BEFORE INSERT, BEFORE UPDATE OF the searchable columns).
 */
const directoryTables: [string, string[]][] = [
  ['organizations', ['name', 'code']],
  ['roles', ['name', 'code']],
  ['users', ['name', 'email', 'username', 'code']],
];

export const directorySearchPostgres = [
  foldFunctionPostgres('esign_fold_case', caseFrom, caseTo),
  ...directoryTables.map(
    ([table, columns]) => `
ALTER TABLE ${table} ADD COLUMN search_key TEXT NOT NULL DEFAULT '';
${searchKeyTriggersPostgres(table, columns, 'esign_fold_case')}
${rebuildSearchKeysPostgres(table, columns, 'esign_fold_case')}`,
  ),
].join('\n');
