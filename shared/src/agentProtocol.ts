/**
 * The desktop agent's WebSocket protocol (ws://127.0.0.1:<port>), shared by the agent and the
 * signing pages. Every message is one JSON object with an `id` and a `type`; a reply carries the
 * `id` of the request it answers. The first request on a connection is `hello`, which fixes the
 * protocol version for the connection.
 *
 * page → agent: `hello`, `certificates.list`, `sign`
 * agent → page: `hello.ok`, `certificates.list.result`, `sign.result`, `error`, and the push
 * `tokens.changed` (a token was plugged in or removed; its `id` is the agent's own, `evt-<n>`).
 *
 * Before opening a socket a page may probe `GET http://127.0.0.1:<port>/` on each of
 * `AGENT_PORTS`: the agent answers `AgentDiscovery` as JSON (CORS and Private Network Access
 * headers included), which also unblocks browsers that refuse a WebSocket to localhost first.
 */
import { z } from 'zod';
import { SUPPORTED_AGENT_PROTOCOL_VERSIONS } from './agentEndpoint';
import { base64ByteLength, isBase64 } from './base64';
import { agent as en } from './messages/en/agent';
import { agent as vi } from './messages/vi/agent';
import { firstIssue, plainIssues } from './zodIssues';

/** Longest message (in UTF-16 code units) either side accepts; a certificate list is the largest. */
export const AGENT_MAX_MESSAGE_LENGTH = 4 * 1024 * 1024;

/**
 * The closed set of error codes; a page switches on them to tell the user what happened.
 * Adding one is a protocol change: pages must treat an unknown code like `INTERNAL`.
 */
export const AGENT_ERROR_CODES = [
  /** The PIN typed in the agent's window was wrong; `pin` tells whether tries are running out. */
  'PIN_INCORRECT',
  /** The token refuses the user PIN: too many wrong tries. */
  'PIN_LOCKED',
  /**
   * Unattended (headless) signing: the token reports few PIN tries left after a wrong PIN, so
   * no PIN is tried without a person; `pin` carries the token's flags.
   */
  'PIN_TRIES_LOW',
  /** No token is plugged in, or no PKCS#11 module found one. */
  'NO_TOKEN',
  /** The token was unplugged during the operation. */
  'TOKEN_REMOVED',
  /** The certificate id of a `sign` request is not on any token present now. */
  'CERTIFICATE_NOT_FOUND',
  /** The user declined the request or closed the consent or PIN window. */
  'USER_CANCELLED',
  /** The page's origin is not allowed and the user did not approve it. */
  'ORIGIN_NOT_ALLOWED',
  /** No protocol version in common; `supportedVersions` lists the agent's. */
  'UNSUPPORTED_VERSION',
  /** The message is not valid for this protocol (shape, encoding, order). */
  'BAD_REQUEST',
  /** The timestamp authority could not be reached or gave an unusable token. */
  'TIMESTAMP_FAILED',
  /** The token has no mechanism for this key (RSA PKCS#1 v1.5 or ECDSA with SHA-256). */
  'MECHANISM_UNSUPPORTED',
  /** The signing ticket of a `sign` request is missing, expired, replayed or not the server's. */
  'TICKET_INVALID',
  /** The page sent more requests than the agent answers in a short time. */
  'RATE_LIMITED',
  /** Another `sign` of this connection waits for the user; one at a time. */
  'BUSY',
  /** The token refused the operation for a reason of its own (middleware, hardware). */
  'TOKEN_ERROR',
  /** Anything else; `message` says what. */
  'INTERNAL',
] as const;
export type AgentErrorCode = (typeof AGENT_ERROR_CODES)[number];

/**
 * What a page may show the user as is, in Vietnamese and English, for each code (the words:
 * messages/<language>/agent.ts).
 */
export const AGENT_ERROR_MESSAGES: Readonly<Record<AgentErrorCode, { vi: string; en: string }>> =
  Object.fromEntries(
    AGENT_ERROR_CODES.map((code) => [code, { vi: vi.errors[code], en: en.errors[code] }]),
  ) as Record<AgentErrorCode, { vi: string; en: string }>;

// --- Field rules ---------------------------------------------------------------------------
//
// Each rule's message is the predicate only; the parse names the field in front of it.

const MAX_CERTIFICATE_BYTES = 48 * 1024;

/** A string of `min` to `max` UTF-16 code units. */
function text(min: number, max: number) {
  const message = `must be ${min} to ${max} characters long`;
  return z.string().min(min, message).max(max, message);
}

/** Strict padded standard base64 of `minBytes` to `maxBytes` bytes. */
function base64(minBytes: number, maxBytes: number) {
  const size = minBytes === maxBytes ? `${minBytes} bytes` : `${minBytes} to ${maxBytes} bytes`;
  return z
    .string()
    .refine(isBase64, { message: 'must be padded standard base64', abort: true })
    .refine(
      (value) => base64ByteLength(value) >= minBytes && base64ByteLength(value) <= maxBytes,
      `must encode ${size}`,
    );
}

/** A list of `min` to `max` entries. */
function list<T extends z.ZodType>(entry: T, min: number, max: number) {
  const message = `must have ${min} to ${max} entries`;
  return z.array(entry).min(min, message).max(max, message);
}

const positiveInteger = 'must be a positive integer';
const version = z.number({ error: positiveInteger }).int(positiveInteger).min(1, positiveInteger);

const isoTime = text(1, 40)
  .regex(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(?:\.\d{1,9})?Z$/, 'must be an ISO 8601 UTC time')
  .refine((value) => !Number.isNaN(Date.parse(value)), 'is not a valid date');

const originShape = 'must be an origin like https://example.com';
/** `scheme://host[:port]` exactly as the URL parser writes it (lower case, no slash). */
export const agentOriginSchema = text(1, 2048)
  .regex(/^https?:\/\/[^/?#\s]+$/, originShape)
  .refine((value) => URL.canParse(value) && new URL(value).origin === value, originShape);

/** Every message's id; only an error's may be null (it may answer an unreadable id). */
const MAX_ID_LENGTH = 128;
const id = text(1, MAX_ID_LENGTH);

// --- Messages ------------------------------------------------------------------------------

const AgentInfoSchema = z.object({
  /** Product name, e.g. "ESign Agent". */
  name: text(1, 100),
  /** The agent's version, e.g. "0.1.0". */
  version: text(1, 50),
  /** Operating system as Node names it: `linux`, `win32`, `darwin`. */
  platform: text(1, 50),
});

/** Opens the conversation with the versions the page speaks. */
const HelloRequestSchema = z.object({
  id,
  type: z.literal('hello'),
  versions: list(version, 1, 32),
});

/** The version the agent chose for this connection (the highest in common). */
const HelloOkSchema = z.object({
  id,
  type: z.literal('hello.ok'),
  version,
  agent: AgentInfoSchema,
});

const CertificatesListRequestSchema = z.object({ id, type: z.literal('certificates.list') });

/** One certificate with a private key on a token. */
const TokenCertificateSchema = z.object({
  /** The agent's id for this certificate and key; `sign` names it. Opaque to the page. */
  certificateId: text(1, 256),
  /** The certificate, base64 DER. */
  certificate: base64(1, MAX_CERTIFICATE_BYTES),
  /** Subject distinguished name (RFC 4514 string). */
  subject: text(0, 4096),
  /** Issuer distinguished name (RFC 4514 string). */
  issuer: text(0, 4096),
  /** Serial number, hex. */
  serialNumber: text(1, 128).regex(/^[0-9A-Fa-f]+$/, 'must be hexadecimal'),
  /** Start of validity, ISO 8601 UTC. */
  notBefore: isoTime,
  /** End of validity, ISO 8601 UTC. */
  notAfter: isoTime,
  /** The PKCS#11 token label. */
  tokenLabel: text(0, 64),
  /** The token's serial number (with the label, what identifies a token: slot ids change). */
  tokenSerial: text(0, 64).optional(),
  /** The key type, which decides the signature mechanism. */
  keyAlgorithm: z.enum(['rsa', 'ec']).optional(),
  /** The PKCS#11 CKA_ID shared by certificate and key, hex (may be empty). */
  keyId: text(0, 256).regex(/^(?:[0-9A-Fa-f]{2})*$/, 'must be hexadecimal bytes'),
});

const CertificatesListResultSchema = z.object({
  id,
  type: z.literal('certificates.list.result'),
  certificates: list(TokenCertificateSchema, 0, 256),
});

/**
 * Who asks for the signature, as the page states it; shown to the user. The agent compares
 * `origin` with the WebSocket handshake's Origin header and trusts only the latter.
 */
const SignRequesterSchema = z.object({
  /** The page's origin, `scheme://host[:port]`. */
  origin: agentOriginSchema,
  /** The service's display name, e.g. "ESign". */
  serviceName: text(1, 200),
  /** The signing session the digest belongs to, shown for support. */
  sessionId: text(1, 200).optional(),
});

/** Sign a prepared PDF revision: the agent builds the CMS signed attributes over the digest. */
const SignRequestSchema = z.object({
  id,
  type: z.literal('sign'),
  /** SHA-256 of the PDF byte range, base64 (32 bytes). */
  documentDigest: base64(32, 32),
  certificateId: text(1, 256),
  documentTitle: text(1, 1000),
  requester: SignRequesterSchema,
  /**
   * The timestamp authority named by the server's initiate answer; the agent's own setting
   * when absent. Never carries credentials (a URL with user or password is refused).
   */
  tsaUrl: text(1, 2048)
    .refine((value) => URL.canParse(value), 'must be a URL')
    .refine((value) => /^https?:$/.test(new URL(value).protocol), 'must be http or https')
    .refine((value) => {
      const url = new URL(value);
      return url.username === '' && url.password === '';
    }, 'must not carry credentials')
    .optional(),
  /** The server's signing ticket for this request, checked by the agent when it is required. */
  ticket: text(1, 8192).optional(),
});

const SignResultSchema = z.object({
  id,
  type: z.literal('sign.result'),
  /** The signature value over the DER signed attributes, base64. */
  signedHash: base64(1, 1024),
  /** Base64 DER certificates, the signer's first. */
  certificateChain: list(base64(1, MAX_CERTIFICATE_BYTES), 1, 10),
  /** RFC 3161 TimeStampToken over SHA-256 of the signature value, base64 DER. */
  timestampToken: base64(1, 64 * 1024),
});

const AgentErrorSchema = z.object({
  /** The request's id, or null when the request had none that could be read. */
  id: id.nullable(),
  type: z.literal('error'),
  code: z.enum(AGENT_ERROR_CODES, { error: `must be one of ${AGENT_ERROR_CODES.join(', ')}` }),
  /** For people and logs; pages decide on `code`. */
  message: text(0, 2000),
  /** With `UNSUPPORTED_VERSION`: the versions the agent speaks. */
  supportedVersions: list(version, 1, 32).optional(),
  /** What a page may show as is: `AGENT_ERROR_MESSAGES[code]`. */
  userMessage: z.object({ vi: text(1, 500), en: text(1, 500) }).optional(),
  /**
   * With `PIN_INCORRECT` (and `PIN_LOCKED`, `PIN_TRIES_LOW`): what the token says of the tries left, from
   * CKF_USER_PIN_COUNT_LOW and CKF_USER_PIN_FINAL_TRY. Tokens do not report a number.
   */
  pin: z.object({ countLow: z.boolean(), finalTry: z.boolean() }).optional(),
});

/** One token plugged in now, as `tokens.changed` lists it. */
const TokenSummarySchema = z.object({
  label: text(0, 64),
  serialNumber: text(0, 64),
  manufacturer: text(0, 64),
  model: text(0, 64),
  /** The label of the PKCS#11 module (settings) that drives it, e.g. "VNPT-CA". */
  module: text(1, 200),
});

/** Pushed when a token is plugged in or removed: every token present now. */
const TokensChangedSchema = z.object({
  id,
  type: z.literal('tokens.changed'),
  tokens: list(TokenSummarySchema, 0, 256),
});

/** The answer to `GET /` on the agent's port (not a WebSocket message). */
export interface AgentDiscovery {
  name: string;
  version: string;
  /** Protocol versions the agent speaks. */
  protocolVersions: readonly number[];
  /** The port that answered, for the page's `ws://127.0.0.1:<port>`. */
  port: number;
}

const messageSchemas = [
  HelloRequestSchema,
  HelloOkSchema,
  CertificatesListRequestSchema,
  CertificatesListResultSchema,
  SignRequestSchema,
  SignResultSchema,
  AgentErrorSchema,
  TokensChangedSchema,
] as const;

/** Every message of the protocol, told apart by `type`. */
export const AgentMessageSchema = z.discriminatedUnion('type', messageSchemas, {
  error: `must be one of ${messageSchemas.map((schema) => schema.shape.type.value).join(', ')}`,
});

export type AgentInfo = z.infer<typeof AgentInfoSchema>;
export type HelloRequest = z.infer<typeof HelloRequestSchema>;
export type HelloOk = z.infer<typeof HelloOkSchema>;
export type CertificatesListRequest = z.infer<typeof CertificatesListRequestSchema>;
export type TokenCertificate = z.infer<typeof TokenCertificateSchema>;
export type CertificatesListResult = z.infer<typeof CertificatesListResultSchema>;
export type SignRequester = z.infer<typeof SignRequesterSchema>;
export type SignRequest = z.infer<typeof SignRequestSchema>;
export type SignResult = z.infer<typeof SignResultSchema>;
export type AgentError = z.infer<typeof AgentErrorSchema>;
export type TokenSummary = z.infer<typeof TokenSummarySchema>;
export type TokensChanged = z.infer<typeof TokensChangedSchema>;

export type AgentRequest = HelloRequest | CertificatesListRequest | SignRequest;
export type AgentResponse = HelloOk | CertificatesListResult | SignResult | AgentError;
/** What the agent sends: answers, and pushes of its own. */
export type AgentOutgoing = AgentResponse | TokensChanged;
export type AgentMessage = z.infer<typeof AgentMessageSchema>;
export type AgentMessageType = AgentMessage['type'];

export type AgentMessageParse =
  | { ok: true; message: AgentMessage }
  /** `id` is the message's id when it could be read, so that the error reply can carry it. */
  | { ok: false; id: string | null; reason: string };

const REQUEST_TYPES: ReadonlySet<AgentMessageType> = new Set([
  'hello',
  'certificates.list',
  'sign',
]);

export function isAgentRequest(message: AgentMessage): message is AgentRequest {
  return REQUEST_TYPES.has(message.type);
}

/** The highest version both sides speak, or null when there is none. */
export function negotiateAgentProtocolVersion(offered: readonly number[]): number | null {
  const common = SUPPORTED_AGENT_PROTOCOL_VERSIONS.filter((version) => offered.includes(version));
  return common.length > 0 ? Math.max(...common) : null;
}

/**
 * Reads one message from its JSON text and checks its whole shape. Unknown fields are left
 * out of the result (a newer peer may send more); a missing or malformed field is refused
 * with a reason naming it.
 */
export function parseAgentMessage(json: string): AgentMessageParse {
  if (json.length > AGENT_MAX_MESSAGE_LENGTH) {
    return { ok: false, id: null, reason: `message is longer than ${AGENT_MAX_MESSAGE_LENGTH}` };
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(json);
  } catch {
    return { ok: false, id: null, reason: 'message is not valid JSON' };
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) {
    return { ok: false, id: null, reason: 'message must be a JSON object' };
  }
  const result = AgentMessageSchema.safeParse(parsed, { error: plainIssues });
  if (result.success) return { ok: true, message: result.data };
  const readId = id.safeParse(Object.hasOwn(parsed, 'id') ? (parsed as { id: unknown }).id : null);
  return { ok: false, id: readId.success ? readId.data : null, reason: firstIssue(result.error) };
}
