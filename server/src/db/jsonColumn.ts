import { z } from 'zod';

/**
 * A JSON column that does not hold what its schema says (hand-edited, or written by a bug): an
 * internal error that names the column and what is wrong, never wrong data passed on. The
 * message carries the schema's complaints only, not the stored values.
 */
export class StoredJsonError extends Error {
  override readonly name = 'StoredJsonError';
}

/**
 * The value of a JSON column read back from the database, checked with the zod schema of its
 * shape (each schema lives next to the queries that read the column). `column` is
 * `table.column`, for the message.
 */
export function parseJsonColumn<S extends z.ZodType>(
  schema: S,
  column: string,
  text: string,
): z.output<S> {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    throw new StoredJsonError(`${column} holds text that is not JSON`);
  }
  const parsed = schema.safeParse(value);
  if (!parsed.success) {
    throw new StoredJsonError(
      `${column} does not hold what its schema says: ${z.prettifyError(parsed.error)}`,
    );
  }
  return parsed.data;
}

/** A JSON object with any members (metadata, event details). */
export const JsonObject = z.record(z.string(), z.unknown());

/** A JSON array of strings (document classes, template fields, subscribed events). */
export const StringList = z.array(z.string());
