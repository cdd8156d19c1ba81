import type { Compilable, CompiledQuery } from 'kysely';
import type { Db } from './database';
import { dialectOf } from './dialect';

/**
 * Queries built and compiled once per shape, then run with new values. Kysely builds a tree,
 * freezes it and compiles it to SQL on every call, which on a hot read costs more than SQLite
 * takes to run it; the SQL text and the order of its parameters only change with the query's
 * shape. A shape is built from stand-ins: every string, number or bigint among `values` becomes
 * a `Slot` (a unique object Kysely passes through as a parameter), every array an array of
 * slots of the same length, while null, undefined and booleans stay as they are. The shape's key
 * is that pattern (which values are null, how long each array is, each boolean), so `build` may
 * choose the SQL by null, by a boolean or by an array's length, and never by a string or number
 * (those are stand-ins: compare them in the caller and pass a boolean instead).
 *
 *   const byDocumentId = queryShape((db: Db, v: { documentId: string; tenantId: number }) =>
 *     db.selectFrom('dossiers').selectAll().where('document_id', '=', v.documentId)...);
 *   const rows = await byDocumentId.all(db, { documentId, tenantId });
 *
 * Values written into the query as constants (`where('status', '=', 'WAITING')`) stay constants.
 * Runs through `db.executeQuery`, so a transaction's queries stay on its connection.
 */

class Slot {
  constructor(
    readonly name: string,
    readonly index: number,
  ) {}
}

/** A compiled shape and, per parameter, where its value comes from. */
interface Compiled {
  query: CompiledQuery;
  sources: ReadonlyArray<Slot | { constant: unknown }>;
}

function isPlain(value: unknown): value is string | number | bigint {
  return typeof value === 'string' || typeof value === 'number' || typeof value === 'bigint';
}

function keyPart(value: unknown): string {
  if (value === null) return 'n';
  if (value === undefined) return 'u';
  if (typeof value === 'boolean') return value ? 't' : 'f';
  if (Array.isArray(value)) return `a${value.length}`;
  if (isPlain(value)) return 'v';
  throw new TypeError('queryShape: values are strings, numbers, booleans, null or arrays of those');
}

function standIns<V extends object>(values: V): V {
  const out: Record<string, unknown> = {};
  for (const [name, value] of Object.entries(values)) {
    if (Array.isArray(value)) out[name] = value.map((_, index) => new Slot(name, index));
    else out[name] = isPlain(value) ? new Slot(name, -1) : value;
  }
  return out as V;
}

export interface QueryShape<V extends object, Row> {
  all(db: Db, values: V): Promise<Row[]>;
  first(db: Db, values: V): Promise<Row | undefined>;
}

export function queryShape<V extends object, Row>(
  build: (db: Db, values: V) => Compilable<Row>,
): QueryShape<V, Row> {
  const shapes = new Map<string, Compiled>();
  const compiledFor = (db: Db, values: V): Compiled => {
    // The dialect first: SQLite and PostgreSQL compile the same shape to different SQL.
    let key = dialectOf(db);
    for (const [name, value] of Object.entries(values)) key += `${name}:${keyPart(value)};`;
    let compiled = shapes.get(key);
    if (compiled === undefined) {
      const query = build(db, standIns(values)).compile();
      compiled = {
        query,
        sources: query.parameters.map((p) => (p instanceof Slot ? p : { constant: p })),
      };
      shapes.set(key, compiled);
    }
    return compiled;
  };
  const all = async (db: Db, values: V): Promise<Row[]> => {
    const { query, sources } = compiledFor(db, values);
    const parameters = sources.map((source) => {
      if (!(source instanceof Slot)) return source.constant;
      const value = (values as Record<string, unknown>)[source.name];
      return source.index < 0 ? value : (value as unknown[])[source.index];
    });
    const result = await db.executeQuery<Row>({ ...query, parameters } as CompiledQuery<Row>);
    return result.rows;
  };
  return {
    all,
    first: async (db, values) => (await all(db, values))[0],
  };
}
