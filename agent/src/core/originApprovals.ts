import { checkWebOrigin } from '@esign/shared';

export interface OriginApprovalsOptions {
  /** Origins allowed now (the settings' list, approvals included). */
  allowed(): readonly string[];
  /** Remembers an approval (adds it to the settings and saves them). */
  remember(origin: string): Promise<void>;
  /** Forgets one (removes it from the settings and saves them). */
  forget(origin: string): Promise<void>;
  ask(origin: string): Promise<boolean>;
}

/**
 * Which page origins may use the agent. Allowed ones pass; any other valid origin waits for the
 * user's answer (one question per origin however many sockets ask at once); a yes is
 * remembered, a no holds until the agent restarts so that a page cannot nag.
 */
export class OriginApprovals {
  private readonly refused = new Set<string>();
  private readonly pending = new Map<string, Promise<boolean>>();
  private readonly revokeListeners = new Set<(origin: string) => void>();

  constructor(private readonly options: OriginApprovalsOptions) {}

  /** The canonical origin of a handshake's Origin header, or null when it is not one we admit. */
  static canonical(header: string | undefined): string | null {
    if (!header) return null;
    const checked = checkWebOrigin(header);
    return checked.ok ? checked.origin : null;
  }

  isAllowed(origin: string): boolean {
    return this.options.allowed().includes(origin);
  }

  async admit(origin: string): Promise<boolean> {
    if (this.isAllowed(origin)) return true;
    if (this.refused.has(origin)) return false;
    let answer = this.pending.get(origin);
    if (!answer) {
      answer = this.options
        .ask(origin)
        .then(async (approved) => {
          if (approved) await this.options.remember(origin);
          else this.refused.add(origin);
          return approved;
        })
        .finally(() => this.pending.delete(origin));
      this.pending.set(origin, answer);
    }
    return answer;
  }

  /** Withdraws an approval; open connections from the origin are closed. */
  async revoke(origin: string): Promise<void> {
    await this.options.forget(origin);
    for (const listener of this.revokeListeners) listener(origin);
  }

  onRevoke(listener: (origin: string) => void): () => void {
    this.revokeListeners.add(listener);
    return () => this.revokeListeners.delete(listener);
  }
}
