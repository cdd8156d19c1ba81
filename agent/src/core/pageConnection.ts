/**
 * One page's WebSocket to the agent: its origin and whether it is admitted, the protocol
 * version it agreed, its request rate, and one `sign` at a time.
 */
import type { AgentErrorCode, AgentOutgoing } from '@esign/shared';
import type { WebSocket } from 'ws';
import { AgentFailure, errorFrame } from './errors';
import type { OriginApprovals } from './originApprovals';

/** WebSocket close code when the origin is refused (4000-4999: application codes). */
export const CLOSE_ORIGIN_REFUSED = 4003;

export interface RateLimit {
  /** Sustained requests per second per connection, and the burst allowed above it. */
  messagesPerSecond: number;
  burst: number;
}

/** A token bucket: `messagesPerSecond` refill, `burst` at most. */
class RateBucket {
  private tokens: number;
  private refilledAt = Date.now();

  constructor(private readonly limit: RateLimit) {
    this.tokens = limit.burst;
  }

  /** Takes one message's worth; false when the page sends faster than allowed. */
  take(): boolean {
    const now = Date.now();
    this.tokens = Math.min(
      this.limit.burst,
      this.tokens + ((now - this.refilledAt) / 1000) * this.limit.messagesPerSecond,
    );
    this.refilledAt = now;
    if (this.tokens < 1) return false;
    this.tokens -= 1;
    return true;
  }
}

export class PageConnection {
  /** The user's (or the settings') answer for this origin; a no closes the socket. */
  readonly admitted: Promise<boolean>;
  /** The protocol version agreed by `hello`; null before it. */
  version: number | null = null;
  private signPending = false;
  private readonly rate: RateBucket;

  constructor(
    readonly socket: WebSocket,
    readonly origin: string,
    approvals: OriginApprovals,
    limit: RateLimit,
  ) {
    this.rate = new RateBucket(limit);
    this.admitted = approvals.admit(origin).catch(() => false);
    void this.admitted.then((admitted) => {
      if (!admitted) this.close(`${origin} is not allowed`, 'origin not allowed');
    });
  }

  send(message: AgentOutgoing): void {
    if (this.socket.readyState === this.socket.OPEN) this.socket.send(JSON.stringify(message));
  }

  /** An error frame answering `id` (null: the connection's own notice). */
  fail(id: string | null, code: AgentErrorCode, message: string): void {
    this.send(errorFrame(id, new AgentFailure(code, message)));
  }

  /** The page learns why (ORIGIN_NOT_ALLOWED) before its socket closes. */
  close(message: string, reason: string): void {
    this.fail(null, 'ORIGIN_NOT_ALLOWED', message);
    this.socket.close(CLOSE_ORIGIN_REFUSED, reason);
  }

  /** Counts a message against the rate limit; false when it is over. */
  withinRate(): boolean {
    return this.rate.take();
  }

  /** Runs a `sign` unless one is pending on this connection (BUSY). */
  async oneSignAtATime<T>(work: () => Promise<T>): Promise<T> {
    if (this.signPending) throw new AgentFailure('BUSY', 'another sign request is pending');
    this.signPending = true;
    try {
      return await work();
    } finally {
      this.signPending = false;
    }
  }
}
