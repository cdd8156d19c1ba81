import {
  AGENT_TICKET_ALGORITHM,
  AGENT_TICKET_AUDIENCE,
  AGENT_TICKET_KEYS_PATH,
  AGENT_TICKET_TYPE,
  parseAgentTicketClaims,
  type SignRequest,
} from '@esign/shared';
import { createLocalJWKSet, decodeJwt, errors, jwtVerify } from 'jose';
import { z } from 'zod';
import { AgentFailure } from './errors';
import { httpExchange } from './httpClient';
import type { AcceptedTicket, SignTicketCheck } from './prompts';
import { type TicketKey, ticketKeySchema } from './settings';
import { SpentTickets } from './spentTickets';

export interface SigningTicketsOptions {
  /** Server origins whose tickets are accepted (the settings' `ticketServers`). */
  servers(): readonly string[];
  /** Refuse a `sign` that carries no ticket. */
  required(): boolean;
  /** The keys pinned for a server, if any. */
  pinned(server: string): readonly TicketKey[] | undefined;
  /** Pins a server's keys (saves them in the settings). */
  pin(server: string, keys: TicketKey[]): Promise<void>;
  now(): Date;
  /** Reads a server's published key set; default: GET <server>/.well-known/esign-agent-keys.json. */
  fetchKeySet?(server: string): Promise<unknown>;
  /** Where spent nonces are kept; default: this run's memory only. */
  spent?: SpentTickets;
}

/** Seconds of clock difference allowed between the server and this computer. */
const CLOCK_TOLERANCE_SECONDS = 60;

const keySetSchema = z.object({ keys: z.array(z.unknown()).min(1).max(20) });

async function fetchPublishedKeySet(server: string): Promise<unknown> {
  const answer = await httpExchange(`${server}${AGENT_TICKET_KEYS_PATH}`, {
    method: 'GET',
    headers: { Accept: 'application/json' },
    timeoutMs: 10_000,
    maxBytes: 64 * 1024,
  });
  if (answer.status !== 200) throw new Error(`answered HTTP ${answer.status}`);
  return JSON.parse(answer.body.toString('utf8'));
}

/** The EC P-256 signature keys of a published set; other entries are ignored. */
function ticketKeysOf(published: unknown): TicketKey[] {
  const set = keySetSchema.parse(published);
  const keys = set.keys.flatMap((entry) => {
    const key = ticketKeySchema.safeParse(entry);
    return key.success ? [key.data] : [];
  });
  if (keys.length === 0) throw new Error('publishes no EC P-256 key');
  return keys;
}

const refuse = (reason: string) => new AgentFailure('TICKET_INVALID', `signing ticket ${reason}`);

/** What jose's refusals mean to the page, in words. */
function verificationReason(error: unknown): string {
  // JWTExpired is a JWTClaimValidationFailed: it is asked first.
  if (error instanceof errors.JWTExpired) return 'expired';
  if (error instanceof errors.JWSSignatureVerificationFailed) return 'has a bad signature';
  if (error instanceof errors.JWKSNoMatchingKey)
    return 'is signed by a key not pinned for its server';
  if (error instanceof errors.JWTClaimValidationFailed) return `has a bad ${error.claim}`;
  return `is not valid: ${error instanceof Error ? error.message : String(error)}`;
}

/**
 * The agent's check of the server's signing tickets, before the token is touched: the server
 * must be one the settings name, the signature must verify with the keys pinned for it (fetched
 * once, trust on first use), and the ticket must be for this page, this digest, this TSA, not
 * expired and not used before. A nonce is held while its signature is made and given back when
 * none came of it (wrong PIN, cancel), so the page may retry; spent, it is kept until expiry
 * (in a file when the agent has one, so that a restart does not forget it).
 */
export class SigningTickets implements SignTicketCheck {
  /** `<server> <nonce>`: tickets held or spent. */
  private readonly spent: SpentTickets;

  constructor(private readonly options: SigningTicketsOptions) {
    this.spent = options.spent ?? SpentTickets.inMemory();
  }

  async check(request: SignRequest, origin: string): Promise<AcceptedTicket | null> {
    if (request.ticket === undefined) {
      if (this.options.required()) throw refuse('is missing: this agent signs only with one');
      return null;
    }
    let issuer: string | undefined;
    try {
      issuer = decodeJwt(request.ticket).iss;
    } catch {
      throw refuse('is not a compact JWS');
    }
    if (issuer === undefined || !this.options.servers().includes(issuer)) {
      throw refuse(`comes from ${issuer ?? 'no server'}, not one of this agent's signing servers`);
    }
    const keys = await this.keysOf(issuer);
    let payload: unknown;
    try {
      ({ payload } = await jwtVerify(request.ticket, createLocalJWKSet({ keys: [...keys] }), {
        algorithms: [AGENT_TICKET_ALGORITHM],
        typ: AGENT_TICKET_TYPE,
        issuer,
        audience: AGENT_TICKET_AUDIENCE,
        currentDate: this.options.now(),
        clockTolerance: CLOCK_TOLERANCE_SECONDS,
      }));
    } catch (error) {
      throw refuse(verificationReason(error));
    }
    const parsed = parseAgentTicketClaims(payload);
    if (!parsed.ok) throw refuse(`claim ${parsed.reason}`);
    const claims = parsed.claims;
    if (claims.origin !== origin) {
      throw refuse(`is for the page ${claims.origin}, not ${origin}`);
    }
    const digest = Buffer.from(request.documentDigest, 'base64').toString('hex');
    if (claims.contractHash !== `sha256:${digest}`) {
      throw refuse('is for another document (contractHash differs from documentDigest)');
    }
    if (request.tsaUrl !== undefined && request.tsaUrl !== claims.tsaUrl) {
      throw refuse('names another timestamp authority than the request');
    }
    const sessionId = request.requester.sessionId;
    if (sessionId !== undefined && sessionId !== claims.sid) {
      throw refuse(`is for the session ${claims.sid}, not ${sessionId}`);
    }
    const nonceKey = `${issuer} ${claims.nonce}`;
    if (this.spent.has(nonceKey)) throw refuse('was used already (replayed nonce)');
    // Recorded before the token is touched: a crash mid-signature leaves it spent, not reusable.
    await this.spent.spend(
      nonceKey,
      (claims.exp + CLOCK_TOLERANCE_SECONDS) * 1000,
      this.options.now().getTime(),
    );
    return {
      tsaUrl: claims.tsaUrl,
      sessionId: claims.sid,
      release: () => this.spent.giveBack(nonceKey),
    };
  }

  private async keysOf(server: string): Promise<readonly TicketKey[]> {
    const pinned = this.options.pinned(server);
    if (pinned) return pinned;
    let keys: TicketKey[];
    try {
      keys = ticketKeysOf(await (this.options.fetchKeySet ?? fetchPublishedKeySet)(server));
    } catch (error) {
      throw refuse(
        `cannot be checked: the keys of ${server} are unavailable (${error instanceof Error ? error.message : String(error)})`,
      );
    }
    await this.options.pin(server, keys);
    return keys;
  }
}
