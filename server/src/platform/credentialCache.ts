/**
 * What authenticating a request reads from the database (an API key's row and its user, a user's
 * permissions), kept between requests. An entry is used only while `version` has not moved since
 * it was read: the database layer moves it whenever this process writes one of the tables the
 * entries come from (a key revoked, a user locked or edited, memberships or roles changed) and
 * whenever another process (the operator CLI) commits anything. A short lifetime bounds what any
 * missed path could serve. Rows are kept, not decisions: expiry, revocation and status are
 * checked again on every use, against the clock of that moment.
 */

/** The tables whose rows the entries are made of. */
export const credentialTables = [
  'api_keys',
  'users',
  'memberships',
  'roles',
  'role_permissions',
  'tenants',
] as const;

interface Entry {
  value: unknown;
  version: number;
  storedAt: number;
}

export interface CredentialCacheOptions {
  /** Moves when a table of `credentialTables` may have changed (StatementCache.watch). */
  version: () => number;
  /** How long an entry lives at most, in milliseconds (default 30 s). */
  lifetimeMs?: number;
  /** How many entries are kept at most, the oldest dropped first (default 10,000). */
  capacity?: number;
  /** Monotonic milliseconds (default performance.now). */
  now?: () => number;
}

export class CredentialCache {
  readonly #entries = new Map<string, Entry>();
  readonly #version: () => number;
  readonly #lifetimeMs: number;
  readonly #capacity: number;
  readonly #now: () => number;

  constructor(options: CredentialCacheOptions) {
    this.#version = options.version;
    this.#lifetimeMs = options.lifetimeMs ?? 30_000;
    this.#capacity = options.capacity ?? 10_000;
    this.#now = options.now ?? (() => performance.now());
  }

  /**
   * The value kept under `key`, or what `load` reads (kept when nothing moved while it was
   * read, and when it is not undefined: misses are not remembered, so unknown keys cost nothing).
   */
  async get<T>(key: string, load: () => Promise<T | undefined>): Promise<T | undefined> {
    const version = this.#version();
    const now = this.#now();
    const entry = this.#entries.get(key);
    if (entry !== undefined) {
      if (entry.version === version && now - entry.storedAt < this.#lifetimeMs) {
        return entry.value as T;
      }
      this.#entries.delete(key);
    }
    const value = await load();
    if (value !== undefined && this.#version() === version) {
      this.#entries.set(key, { value, version, storedAt: now });
      if (this.#entries.size > this.#capacity) {
        const oldest = this.#entries.keys().next().value;
        if (oldest !== undefined) this.#entries.delete(oldest);
      }
    }
    return value;
  }

  get size(): number {
    return this.#entries.size;
  }
}
