import type { ParseArgsConfig } from 'node:util';
import type { AppDeps } from '../context';
import type { Db } from '../db/database';
import { ApiError } from '../errors/apiError';
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

export type OptionSpec = NonNullable<ParseArgsConfig['options']>;
type OptionValue = string | boolean | (string | boolean)[] | undefined;

/** Typed reading of the option values parseArgs produced, with usage errors for bad ones. */
export class Args {
  constructor(
    readonly command: string,
    private readonly values: Record<string, OptionValue>,
  ) {}

  fail(message: string): never {
    throw new UsageError(`${this.command}: ${message}`);
  }

  /** A required option with a non-blank value. */
  text(name: string): string {
    const value = this.optionalText(name);
    if (value === undefined) this.fail(`--${name} is required`);
    return value;
  }

  optionalText(name: string): string | undefined {
    const value = this.values[name];
    if (value === undefined) return undefined;
    if (typeof value !== 'string') this.fail(`--${name} takes a value`);
    if (value.trim() === '') this.fail(`--${name} must not be empty`);
    return value.trim();
  }

  flag(name: string): boolean {
    return this.values[name] === true;
  }

  /** A repeatable option, every occurrence in order. */
  repeated(name: string): string[] {
    const value = this.values[name];
    if (value === undefined) return [];
    const list = Array.isArray(value) ? value : [value];
    return list.map((item) => {
      if (typeof item !== 'string' || item.trim() === '') this.fail(`--${name} takes a value`);
      return item.trim();
    });
  }

  /** A comma-separated list. */
  list(name: string): string[] | undefined {
    return this.optionalText(name)
      ?.split(',')
      .map((item) => item.trim())
      .filter(Boolean);
  }

  /** An identifier such as a tenant or organization code: no spaces, at most 64 characters. */
  code(name: string): string {
    const value = this.optionalCode(name);
    if (value === undefined) this.fail(`--${name} is required`);
    return value;
  }

  optionalCode(name: string): string | undefined {
    const value = this.optionalText(name);
    if (value !== undefined && !/^[^\s,:]{1,64}$/u.test(value)) {
      this.fail(`--${name} must be 1 to 64 characters without spaces, commas or colons`);
    }
    return value;
  }

  positiveInteger(name: string): number {
    const value = this.text(name);
    if (!/^[1-9]\d*$/.test(value))
      this.fail(`--${name} must be a positive integer, got "${value}"`);
    return Number(value);
  }

  /** Options that may not be combined with `because`. */
  forbid(names: string[], because: string): void {
    const present = names.filter((name) => this.values[name] !== undefined);
    if (present.length > 0) {
      this.fail(`${present.map((name) => `--${name}`).join(', ')} cannot be used with ${because}`);
    }
  }

  /**
   * Runs a domain validator on argument values: its 400 becomes a usage error, so that bad
   * input is refused (exit 2) before the database is opened.
   */
  check<T>(validate: () => T): T {
    try {
      return validate();
    } catch (error) {
      if (error instanceof ApiError && error.status === 400) this.fail(error.message);
      throw error;
    }
  }
}

/** Runs after the arguments were accepted, with the opened runtime. */
export type Action = (deps: AppDeps) => Promise<Outcome>;

export interface Command {
  /** `group action`, as typed. */
  name: string;
  options: OptionSpec;
  /** Checks the arguments (throws UsageError) and returns the work to do. */
  prepare(args: Args, now: Date): Action;
}

/** Value options, by name. */
export function valueOptions(...names: string[]): OptionSpec {
  return Object.fromEntries(names.map((name) => [name, { type: 'string' as const }]));
}

/** Flag options, by name. */
export function flagOptions(...names: string[]): OptionSpec {
  return Object.fromEntries(names.map((name) => [name, { type: 'boolean' as const }]));
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
  return {
    name: spec.name,
    options: valueOptions('tenant'),
    prepare: (args) => {
      const tenantCode = args.optionalText('tenant');
      return async (deps) => {
        const tenant =
          tenantCode === undefined ? undefined : await tenantByCode(deps.db, tenantCode);
        const items = await spec.list(deps.db, tenant?.id);
        return { json: { [spec.key]: items }, lines: table(spec.header, items.map(spec.row)) };
      };
    },
  };
}
