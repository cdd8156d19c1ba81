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

/*
 * PostgreSQL parts. The same objects as the SQLite parts above (same table, column, index and
 * trigger names); a trigger is a PL/pgSQL function (named `esign_…`, functions share one
 * namespace) and a trigger that runs it.
 */

/** A PostgreSQL string literal. */
export function postgresLiteral(text: string): string {
  return `'${text.replaceAll("'", "''")}'`;
}

/**
 * The function of the append-only triggers (migration 013 creates it): refuses the change with
 * the SQLite trigger's message, `<rows> are append-only` (its argument names the rows).
 */
export const appendOnlyFunctionPostgres = `CREATE FUNCTION esign_append_only() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
  RAISE EXCEPTION '% are append-only', TG_ARGV[0] USING ERRCODE = 'restrict_violation';
END $$;`;

/** `appendOnlyTriggers` on PostgreSQL: the same two triggers, BEFORE UPDATE and BEFORE DELETE. */
export function appendOnlyTriggersPostgres(table: string, rows: string): string {
  return ['update', 'delete']
    .map(
      (event) =>
        `CREATE TRIGGER ${table}_no_${event} BEFORE ${event.toUpperCase()} ON ${table}
  FOR EACH ROW EXECUTE FUNCTION esign_append_only(${postgresLiteral(rows)});`,
    )
    .join('\n');
}

/**
 * An IMMUTABLE SQL function folding text by translate(): each character of `from` becomes the
 * character at the same place of `to`, or is removed when `to` is shorter. One pass over the
 * text, so it equals SQLite's chain of replace() calls only when no `to` character is itself in
 * `from` (the migrations check it when they build their tables).
 */
export function foldFunctionPostgres(name: string, from: string, to: string): string {
  return `CREATE FUNCTION ${name}(text) RETURNS text
LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
AS $$ SELECT translate($1, ${postgresLiteral(from)}, ${postgresLiteral(to)}) $$;`;
}

/** The searchable columns of a row, joined by U+001F as the SQLite triggers join them. */
function joinedColumns(columns: readonly string[]): string {
  return columns.map((column) => `coalesce(NEW.${column}, '')`).join(' || chr(31) || ');
}

/**
 * (Re)defines `esign_<table>_search_key()`: sets NEW.search_key to `fold` of the row's
 * searchable columns joined by U+001F (the SQLite triggers' key, written before the row is).
 */
export function searchKeyFunctionPostgres(
  table: string,
  columns: readonly string[],
  fold: string,
): string {
  return `CREATE OR REPLACE FUNCTION esign_${table}_search_key() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
  NEW.search_key := ${fold}(${joinedColumns(columns)});
  RETURN NEW;
END $$;`;
}

/**
 * The search-key triggers of a table on PostgreSQL, with SQLite's names: BEFORE INSERT, and
 * BEFORE UPDATE of the searchable columns (SQLite's fire AFTER and rewrite the row; here the key
 * is set on the row being written).
 */
export function searchKeyTriggersPostgres(
  table: string,
  columns: readonly string[],
  fold: string,
): string {
  return `${searchKeyFunctionPostgres(table, columns, fold)}
CREATE TRIGGER ${table}_search_key_insert BEFORE INSERT ON ${table}
  FOR EACH ROW EXECUTE FUNCTION esign_${table}_search_key();
CREATE TRIGGER ${table}_search_key_update BEFORE UPDATE OF ${columns.join(', ')} ON ${table}
  FOR EACH ROW EXECUTE FUNCTION esign_${table}_search_key();`;
}

/** Recomputes every row's search key with the same folding as the table's triggers. */
export function rebuildSearchKeysPostgres(
  table: string,
  columns: readonly string[],
  fold: string,
): string {
  const key = `${fold}(${joinedColumns(columns).replaceAll('NEW.', '')})`;
  return `UPDATE ${table} SET search_key = ${key} WHERE search_key IS DISTINCT FROM ${key};`;
}

/**
 * After rows were copied with their ids into a table with an identity id: the next generated id
 * follows the largest one (1 when the table is empty).
 */
export function restartIdentityPostgres(table: string): string {
  return `SELECT setval(pg_get_serial_sequence('${table}', 'id'), COALESCE(MAX(id), 0) + 1, false)
  FROM ${table};`;
}
