/**
 * The in-process bookkeeping both file stores share: a claim per content between its put and
 * the commit (keep) or rollback (remove) of the row naming it, and a lock per content so a put's
 * placement, a rollback and the sweep's delete of the same content run one after another.
 */

interface Claim {
  count: number;
  /** Another put of the same content happened while the claim was open. */
  shared: boolean;
}

export class ContentClaims {
  private readonly claims = new Map<string, Claim>();
  private readonly locks = new Map<string, Promise<unknown>>();

  /** A put placed (or found) the content; `created` when it was not there before. */
  add(sha256: string, created: boolean): void {
    const claim = this.claims.get(sha256);
    if (claim === undefined) this.claims.set(sha256, { count: 1, shared: !created });
    else {
      claim.count += 1;
      claim.shared = true;
    }
  }

  /** A put of this content is not committed yet. */
  has(sha256: string): boolean {
    return this.claims.has(sha256);
  }

  /** Ends one claim; returns it as it was before. */
  release(sha256: string): Claim | undefined {
    const claim = this.claims.get(sha256);
    if (claim === undefined) return undefined;
    const before = { ...claim };
    claim.count -= 1;
    if (claim.count <= 0) this.claims.delete(sha256);
    return before;
  }

  /** Runs `task` after every earlier task on the same content (placement vs. rollback). */
  withLock<T>(sha256: string, task: () => Promise<T>): Promise<T> {
    const previous = this.locks.get(sha256) ?? Promise.resolve();
    const run = previous.then(task, task);
    const tail = run.catch(() => undefined);
    this.locks.set(sha256, tail);
    void tail.then(() => {
      if (this.locks.get(sha256) === tail) this.locks.delete(sha256);
    });
    return run;
  }
}
