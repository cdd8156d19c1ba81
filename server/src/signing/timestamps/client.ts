import {
  derUnsignedMagnitude,
  readTimestampResponse,
  type TimestampResponse,
  TimestampTokenError,
  timestampNonce,
  timestampRequest,
} from '@esign/shared/cms';
import type { Clock, Fetcher } from '../fetcher';
import type { TimestampAuthority } from '../trustPolicy';
import { type TimestampFailedReason, TimestampInvalid, timestampFailed } from './errors';
import { type VerifiedTimestamp, verifyTimestampToken } from './verifyToken';

/** What asking for a timestamp needs: the authority that answers and the clock judging genTime. */
export interface TimestampClientDeps {
  clock: Clock;
  timestamps: TimestampAuthority;
}

export interface RequestTimestampOptions {
  /** DER anchors the TSA must chain to (the trust policy's `timestampAnchors`). */
  trustAnchors: readonly Buffer[];
  /** How far genTime may stray from our clock around the exchange. Default 60 000 ms. */
  clockSkewMs?: number;
}

/** Where a TSA is reached over HTTP(S), and through which fetcher. */
export interface HttpTimestampAuthorityOptions {
  url: string;
  username?: string | undefined;
  password?: string | undefined;
  /** Carries the request (the server's: its SSRF-safe outbound client). */
  fetcher: Fetcher;
  /** Deadline for the whole exchange. Default 10 000 ms. */
  timeoutMs?: number;
}

/** A TSA reached by POSTing the request to its URL (RFC 3161 section 3.4). */
export function httpTimestampAuthority(options: HttpTimestampAuthorityOptions): TimestampAuthority {
  return { exchange: (request) => exchange(options, request) };
}

export interface Timestamp extends VerifiedTimestamp {
  /** DER TimeStampToken (a CMS ContentInfo), exactly as the TSA sent it. */
  token: Buffer;
}

/** A TSA answer is a token and its status: a few KB; more is not a TSA. */
const maxResponseBytes = 256 * 1024;
const replyTypes = ['application/timestamp-reply', 'application/timestamp-response'];

/** POSTs the request to the TSA's URL through the fetcher; the DER reply. */
async function exchange(
  options: HttpTimestampAuthorityOptions,
  requestDer: Buffer,
): Promise<Buffer> {
  const { url, username, password } = options;
  const fetched = await options.fetcher.fetch({
    url,
    method: 'POST',
    headers: { 'Content-Type': 'application/timestamp-query' },
    body: requestDer,
    // Many TSAs answer over plain http; the token is signed and verified before it is used.
    timeoutMs: options.timeoutMs ?? 10_000,
    maxResponseBytes,
    ...(username !== undefined
      ? {
          authorization: `Basic ${Buffer.from(`${username}:${password ?? ''}`).toString('base64')}`,
        }
      : {}),
  });
  if (fetched.kind === 'failed') {
    const reason: TimestampFailedReason = fetched.timeout ? 'TSA_TIMEOUT' : 'TSA_UNREACHABLE';
    throw timestampFailed(reason, `${url}: ${fetched.message}`);
  }
  if (fetched.kind === 'status') {
    throw timestampFailed('TSA_HTTP_STATUS', `${url} answered HTTP ${fetched.status}`);
  }
  const contentType = fetched.contentType.split(';')[0]!.trim().toLowerCase();
  if (!replyTypes.includes(contentType)) {
    throw timestampFailed(
      'TSA_CONTENT_TYPE',
      `${url} answered ${contentType || 'no content type'}`,
    );
  }
  return fetched.body;
}

/** The token of a granted TimeStampResp, as the TSA encoded it. */
function grantedToken(reply: Buffer): Buffer {
  let response: TimestampResponse;
  try {
    response = readTimestampResponse(reply);
  } catch (error) {
    if (!(error instanceof TimestampTokenError)) throw error;
    throw timestampFailed('TSA_RESPONSE_MALFORMED', `the reply is ${error.message}`);
  }
  if (!response.granted) {
    const text = response.statusText.join('; ');
    const failure = response.failInfo.join(', ');
    throw timestampFailed(
      'TSA_REJECTED',
      `status ${response.statusName}${failure ? ` (${failure})` : ''}${text ? `: ${text}` : ''}`,
    );
  }
  if (response.token === undefined)
    throw timestampFailed('TSA_RESPONSE_MALFORMED', 'granted without a token');
  // A copy: the token outlives the reply.
  return Buffer.from(response.token);
}

/**
 * Gets an RFC 3161 timestamp over `imprint` (SHA-256, 32 bytes) from the timestamp authority
 * (`deps.timestamps`), and verifies it: status
 * granted, our nonce, our imprint, the TSA's signature, certificate and chain, genTime around
 * our clock. Any failure is 502 TIMESTAMP_FAILED (with `details.code` saying which): a signature
 * never falls back to a local clock time.
 */
export async function requestTimestamp(
  deps: TimestampClientDeps,
  imprint: Buffer,
  options: RequestTimestampOptions,
): Promise<Timestamp> {
  if (imprint.length !== 32)
    throw new TypeError('requestTimestamp: the imprint is a SHA-256 digest');
  const nonce = timestampNonce();
  const requestDer = timestampRequest(imprint, nonce);
  const { trustAnchors } = options;
  const notBefore = deps.clock.now();
  const reply = await deps.timestamps.exchange(requestDer);
  const notAfter = deps.clock.now();
  const token = grantedToken(reply);
  let verified: VerifiedTimestamp;
  try {
    verified = verifyTimestampToken(token, {
      imprint,
      trustAnchors,
      notBefore,
      notAfter,
      clockSkewMs: options.clockSkewMs ?? 60_000,
    });
  } catch (error) {
    if (error instanceof TimestampInvalid) throw timestampFailed(error.reason, error.message);
    throw error;
  }
  if (verified.nonce === undefined || !verified.nonce.equals(derUnsignedMagnitude(nonce))) {
    throw timestampFailed(
      'NONCE_MISMATCH',
      'the token does not carry the nonce we sent (a replay?)',
    );
  }
  return { ...verified, token };
}
