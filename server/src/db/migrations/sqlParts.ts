/**
 * SQL that several migrations write the same way. A shipped migration's text never changes:
 * these parts are frozen with the migrations that use them (the migration test compares every
 * migration's SQL with its recorded digest).
 */

/** Triggers that refuse UPDATE and DELETE on a table: its rows are append-only. */
export function appendOnlyTriggers(table: string, rows: string): string {
  return ['update', 'delete']
    .map(
      (
        event,
      ) => `CREATE TRIGGER ${table}_no_${event} BEFORE ${event.toUpperCase()} ON ${table} BEGIN
  SELECT RAISE(ABORT, '${rows} are append-only');
END;`,
    )
    .join('\n');
}

/** The columns every hash-chained audit event ends with, after its actor. */
export const auditChainColumns = `  actor_name TEXT NOT NULL,
  client_address TEXT,
  user_agent TEXT,
  details TEXT NOT NULL,
  prev_hash TEXT NOT NULL,
  hash TEXT NOT NULL,`;

/**
 * Replaces a table's search-key triggers: `body` runs after an insert, and after an update of
 * `columns`.
 */
export function searchKeyTriggers(table: string, columns: string, body: string): string {
  return `DROP TRIGGER ${table}_search_key_insert;
DROP TRIGGER ${table}_search_key_update;
CREATE TRIGGER ${table}_search_key_insert AFTER INSERT ON ${table} BEGIN
  ${body}
END;
CREATE TRIGGER ${table}_search_key_update AFTER UPDATE OF ${columns} ON ${table} BEGIN
  ${body}
END;`;
}
