import crypto from 'node:crypto';
import {
  AGENT_TICKET_ALGORITHM,
  AGENT_TICKET_AUDIENCE,
  AGENT_TICKET_TYPE,
  type AgentTicketClaims,
} from '@esign/shared';
import { SignJWT } from 'jose';
import type { AppDeps } from '../context';
import { DomainError } from '../errors/domainError';
import { randomToken, type ServiceSecrets } from '../platform/secrets';
import { normalizeOrigin } from '../tenancy/embeddingOrigins';
import { listEmbeddingOrigins } from '../tenancy/queries';

/** An EC P-256 public key as a JWKS publishes it. */
export interface AgentTicketJwk {
  kty: 'EC';
  crv: 'P-256';
  x: string;
  y: string;
  kid: string;
  alg: typeof AGENT_TICKET_ALGORITHM;
  use: 'sig';
}

interface TicketKey {
  privateKey: crypto.KeyObject;
  jwk: AgentTicketJwk;
}

const P256_ORDER = BigInt('0xffffffff00000000ffffffffffffffffbce6faada7179e84f3b9cac2fc632551');

/**
 * The ES256 key of one generation, derived from the master secret (so it needs no storage, and
 * the server and the CLI agree on it). A seed outside [1, n-1] (odds 2^-32) is re-derived.
 */
function derivedKey(seed: Buffer): TicketKey {
  let scalar = seed;
  for (
    let round = 1;
    BigInt(`0x${scalar.toString('hex')}`) >= P256_ORDER || scalar.every((b) => b === 0);
    round++
  ) {
    scalar = Buffer.from(crypto.hkdfSync('sha256', seed, Buffer.alloc(0), `retry:${round}`, 32));
  }
  const ecdh = crypto.createECDH('prime256v1');
  ecdh.setPrivateKey(scalar);
  const point = ecdh.getPublicKey();
  const x = point.subarray(1, 33).toString('base64url');
  const y = point.subarray(33, 65).toString('base64url');
  // RFC 7638 thumbprint: members in lexicographic order, no spaces.
  const kid = crypto
    .createHash('sha256')
    .update(`{"crv":"P-256","kty":"EC","x":"${x}","y":"${y}"}`)
    .digest('base64url');
  return {
    privateKey: crypto.createPrivateKey({
      key: { kty: 'EC', crv: 'P-256', x, y, d: scalar.toString('base64url') },
      format: 'jwk',
    }),
    jwk: { kty: 'EC', crv: 'P-256', x, y, kid, alg: AGENT_TICKET_ALGORITHM, use: 'sig' },
  };
}

const derivedKeys = new WeakMap<ServiceSecrets, Map<number, TicketKey>>();

function ticketKey(secrets: ServiceSecrets, generation: number): TicketKey {
  let keys = derivedKeys.get(secrets);
  if (!keys) {
    keys = new Map();
    derivedKeys.set(secrets, keys);
  }
  let key = keys.get(generation);
  if (!key) {
    key = derivedKey(secrets.agentTicketSeed(generation));
    keys.set(generation, key);
  }
  return key;
}

/**
 * The published key set: the signing generation and the next one. Agents pin the whole set on
 * first use, so one rotation (AGENT_TICKET_KEY_GENERATION + 1) needs no re-pinning.
 */
export function agentTicketKeySet(deps: Pick<AppDeps, 'config' | 'secrets'>): {
  keys: AgentTicketJwk[];
} {
  const generation = deps.config.agentTicketKeyGeneration;
  return {
    keys: [generation, generation + 1].map((entry) => ticketKey(deps.secrets, entry).jwk),
  };
}

/** The server's origin: the ticket's issuer, where agents fetch its keys. */
export function ticketIssuer(deps: Pick<AppDeps, 'config'>): string {
  return new URL(deps.config.publicUrl).origin;
}

/** The signing page's origin (signingUrl opens it): the default page that talks to the agent. */
export function signingPageOrigin(deps: Pick<AppDeps, 'config'>): string {
  return new URL(deps.config.appUrl).origin;
}

/**
 * Which page may present the ticket: the signing page by default; a partner page only when it
 * is one of the tenant's registered embedding origins (`admin domain add`).
 */
export async function ticketOrigin(
  deps: Pick<AppDeps, 'config' | 'db'>,
  tenantId: number,
  requested: string | undefined,
): Promise<string> {
  const own = signingPageOrigin(deps);
  if (requested === undefined) return own;
  const origin = normalizeOrigin(requested);
  if (origin === own) return own;
  const registered = await listEmbeddingOrigins(deps.db, tenantId);
  if (!registered.some((entry) => entry.origin === origin)) {
    throw new DomainError(
      'ORIGIN_NOT_REGISTERED',
      `${requested} is not an embedding origin of this tenant; register it (admin domain add) or leave origin out to sign on the signing page`,
      { field: 'origin' },
    );
  }
  return origin;
}

export interface TicketSubject {
  origin: string;
  sessionId: string;
  contractHash: string;
  tsaUrl: string;
  expiresAt: Date;
}

/** A compact JWS over the ticket claims, valid until the session expires. */
export async function issueAgentTicket(
  deps: Pick<AppDeps, 'config' | 'secrets' | 'clock'>,
  subject: TicketSubject,
): Promise<string> {
  const key = ticketKey(deps.secrets, deps.config.agentTicketKeyGeneration);
  const claims: Omit<AgentTicketClaims, 'iss' | 'aud' | 'iat' | 'exp'> = {
    origin: subject.origin,
    sid: subject.sessionId,
    contractHash: subject.contractHash,
    tsaUrl: subject.tsaUrl,
    nonce: randomToken(18),
  };
  return new SignJWT(claims)
    .setProtectedHeader({ alg: AGENT_TICKET_ALGORITHM, typ: AGENT_TICKET_TYPE, kid: key.jwk.kid })
    .setIssuer(ticketIssuer(deps))
    .setAudience(AGENT_TICKET_AUDIENCE)
    .setIssuedAt(Math.floor(deps.clock.now().getTime() / 1000))
    .setExpirationTime(Math.floor(subject.expiresAt.getTime() / 1000))
    .sign(key.privateKey);
}
