import {
  asciiLower,
  asciiUpper,
  assertTranslatable,
  foldedLower,
  foldedUpper,
} from './002_directory_search';
import { lettersPerStatement } from './020_shallow_search_triggers';
import {
  foldFunctionPostgres,
  rebuildSearchKeysPostgres,
  searchKeyFunctionPostgres,
  searchKeyTriggers,
} from './sqlParts';

/**
 * The keyword of the dossier list (web app) and of the task list (endpoint 6) finds text with
 * or without Vietnamese diacritics: "nguyen van anh" finds "Nguyễn Văn Ánh", as the contract
 * list's search already does (contracts/search.ts). So `dossiers.search_key` (the title) and
 * `process_steps.search_key` (the step's name), kept by triggers since migrations 004 and 020,
 * become the text folded without diacritics: `foldPlain` below, the one folding of both sides.
 *
 * SQLite has no Unicode decomposition, so the triggers fold by a table: lower() for ASCII, then
 * each letter of migration 002's table (upper and lower case, Latin-1, Latin Extended-A and the
 * Vietnamese letters) replaced by its folded form, and the combining marks those letters
 * decompose into removed (text typed decomposed, as some keyboards send it, folds alike). A few
 * letters per statement, as migration 020 does, so that old SQLite shells can open the file.
 * The existing keys are rebuilt. The directory's keys (organizations, roles, users) keep
 * migration 002's case folding. Never edit: a new folding is a new migration.
 */

/** Text folded for searching: no diacritics (đ → d), lower case, NFC. */
export function foldPlain(text: string): string {
  return text
    .normalize('NFD')
    .replace(/[\u0300-\u036f]/g, '')
    .replaceAll('đ', 'd')
    .replaceAll('Đ', 'D')
    .normalize('NFC')
    .toLowerCase();
}

/** Each letter of the table with its folded form, then each combining mark it holds, to ''. */
function foldingPairs(): [string, string][] {
  const letters = [...foldedUpper, ...foldedLower];
  const marks = new Set<string>();
  for (const letter of letters) {
    for (const part of letter.normalize('NFD')) if (/[\u0300-\u036f]/.test(part)) marks.add(part);
  }
  return [
    ...letters
      .map((letter): [string, string] => [letter, foldPlain(letter)])
      .filter(([from, to]) => from !== to),
    ...[...marks].sort().map((mark): [string, string] => [mark, '']),
  ];
}

/** `search_key = replace(…(search_key, 'À', 'a')…)`, a run of pairs per expression. */
function foldingExpressions(): string[] {
  const pairs = foldingPairs();
  const expressions: string[] = [];
  for (let start = 0; start < pairs.length; start += lettersPerStatement) {
    expressions.push(
      pairs
        .slice(start, start + lettersPerStatement)
        .reduce(
          (expression, [from, to]) => `replace(${expression}, '${from}', '${to}')`,
          'search_key',
        ),
    );
  }
  return expressions;
}

function plainKeys(table: string, column: string): string {
  const expressions = foldingExpressions();
  const body = [
    `UPDATE ${table} SET search_key = lower(coalesce(NEW.${column}, '')) WHERE id = NEW.id;`,
    ...expressions.map(
      (expression) => `UPDATE ${table} SET search_key = ${expression} WHERE id = NEW.id;`,
    ),
  ].join('\n  ');
  const rebuild = [
    `UPDATE ${table} SET search_key = lower(coalesce(${column}, ''));`,
    // Only the rows a run of letters changes are written.
    ...expressions.map(
      (expression) =>
        `UPDATE ${table} SET search_key = ${expression} WHERE ${expression} <> search_key;`,
    ),
  ].join('\n');
  return `
${searchKeyTriggers(table, column, body)}
${rebuild}
`;
}

export const plainSearch = [
  plainKeys('dossiers', 'title'),
  plainKeys('process_steps', 'name'),
].join('\n');

const plainPairs = foldingPairs();
const plainFrom = asciiUpper + plainPairs.map(([from]) => from).join('');
// The marks fold to '' and come last: translate() removes what has no counterpart.
const plainTo = asciiLower + plainPairs.map(([, to]) => to).join('');
assertTranslatable(plainFrom, plainTo);
const marksStart = plainPairs.findIndex(([, to]) => to === '');
const lettersEnd = marksStart === -1 ? plainPairs.length : marksStart;
if (plainPairs.some(([, to], index) => [...to].length !== (index < lettersEnd ? 1 : 0))) {
  throw new Error('the plain folding must map letters to one letter and marks, last, to nothing');
}

/**
 * The same on PostgreSQL: `esign_fold_plain`, one translate() over the same pairs (ASCII A–Z as
 * SQLite's lower() folds them, then each letter and combining mark above), replaces the
 * dossiers' and steps' trigger functions; their triggers (migration 004) stay. Keys are rebuilt.
 */
export const plainSearchPostgres = [
  foldFunctionPostgres('esign_fold_plain', plainFrom, plainTo),
  ...(
    [
      ['dossiers', 'title'],
      ['process_steps', 'name'],
    ] as const
  ).map(
    ([table, column]) => `
${searchKeyFunctionPostgres(table, [column], 'esign_fold_plain')}
${rebuildSearchKeysPostgres(table, [column], 'esign_fold_plain')}`,
  ),
].join('\n');
