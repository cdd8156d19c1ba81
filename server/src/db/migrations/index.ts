import { foundation } from './001_foundation';

export interface Migration {
  version: number;
  name: string;
  sql: string;
}

/** Applied in order at start; a version once shipped is never edited, only followed. */
export const migrations: Migration[] = [{ version: 1, name: 'foundation', sql: foundation }];
