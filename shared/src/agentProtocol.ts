/**
 * The desktop agent's WebSocket protocol (ws://127.0.0.1:<port>), shared by the agent and the
 * signing pages. Every message is one JSON object with an `id` and a `type`; a reply carries the
 * `id` of the request it answers. The first request on a connection is `hello`, which fixes the
 * protocol version for the connection.
 *
 * page → agent: `hello`, `certificates.list`, `sign`
 * agent → page: `hello.ok`, `certificates.list.result`, `sign.result`, `error`
 */
import { base64ByteLength, isBase64 } from './base64';

/** The protocol version this code speaks. */
export const AGENT_PROTOCOL_VERSION = 1;
/** Every version this code can speak, oldest first. */
export const SUPPORTED_AGENT_PROTOCOL_VERSIONS: readonly number[] = [AGENT_PROTOCOL_VERSION];
/** The loopback port the agent listens on unless its settings say otherwise. */
export const AGENT_DEFAULT_PORT = 17891;
/** Longest message (in UTF-16 code units) either side accepts; a certificate list is the largest. */
export const AGENT_MAX_MESSAGE_LENGTH = 4 * 1024 * 1024;

/**
 * The closed set of error codes; a page switches on them to tell the user what happened.
 * Adding one is a protocol change: pages must treat an unknown code like `INTERNAL`.
 */
export const AGENT_ERROR_CODES = [
  /** The PIN typed in the agent's window was wrong (the token may allow more tries). */
  'WRONG_PIN',
  /** The token refuses the user PIN: too many wrong tries. */
  'PIN_LOCKED',
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
  /** Anything else; `message` says what. */
  'INTERNAL',
] as const;
export type AgentErrorCode = (typeof AGENT_ERROR_CODES)[number];

export interface AgentInfo {
  /** Product name, e.g. "ESign Agent". */
  name: string;
  /** The agent's version, e.g. "0.1.0". */
  version: string;
  /** Operating system as Node names it: `linux`, `win32`, `darwin`. */
  platform: string;
}

/** Opens the conversation with the versions the page speaks. */
export interface HelloRequest {
  id: string;
  type: 'hello';
  versions: number[];
}

/** The version the agent chose for this connection (the highest in common). */
export interface HelloOk {
  id: string;
  type: 'hello.ok';
  version: number;
  agent: AgentInfo;
}

export interface CertificatesListRequest {
  id: string;
  type: 'certificates.list';
}

/** One certificate with a private key on a token. */
export interface TokenCertificate {
  /** The agent's id for this certificate and key; `sign` names it. Opaque to the page. */
  certificateId: string;
  /** The certificate, base64 DER. */
  certificate: string;
  /** Subject distinguished name (RFC 4514 string). */
  subject: string;
  /** Issuer distinguished name (RFC 4514 string). */
  issuer: string;
  /** Serial number, hex. */
  serialNumber: string;
  /** Start of validity, ISO 8601 UTC. */
  notBefore: string;
  /** End of validity, ISO 8601 UTC. */
  notAfter: string;
  /** The PKCS#11 token label. */
  tokenLabel: string;
  /** The PKCS#11 CKA_ID shared by certificate and key, hex (may be empty). */
  keyId: string;
}

export interface CertificatesListResult {
  id: string;
  type: 'certificates.list.result';
  certificates: TokenCertificate[];
}

/**
 * Who asks for the signature, as the page states it; shown to the user. The agent compares
 * `origin` with the WebSocket handshake's Origin header and trusts only the latter.
 */
export interface SignRequester {
  /** The page's origin, `scheme://host[:port]`. */
  origin: string;
  /** The service's display name, e.g. "ESign". */
  serviceName: string;
  /** The signing session the digest belongs to, shown for support. */
  sessionId?: string;
}

/** Sign a prepared PDF revision: the agent builds the CMS signed attributes over the digest. */
export interface SignRequest {
  id: string;
  type: 'sign';
  /** SHA-256 of the PDF byte range, base64 (32 bytes). */
  documentDigest: string;
  certificateId: string;
  documentTitle: string;
  requester: SignRequester;
}

export interface SignResult {
  id: string;
  type: 'sign.result';
  /** The signature value over the DER signed attributes, base64. */
  signedHash: string;
  /** Base64 DER certificates, the signer's first. */
  certificateChain: string[];
  /** RFC 3161 TimeStampToken over SHA-256 of the signature value, base64 DER. */
  timestampToken: string;
}

export interface AgentError {
  /** The request's id, or null when the request had none that could be read. */
  id: string | null;
  type: 'error';
  code: AgentErrorCode;
  /** For people and logs; pages decide on `code`. */
  message: string;
  /** With `UNSUPPORTED_VERSION`: the versions the agent speaks. */
  supportedVersions?: number[];
}

export type AgentRequest = HelloRequest | CertificatesListRequest | SignRequest;
export type AgentResponse = HelloOk | CertificatesListResult | SignResult | AgentError;
export type AgentMessage = AgentRequest | AgentResponse;
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

// --- Parsing -------------------------------------------------------------------------------

const MAX_ID_LENGTH = 128;
const MAX_CERTIFICATE_BYTES = 48 * 1024;
const MAX_CHAIN_LENGTH = 10;
const MAX_CERTIFICATES = 256;
const HEX = /^[0-9A-Fa-f]+$/;
const HEX_BYTES = /^(?:[0-9A-Fa-f]{2})*$/;
const ISO_UTC = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(?:\.\d{1,9})?Z$/;

class Invalid extends Error {}

type JsonObject = Record<string, unknown>;

function object(value: unknown, path: string): JsonObject {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw new Invalid(`${path} must be an object`);
  }
  return value as JsonObject;
}

function field(source: JsonObject, key: string): unknown {
  return Object.hasOwn(source, key) ? source[key] : undefined;
}

interface TextRule {
  min?: number;
  max: number;
  pattern?: RegExp;
  /** What the pattern asks for, for the error message. */
  shape?: string;
}

function text(value: unknown, path: string, rule: TextRule): string {
  const min = rule.min ?? 1;
  if (typeof value !== 'string') throw new Invalid(`${path} must be a string`);
  if (value.length < min || value.length > rule.max) {
    throw new Invalid(`${path} must be ${min} to ${rule.max} characters long`);
  }
  if (rule.pattern && !rule.pattern.test(value)) {
    throw new Invalid(`${path} must be ${rule.shape ?? `like ${rule.pattern}`}`);
  }
  return value;
}

function list<T>(
  value: unknown,
  path: string,
  min: number,
  max: number,
  item: (entry: unknown, entryPath: string) => T,
): T[] {
  if (!Array.isArray(value)) throw new Invalid(`${path} must be an array`);
  if (value.length < min || value.length > max) {
    throw new Invalid(`${path} must have ${min} to ${max} entries`);
  }
  return value.map((entry, index) => item(entry, `${path}[${index}]`));
}

function version(value: unknown, path: string): number {
  if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < 1) {
    throw new Invalid(`${path} must be a positive integer`);
  }
  return value;
}

function base64(value: unknown, path: string, minBytes: number, maxBytes: number): string {
  if (typeof value !== 'string') throw new Invalid(`${path} must be a string`);
  if (!isBase64(value)) throw new Invalid(`${path} must be padded standard base64`);
  const bytes = base64ByteLength(value);
  if (bytes < minBytes || bytes > maxBytes) {
    throw new Invalid(
      minBytes === maxBytes
        ? `${path} must encode ${minBytes} bytes`
        : `${path} must encode ${minBytes} to ${maxBytes} bytes`,
    );
  }
  return value;
}

function isoTime(value: unknown, path: string): string {
  const time = text(value, path, { max: 40, pattern: ISO_UTC, shape: 'an ISO 8601 UTC time' });
  if (Number.isNaN(Date.parse(time))) throw new Invalid(`${path} is not a valid date`);
  return time;
}

function origin(value: unknown, path: string): string {
  const shape = 'an origin like https://example.com';
  const candidate = text(value, path, { max: 2048, pattern: /^https?:\/\/[^/?#\s]+$/, shape });
  if (!URL.canParse(candidate) || new URL(candidate).origin !== candidate) {
    throw new Invalid(`${path} must be ${shape}`);
  }
  return candidate;
}

function certificateEntry(value: unknown, path: string): TokenCertificate {
  const entry = object(value, path);
  return {
    certificateId: text(field(entry, 'certificateId'), `${path}.certificateId`, { max: 256 }),
    certificate: base64(
      field(entry, 'certificate'),
      `${path}.certificate`,
      1,
      MAX_CERTIFICATE_BYTES,
    ),
    subject: text(field(entry, 'subject'), `${path}.subject`, { min: 0, max: 4096 }),
    issuer: text(field(entry, 'issuer'), `${path}.issuer`, { min: 0, max: 4096 }),
    serialNumber: text(field(entry, 'serialNumber'), `${path}.serialNumber`, {
      max: 128,
      pattern: HEX,
      shape: 'hexadecimal',
    }),
    notBefore: isoTime(field(entry, 'notBefore'), `${path}.notBefore`),
    notAfter: isoTime(field(entry, 'notAfter'), `${path}.notAfter`),
    tokenLabel: text(field(entry, 'tokenLabel'), `${path}.tokenLabel`, { min: 0, max: 64 }),
    keyId: text(field(entry, 'keyId'), `${path}.keyId`, {
      min: 0,
      max: 256,
      pattern: HEX_BYTES,
      shape: 'hexadecimal bytes',
    }),
  };
}

function requester(value: unknown, path: string): SignRequester {
  const source = object(value, path);
  const result: SignRequester = {
    origin: origin(field(source, 'origin'), `${path}.origin`),
    serviceName: text(field(source, 'serviceName'), `${path}.serviceName`, { max: 200 }),
  };
  const sessionId = field(source, 'sessionId');
  if (sessionId !== undefined) {
    result.sessionId = text(sessionId, `${path}.sessionId`, { max: 200 });
  }
  return result;
}

const decoders: {
  [K in AgentMessageType]: (
    source: JsonObject,
  ) => Omit<Extract<AgentMessage, { type: K }>, 'id' | 'type'>;
} = {
  hello: (source) => ({
    versions: list(field(source, 'versions'), 'versions', 1, 32, version),
  }),
  'hello.ok': (source) => {
    const agent = object(field(source, 'agent'), 'agent');
    return {
      version: version(field(source, 'version'), 'version'),
      agent: {
        name: text(field(agent, 'name'), 'agent.name', { max: 100 }),
        version: text(field(agent, 'version'), 'agent.version', { max: 50 }),
        platform: text(field(agent, 'platform'), 'agent.platform', { max: 50 }),
      },
    };
  },
  'certificates.list': () => ({}),
  'certificates.list.result': (source) => ({
    certificates: list(
      field(source, 'certificates'),
      'certificates',
      0,
      MAX_CERTIFICATES,
      certificateEntry,
    ),
  }),
  sign: (source) => ({
    documentDigest: base64(field(source, 'documentDigest'), 'documentDigest', 32, 32),
    certificateId: text(field(source, 'certificateId'), 'certificateId', { max: 256 }),
    documentTitle: text(field(source, 'documentTitle'), 'documentTitle', { max: 1000 }),
    requester: requester(field(source, 'requester'), 'requester'),
  }),
  'sign.result': (source) => ({
    signedHash: base64(field(source, 'signedHash'), 'signedHash', 1, 1024),
    certificateChain: list(
      field(source, 'certificateChain'),
      'certificateChain',
      1,
      MAX_CHAIN_LENGTH,
      (entry, path) => base64(entry, path, 1, MAX_CERTIFICATE_BYTES),
    ),
    timestampToken: base64(field(source, 'timestampToken'), 'timestampToken', 1, 64 * 1024),
  }),
  error: (source) => {
    const code = field(source, 'code');
    if (typeof code !== 'string' || !(AGENT_ERROR_CODES as readonly string[]).includes(code)) {
      throw new Invalid(`code must be one of ${AGENT_ERROR_CODES.join(', ')}`);
    }
    const result: Omit<AgentError, 'id' | 'type'> = {
      code: code as AgentErrorCode,
      message: text(field(source, 'message'), 'message', { min: 0, max: 2000 }),
    };
    const supported = field(source, 'supportedVersions');
    if (supported !== undefined) {
      result.supportedVersions = list(supported, 'supportedVersions', 1, 32, version);
    }
    return result;
  },
};

function isMessageType(value: unknown): value is AgentMessageType {
  return typeof value === 'string' && Object.hasOwn(decoders, value);
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
  const source = parsed as JsonObject;
  const type = field(source, 'type');
  const rawId = field(source, 'id');
  let id: string | null = null;
  try {
    // Only an error may lack an id: it may answer a message whose id could not be read.
    if (!(type === 'error' && rawId === null)) id = text(rawId, 'id', { max: MAX_ID_LENGTH });
    if (!isMessageType(type)) {
      throw new Invalid(`type must be one of ${Object.keys(decoders).join(', ')}`);
    }
    const decode = decoders[type] as (source: JsonObject) => object;
    return { ok: true, message: { id, type, ...decode(source) } as AgentMessage };
  } catch (error) {
    if (!(error instanceof Invalid)) throw error;
    return { ok: false, id, reason: error.message };
  }
}
