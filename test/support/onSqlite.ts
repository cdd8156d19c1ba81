import { dialectVariable } from './postgres';

/**
 * For what is about SQLite itself (its query plans, its pragmas): run in the sqlite project,
 * skipped in the postgres one. (Its own module: jest's globals exist only in test files.)
 */
export const onSqlite = {
  it: process.env[dialectVariable] === 'postgres' ? it.skip : it,
  describe: process.env[dialectVariable] === 'postgres' ? describe.skip : describe,
};
