import type { SourceAnswer } from './sourceAnswer';

/** A definitive answer (good or revoked) and the bytes it came in. */
export interface CachedAnswer {
  source: 'ocsp' | 'crl';
  answer: Extract<SourceAnswer, { kind: 'answer' }>;
  der: Buffer;
}

/**
 * Revocation answers kept in memory per (issuer key, serial) until their nextUpdate, so that
 * verifying many signatures of one signer asks the responder once. Answers without nextUpdate
 * and `unknown` answers are never kept. Bounded: the oldest entry goes first.
 */
export class RevocationCache {
  readonly #entries = new Map<string, CachedAnswer>();
  readonly #maxEntries: number;

  constructor(maxEntries = 10_000) {
    this.#maxEntries = maxEntries;
  }

  get(key: string, now: Date): CachedAnswer | null {
    const entry = this.#entries.get(key);
    if (entry === undefined) return null;
    const until = entry.answer.nextUpdate;
    if (until === undefined || until.getTime() <= now.getTime()) {
      this.#entries.delete(key);
      return null;
    }
    return entry;
  }

  set(key: string, entry: CachedAnswer): void {
    if (entry.answer.status === 'unknown' || entry.answer.nextUpdate === undefined) return;
    this.#entries.delete(key);
    this.#entries.set(key, entry);
    if (this.#entries.size > this.#maxEntries) {
      const oldest = this.#entries.keys().next().value;
      if (oldest !== undefined) this.#entries.delete(oldest);
    }
  }

  get size(): number {
    return this.#entries.size;
  }
}
