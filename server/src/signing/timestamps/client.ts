import { CodedError } from '@esign/shared';
import {
  derUnsignedMagnitude,
  readTimestampResponse,
  type TimestampResponse,
  TimestampTokenError,
  timestampNonce,
  timestampRequest,
} from '@esign/shared/cms';
import type { AppDeps } from '../../context';
import { outboundCodes, type Resolver, safeHttpsRequest } from '../../outbound/safeFetch';
import type { Config } from '../../platform/config';
import { trustAnchorsFor } from '../trust/service';
import { developmentTsa } from './developmentTsa';
import { type TimestampFailedReason, TimestampInvalid, timestampFailed } from './errors';
import { timestampResponse } from './responder';
import { type VerifiedTimestamp, verifyTimestampToken } from './verifyToken';

/** The development TSA (no TSA_URL outside production) signs with the master-secret-sealed key. */
export type TimestampClientDeps = Pick<AppDeps, 'db' | 'config' | 'clock' | 'secrets'>;

export interface RequestTimestampOptions {
  /** DER anchors the TSA must chain to; default: `timestampTrustAnchors(deps, tenantId)`. */
  trustAnchors?: readonly Buffer[];
  /** The tenant whose anchors apply (with the global ones); default: global only. */
  tenantId?: number | null;
  /** Deadline for the whole exchange. Default 10 000 ms. */
  timeoutMs?: number;
  /** How far genTime may stray from our clock around the exchange. Default 60 000 ms. */
  clockSkewMs?: number;
  /** Tests only: how host names resolve (see safeFetch). */
  resolver?: Resolver;
}

export interface Timestamp extends VerifiedTimestamp {
  /** DER TimeStampToken (a CMS ContentInfo), exactly as the TSA sent it. */
  token: Buffer;
}

/** A TSA answer is a token and its status: a few KB; more is not a TSA. */
const maxResponseBytes = 256 * 1024;
const replyTypes = ['application/timestamp-reply', 'application/timestamp-response'];

/**
 * The anchors a TSA certificate may chain to for a tenant: the global and tenant trust anchors,
 * plus in development and sandbox the development TSA's CA.
 */
export async function timestampTrustAnchors(
  deps: TimestampClientDeps,
  tenantId: number | null,
): Promise<Buffer[]> {
  const anchors = (await trustAnchorsFor(deps.db, tenantId)).map((anchor) => anchor.certificate);
  if (deps.config.environment !== 'production') {
    anchors.push((await developmentTsa(deps)).caCertificate);
  }
  return anchors;
}

/** POSTs the request to TSA_URL through the SSRF-safe client; the DER reply. */
async function exchange(
  config: Config,
  requestDer: Buffer,
  options: RequestTimestampOptions,
): Promise<Buffer> {
  const url = config.tsa.url!;
  const timeoutMs = options.timeoutMs ?? 10_000;
  const { username, password } = config.tsa;
  let response: Awaited<ReturnType<typeof safeHttpsRequest>>;
  try {
    response = await safeHttpsRequest(url, {
      method: 'POST',
      headers: { 'Content-Type': 'application/timestamp-query' },
      body: requestDer,
      allowlist: config.outboundAllowlist,
      // Many TSAs answer over plain http; the token is signed and verified before it is used.
      allowPlainHttp: true,
      timeoutMs,
      maxResponseBytes,
      ...(options.resolver ? { resolver: options.resolver } : {}),
      ...(username !== undefined
        ? {
            authorization: `Basic ${Buffer.from(`${username}:${password ?? ''}`).toString('base64')}`,
          }
        : {}),
    });
  } catch (error) {
    if (!(error instanceof CodedError)) throw error;
    const reason: TimestampFailedReason =
      error.code === outboundCodes.timeout ? 'TSA_TIMEOUT' : 'TSA_UNREACHABLE';
    throw timestampFailed(reason, `${url}: ${error.message}`);
  }
  if (response.status !== 200) {
    response.discard();
    throw timestampFailed('TSA_HTTP_STATUS', `${url} answered HTTP ${response.status}`);
  }
  const contentType = (response.headers['content-type'] ?? '').split(';')[0]!.trim().toLowerCase();
  if (!replyTypes.includes(contentType)) {
    response.discard();
    throw timestampFailed(
      'TSA_CONTENT_TYPE',
      `${url} answered ${contentType || 'no content type'}`,
    );
  }
  try {
    return await response.readAll();
  } catch (error) {
    if (!(error instanceof CodedError)) throw error;
    const reason = error.code === outboundCodes.timeout ? 'TSA_TIMEOUT' : 'TSA_UNREACHABLE';
    throw timestampFailed(reason, `${url}: ${error.message}`);
  }
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
 * Gets an RFC 3161 timestamp over `imprint` (SHA-256, 32 bytes) from TSA_URL, or in development
 * and sandbox without TSA_URL from the server's own development TSA, and verifies it: status
 * granted, our nonce, our imprint, the TSA's signature, certificate and chain, genTime around
 * our clock. Any failure is 502 TIMESTAMP_FAILED (with `details.code` saying which): a signature
 * never falls back to a local clock time.
 */
export async function requestTimestamp(
  deps: TimestampClientDeps,
  imprint: Buffer,
  options: RequestTimestampOptions = {},
): Promise<Timestamp> {
  if (imprint.length !== 32)
    throw new TypeError('requestTimestamp: the imprint is a SHA-256 digest');
  const nonce = timestampNonce();
  const requestDer = timestampRequest(imprint, nonce);
  const trustAnchors =
    options.trustAnchors ?? (await timestampTrustAnchors(deps, options.tenantId ?? null));
  const notBefore = deps.clock.now();
  let reply: Buffer;
  if (deps.config.tsa.url === undefined) {
    // Development and sandbox only: config refuses production without TSA_URL.
    const tsaSigner = await developmentTsa(deps);
    reply = await timestampResponse({ clock: deps.clock, tsaSigner }, requestDer);
  } else {
    reply = await exchange(deps.config, requestDer, options);
  }
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
