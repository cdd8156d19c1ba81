/**
 * The signing ticket: the server's word that one page origin may have one document digest signed
 * for one session, with one TSA, until a time. A compact JWS (ES256) the server issues with a
 * `usb_token` initiate and the agent checks before it touches a token. Server and agent read
 * its claims through this one schema.
 */
import { z } from 'zod';
import { agentOriginSchema } from './agentProtocol';
import { firstIssue, plainIssues } from './zodIssues';

/** Where a server publishes its ticket keys (JWKS), under its own origin. */
export const AGENT_TICKET_KEYS_PATH = '/.well-known/esign-agent-keys.json';
/** The `aud` of every ticket: a ticket is good for the agent and nothing else. */
export const AGENT_TICKET_AUDIENCE = 'esign-agent';
/** The JWS `typ` header, so that no other JWT of the server passes for a ticket. */
export const AGENT_TICKET_TYPE = 'esign-agent-ticket+jwt';
/** The only signature algorithm of tickets. */
export const AGENT_TICKET_ALGORITHM = 'ES256';

const seconds = z.number().int().positive();

export const AgentTicketClaimsSchema = z.object({
  /** The server's origin: where its keys are published. */
  iss: agentOriginSchema,
  aud: z.literal(AGENT_TICKET_AUDIENCE),
  /** The page origin allowed to present the ticket (the WebSocket handshake's Origin). */
  origin: agentOriginSchema,
  /** The signing session. */
  sid: z.string().min(1).max(200),
  /** `sha256:<hex>`: the digest the signature is over (the sign request's documentDigest). */
  contractHash: z.string().regex(/^sha256:[0-9a-f]{64}$/, 'must be sha256:<64 hex digits>'),
  /** The TSA the agent must stamp with. */
  tsaUrl: z.string().url().max(2048),
  /** Unique per ticket: the agent refuses a second signature with the same one. */
  nonce: z.string().min(16).max(128),
  iat: seconds,
  exp: seconds,
});
export type AgentTicketClaims = z.infer<typeof AgentTicketClaimsSchema>;

/** Checks verified ticket claims' shape; the reason names the first bad claim. */
export function parseAgentTicketClaims(
  payload: unknown,
): { ok: true; claims: AgentTicketClaims } | { ok: false; reason: string } {
  const result = AgentTicketClaimsSchema.safeParse(payload, { error: plainIssues });
  return result.success
    ? { ok: true, claims: result.data }
    : { ok: false, reason: firstIssue(result.error) };
}
