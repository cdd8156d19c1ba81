import type { ParseArgsConfig } from 'node:util';
import { CodedError, plainIssues } from '@esign/shared';
import { z } from 'zod';
import type { AppDeps } from '../context';
import type { Db } from '../db/database';
import type { Config } from '../platform/config';
import { tenantByCode } from '../tenancy/resolveTenant';

/** Bad arguments: the CLI prints the message and exits with 2 without touching the database. */
export class UsageError extends Error {
  override readonly name = 'UsageError';
}

/** What a command produced: one JSON object for --json, lines for people, warnings for stderr. */
export interface Outcome {
  json: Record<string, unknown>;
  lines: string[];
  warnings?: string[];
}

// --- Options ---------------------------------------------------------------------------------
//
// A command declares its options as one zod object: each property's schema says how the option
// is typed (a `z.boolean()` is a flag, a `z.array()` may be repeated, anything else takes a
// value) and what it accepts. Messages are the predicate only: `--<name>` goes in front, except
// for messages marked `standalone` (a domain validator's own sentence, a rule between options).

/** Issue params of a message that stands alone, without the option's name in front. */
export const standalone = { standalone: true } as const;

function valueMessage(issue: { input?: unknown }): string {
  return issue.input === undefined ? 'is required' : 'takes a value';
}

/** A value with something besides spaces, trimmed. */
const text = z.string({ error: valueMessage }).trim().min(1, 'must not be empty');

/** Option schemas, for commands to compose. */
export const option = {
  text,
  /** An identifier such as a tenant or organization code: no spaces, at most 64 characters. */
  code: text.regex(
    /^[^\s,:]{1,64}$/u,
    'must be 1 to 64 characters without spaces, commas or colons',
  ),
  positiveInteger: text
    .regex(/^[1-9]\d*$/, { error: (issue) => `must be a positive integer, got "${issue.input}"` })
    .transform(Number),
  flag: z.boolean().default(false),
  /** A repeatable option, every occurrence in order. */
  repeated: z.array(text).default([]),
  /** A comma-separated list. */
  list: text.transform((value) =>
    value
      .split(',')
      .map((item) => item.trim())
      .filter(Boolean),
  ),
  /** One of `values`: `must be a or b`, `must be one of a, b, c`. */
  oneOf<const T extends readonly string[]>(values: T) {
    const listed = values.length === 2 ? values.join(' or ') : `one of ${values.join(', ')}`;
    return z.enum(values, {
      error: (issue) =>
        issue.input === undefined ? 'is required' : `must be ${listed}, got "${issue.input}"`,
    });
  },
  /** `--limit N`: 1 to `max`, `fallback` when absent. */
  limit(max: number, fallback: number) {
    return option.positiveInteger
      .refine((limit) => limit <= max, `must be at most ${max}`)
      .optional()
      .transform((limit) => limit ?? fallback);
  },
};

/**
 * A domain or engine validator's refusal is a bad argument: its message is the usage error, so that bad
 * input is refused (exit 2) before the database is opened. Anything else is not about input.
 */
function refusalOf(error: unknown): string {
  if (error instanceof CodedError) return error.message;
  throw error;
}

/** A domain validator on an option's value. */
export function checked<S extends z.ZodType, T>(schema: S, validate: (value: z.output<S>) => T) {
  return schema.transform((value, context) => {
    try {
      return validate(value);
    } catch (error) {
      const message = refusalOf(error);
      context.issues.push({ code: 'custom', message, input: value, params: standalone });
      return z.NEVER;
    }
  });
}

type OptionValues = Record<string, unknown>;

/** Presence as parseArgs reports it: absent options are undefined, repeated ones may be []. */
function given(options: OptionValues, name: string): boolean {
  const value = options[name];
  return value !== undefined && value !== false && !(Array.isArray(value) && value.length === 0);
}

/** With `flag`: the options that may not be given, and why (a refinement of the options). */
export function forbiddenWith(flag: string, names: string[], because: string) {
  return (options: OptionValues, context: z.RefinementCtx) => {
    const present = options[flag] === true ? names.filter((name) => given(options, name)) : [];
    if (present.length === 0) return;
    const listed = present.map((name) => `--${name}`).join(', ');
    context.addIssue({
      code: 'custom',
      message: `${listed} cannot be used with ${because}`,
      params: standalone,
    });
  };
}

/** The options required when `flag` is `when` (a refinement of the options). */
export function requiredWhen(flag: string, when: boolean, names: string[]) {
  return (options: OptionValues, context: z.RefinementCtx) => {
    if ((options[flag] === true) !== when) return;
    for (const name of names.filter((name) => options[name] === undefined)) {
      context.addIssue({ code: 'custom', path: [name], message: 'is required' });
    }
  };
}

/** The first problem, as `<command>: --<option> <what is wrong>`. */
function usageMessage(command: string, error: z.ZodError): string {
  const [issue] = error.issues;
  const isStandalone = issue?.code === 'custom' && issue.params?.standalone === true;
  const name = issue?.path[0];
  const text =
    !issue || isStandalone || name === undefined
      ? (issue?.message ?? 'bad arguments')
      : `--${String(name)} ${issue.message}`;
  return `${command}: ${text}`;
}

/** How parseArgs must read an option: its schema stripped of defaults, pipes and optionality. */
function argumentKind(schema: z.ZodType): { type: 'string' | 'boolean'; multiple?: true } {
  if (schema instanceof z.ZodBoolean) return { type: 'boolean' };
  if (schema instanceof z.ZodArray) return { type: 'string', multiple: true };
  if (schema instanceof z.ZodOptional || schema instanceof z.ZodDefault) {
    return argumentKind(schema.unwrap() as z.ZodType);
  }
  if (schema instanceof z.ZodPipe) return argumentKind(schema.in as z.ZodType);
  return { type: 'string' };
}

/** What a command's preparation may use besides its options. */
export interface Preparation {
  now: Date;
  /** A bad argument found beyond the option schemas (exit 2, before the database is opened). */
  fail(message: string): never;
  /** Runs a domain validator on several options: its 400 becomes a usage error. */
  check<T>(validate: () => T): T;
  /** The value of an option that a `requiredWhen` rule made required (typed as present). */
  required<T>(value: T | undefined, name: string): T;
}

/** Runs after the arguments were accepted, with the opened runtime. */
export type Action = (deps: AppDeps) => Promise<Outcome>;

/**
 * Runs with the configuration only, without opening the runtime (which creates the database, the
 * file store and the master key): for commands that must not write to DATA_DIR, such as restore.
 */
export interface OfflineAction {
  offline(context: { config: Config }): Promise<Outcome>;
}

export interface Command {
  /** `group action`, as typed. */
  name: string;
  /** For parseArgs: each option's name and kind. */
  argumentOptions: NonNullable<ParseArgsConfig['options']>;
  /** Checks the option values parseArgs produced (throws UsageError) and returns the work. */
  accept(values: OptionValues, now: Date): Action | OfflineAction;
}

/** A command from its option schema and the work it prepares from the checked options. */
export function command<Shape extends z.ZodRawShape>(spec: {
  name: string;
  options: z.ZodObject<Shape>;
  prepare(options: z.output<z.ZodObject<Shape>>, preparation: Preparation): Action | OfflineAction;
}): Command {
  const fail = (message: string): never => {
    throw new UsageError(`${spec.name}: ${message}`);
  };
  const check = <T>(validate: () => T): T => {
    try {
      return validate();
    } catch (error) {
      return fail(refusalOf(error));
    }
  };
  const required = <T>(value: T | undefined, name: string): T =>
    value === undefined ? fail(`--${name} is required`) : value;
  return {
    name: spec.name,
    argumentOptions: Object.fromEntries(
      Object.entries(spec.options.shape).map(([name, schema]) => [
        name,
        argumentKind(schema as z.ZodType),
      ]),
    ),
    accept: (values, now) => {
      const parsed = spec.options.safeParse(values, { error: plainIssues });
      if (!parsed.success) throw new UsageError(usageMessage(spec.name, parsed.error));
      return spec.prepare(parsed.data, { now, fail, check, required });
    },
  };
}

/** Bytes for people: whole bytes below 1 KiB, else one decimal in the largest fitting unit. */
export function bytesText(bytes: number): string {
  const units = ['KiB', 'MiB', 'GiB', 'TiB'];
  if (bytes < 1024) return `${bytes} B`;
  let value = bytes / 1024;
  let unit = 0;
  while (value >= 1024 && unit < units.length - 1) {
    value /= 1024;
    unit += 1;
  }
  return `${value.toFixed(1)} ${units[unit]}`;
}

type Cell = string | number | null | undefined;

/** Lays rows out as aligned columns under a header; `-` for empty cells. */
export function table(header: string[], rows: Cell[][]): string[] {
  const cells = [
    header,
    ...rows.map((row) => row.map((cell) => (cell == null ? '-' : String(cell)))),
  ];
  const widths = header.map((_, column) =>
    Math.max(...cells.map((row) => (row[column] ?? '').length)),
  );
  return cells.map((row) =>
    row
      .map((cell, column) => (column === row.length - 1 ? cell : cell.padEnd(widths[column]!)))
      .join('  ')
      .trimEnd(),
  );
}

/**
 * `<group> list [--tenant T]`: the rows of every tenant or of one, as a table for people and as
 * `{ [key]: rows }` with --json.
 */
export function listCommand<T>(spec: {
  name: string;
  key: string;
  header: string[];
  list(db: Db, tenantId?: number): Promise<T[]>;
  row(item: T): Cell[];
}): Command {
  return command({
    name: spec.name,
    options: z.object({ tenant: option.text.optional() }),
    prepare: ({ tenant: tenantCode }) => {
      return async (deps) => {
        const tenant =
          tenantCode === undefined ? undefined : await tenantByCode(deps.db, tenantCode);
        const items = await spec.list(deps.db, tenant?.id);
        return { json: { [spec.key]: items }, lines: table(spec.header, items.map(spec.row)) };
      };
    },
  });
}
