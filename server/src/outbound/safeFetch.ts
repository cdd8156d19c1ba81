import dns from 'node:dns';
import http, { type ClientRequest, type IncomingHttpHeaders } from 'node:http';
import https from 'node:https';
import net, { type LookupFunction } from 'node:net';
import { type Readable, Transform } from 'node:stream';
import { DomainError } from '../errors/domainError';
import { type Allowlist, emptyAllowlist, mayConnect, normalizeHost } from './addressPolicy';

/**
 * An HTTPS client for URLs chosen by partners (`fileUrl`, webhook endpoints) that cannot be
 * turned against the server's own network:
 * - HTTPS only, no credentials in the URL, no proxy, no redirect following;
 * - every address a host name resolves to is checked at connect time, inside the socket's own
 *   DNS lookup, and the socket connects to exactly the checked addresses (no second resolution
 *   an attacker's DNS could answer differently); IP literals are checked before any socket;
 * - one deadline covers DNS, connect, TLS, headers and body; the body is capped while it streams;
 * - connections are one-shot unless the caller passes an `OutboundPool` (keep-alive, see there).
 * Trust is Node's default CA store plus NODE_EXTRA_CA_CERTS.
 *
 * `allowPlainHttp` lets one kind of caller use `http:` too: fetches of OCSP answers and CRLs,
 * which are published over plain HTTP (RFC 5280 §4.2.1.13, RFC 6960 A.1) and carry their own
 * signature. Everything else (address policy, deadline, cap, no redirects) is the same.
 */

/** Codes of the errors thrown here (OutboundFailure); callers such as downloadPdf translate them. */
export const outboundCodes = {
  invalidUrl: 'OUTBOUND_URL_INVALID',
  forbiddenAddress: 'OUTBOUND_ADDRESS_FORBIDDEN',
  timeout: 'OUTBOUND_TIMEOUT',
  unreachable: 'OUTBOUND_UNREACHABLE',
  tls: 'OUTBOUND_TLS',
  tooLarge: 'OUTBOUND_RESPONSE_TOO_LARGE',
} as const;

export type OutboundProblem = keyof typeof outboundCodes;

/** A fetch that failed for one of the reasons callers tell apart (`problem`). */
export class OutboundFailure extends DomainError {
  readonly problem: OutboundProblem;

  constructor(problem: OutboundProblem, message: string) {
    super(outboundCodes[problem], message);
    this.problem = problem;
  }
}

export interface ResolvedAddress {
  address: string;
  family: 4 | 6;
}

/** Host name to addresses; injectable so tests can make a name resolve to anything. */
export type Resolver = (hostname: string) => Promise<ResolvedAddress[]>;

export const systemResolver: Resolver = async (hostname) => {
  const found = await dns.promises.lookup(hostname, { all: true, verbatim: true });
  return found.map(({ address, family }) => ({ address, family: family === 6 ? 6 : 4 }));
};

export interface SafeRequestOptions {
  method?: 'GET' | 'POST';
  headers?: Record<string, string>;
  body?: Uint8Array;
  allowlist?: Allowlist;
  /** Overall deadline from the call to the last body byte. */
  timeoutMs: number;
  /** The response body may not exceed this many bytes. */
  maxResponseBytes: number;
  resolver?: Resolver;
  /**
   * Reuse connections from this pool instead of a one-shot connection. The pool is bound to one
   * allowlist and resolver; `allowlist` and `resolver` here must be those same objects.
   */
  pool?: OutboundPool;
  /**
   * An `Authorization` value for an operator-configured endpoint (an SMS gateway). Never for
   * URLs that come from partners; safe because redirects are never followed, so it can only
   * reach the host of this URL.
   */
  authorization?: string;
  /**
   * Also accept `http:` URLs. Only for answers that are signed themselves (OCSP, CRL); never
   * for partner URLs. Not with a `pool` (pools are HTTPS).
   */
  allowPlainHttp?: boolean;
}

export interface SafeResponse {
  status: number;
  headers: IncomingHttpHeaders;
  /** The body as it arrives; it fails with an DomainError at the cap or the deadline. */
  body: Readable;
  /** The whole body in memory (bounded by maxResponseBytes); for small answers only. */
  readAll(): Promise<Buffer>;
  /** Closes the connection without reading (or without reading the rest of) the body. */
  discard(): void;
}

const forbiddenHeaders = new Set(['authorization', 'proxy-authorization', 'cookie', 'host']);

export function invalidUrl(message: string): OutboundFailure {
  return new OutboundFailure('invalidUrl', message);
}

function forbiddenAddress(): OutboundFailure {
  return new OutboundFailure(
    'forbiddenAddress',
    'The URL points to an address the server may not connect to (internal, reserved or special-purpose range)',
  );
}

function timeout(ms: number): OutboundFailure {
  return new OutboundFailure('timeout', `No complete answer within ${ms} ms`);
}

function tooLarge(limit: number): OutboundFailure {
  return new OutboundFailure('tooLarge', `The response body exceeds ${limit} bytes`);
}

function unreachable(detail: string): OutboundFailure {
  return new OutboundFailure('unreachable', `Could not fetch the URL: ${detail}`);
}

/** Where the connection was when it failed; a failure during the handshake is a TLS failure. */
type Phase = 'connecting' | 'handshake' | 'connected';

function describeFailure(error: unknown, phase: Phase): DomainError {
  if (error instanceof DomainError) return error;
  const code = (error as NodeJS.ErrnoException).code ?? 'ERROR';
  const message = error instanceof Error ? error.message : String(error);
  if (phase === 'handshake') {
    return new OutboundFailure('tls', `TLS handshake failed: ${message} (${code})`);
  }
  if (code === 'ENOTFOUND' || code === 'EAI_AGAIN' || code === 'ENODATA') {
    return unreachable(`the host name does not resolve (${code})`);
  }
  return unreachable(`${message} (${code})`);
}

/** A checked URL: where to connect, and whether its host is an IP literal (judged already). */
interface Target {
  url: URL;
  host: string;
  isIp: boolean;
}

/** Parses and checks the URL; an IP literal host is judged here, before any socket exists. */
function target(rawUrl: string, allowlist: Allowlist, allowPlainHttp: boolean): Target {
  let url: URL;
  try {
    url = new URL(rawUrl);
  } catch {
    throw invalidUrl('The URL is not a valid absolute URL');
  }
  if (url.protocol === 'http:' && !allowPlainHttp) throw invalidUrl('The URL must use https');
  if (url.protocol !== 'https:' && url.protocol !== 'http:') {
    throw invalidUrl(allowPlainHttp ? 'The URL must use http or https' : 'The URL must use https');
  }
  if (url.username !== '' || url.password !== '') {
    throw invalidUrl('The URL may not carry credentials');
  }
  const host = normalizeHost(url.hostname);
  if (host === '') throw invalidUrl('The URL has no host');
  const isIp = net.isIP(host) !== 0;
  if (isIp && !mayConnect(host, null, allowlist)) throw forbiddenAddress();
  return { url, host, isIp };
}

/**
 * The socket's DNS lookup: resolve once, refuse if ANY address is refused, hand back all. The
 * name looked up is the URL's host (Node looks up exactly the `host` of the request).
 */
function checkedLookup(allowlist: Allowlist, resolver: Resolver): LookupFunction {
  return (hostname, options, callback) => {
    const host = normalizeHost(hostname);
    resolver(hostname)
      .then((found) => {
        const addresses = found.filter((a) => !options.family || a.family === options.family);
        const first = addresses[0];
        if (first === undefined) throw unreachable('the host name has no address');
        if (addresses.some((a) => !mayConnect(a.address, host, allowlist))) {
          throw forbiddenAddress();
        }
        if (options.all) callback(null, addresses);
        else callback(null, first.address, first.family);
      })
      .catch((error: unknown) => callback(describeFailure(error, 'connecting'), ''));
  };
}

export interface OutboundPoolOptions {
  allowlist?: Allowlist;
  resolver?: Resolver;
  /** An idle pooled connection is closed after this long. Default 4 000 ms. */
  idleMs?: number;
}

/**
 * Keep-alive connections for one (allowlist, resolver), for a caller that sends many requests
 * (the webhook worker). The SSRF guarantees are those of one-shot connections:
 * - every socket the pool opens goes through the checked lookup, set on the agent itself (agent
 *   options override request options, so no request can open a socket around it); IP literals
 *   are checked per request before the agent is asked for a socket;
 * - a pooled socket is only handed to a request for the same host, port and TLS options (Node's
 *   agent keys free sockets by them), and it was checked for that host when it was opened;
 * - a socket goes back to the pool only after its response was read to the end; a request
 *   destroyed by the deadline, the cap or `discard()` destroys its socket.
 * TLS sessions are not cached (each new socket does a full, fully verified handshake).
 */
export class OutboundPool {
  readonly allowlist: Allowlist;
  readonly resolver: Resolver;
  /** @internal used by safeHttpsRequest only */
  readonly agent: https.Agent;
  #closed = false;

  constructor(options: OutboundPoolOptions = {}) {
    this.allowlist = options.allowlist ?? emptyAllowlist;
    this.resolver = options.resolver ?? systemResolver;
    this.agent = new https.Agent({
      keepAlive: true,
      maxCachedSessions: 0,
      // The idle timeout of free sockets (the agent destroys a free socket that times out);
      // below the usual 5 s of servers, so we rarely write to a socket the peer is closing.
      timeout: options.idleMs ?? 4_000,
      lookup: checkedLookup(this.allowlist, this.resolver),
    });
  }

  get closed(): boolean {
    return this.#closed;
  }

  /**
   * The checked target of an https URL, remembered per URL text: the same text always parses
   * and judges the same against this pool's fixed allowlist (a refusal is not remembered, and a
   * host name is still judged at each new socket's lookup). Bounded; emptied when full.
   */
  target(rawUrl: string): Target {
    let checked = this.#targets.get(rawUrl);
    if (checked === undefined) {
      checked = target(rawUrl, this.allowlist, false);
      if (this.#targets.size >= 1_000) this.#targets.clear();
      this.#targets.set(rawUrl, checked);
    }
    return checked;
  }
  readonly #targets = new Map<string, Target>();

  /** Closes every connection, idle or in use; later requests through the pool are refused. */
  close(): void {
    this.#closed = true;
    this.agent.destroy();
  }
}

function byteCap(limit: number): Transform {
  let seen = 0;
  return new Transform({
    transform(chunk: Buffer, _encoding, done) {
      seen += chunk.length;
      if (seen > limit) done(tooLarge(limit));
      else done(null, chunk);
    },
  });
}

/**
 * Sends one request and resolves with the status and headers; 3xx answers are returned as
 * they are, never followed. Rejects with an DomainError carrying one of `outboundCodes`.
 */
export async function safeHttpsRequest(
  rawUrl: string,
  options: SafeRequestOptions,
): Promise<SafeResponse> {
  const allowlist = options.allowlist ?? emptyAllowlist;
  const resolver = options.resolver ?? systemResolver;
  const { pool } = options;
  if (pool !== undefined) {
    // A pooled socket was checked against the pool's allowlist; it may not serve another one.
    if (pool.allowlist !== allowlist || pool.resolver !== resolver) {
      throw new TypeError('safeHttpsRequest: the pool belongs to another allowlist or resolver');
    }
    if (pool.closed) throw new TypeError('safeHttpsRequest: the pool is closed');
  }
  if (pool !== undefined && options.allowPlainHttp === true) {
    throw new TypeError('safeHttpsRequest: a pool only carries https requests');
  }
  const { url, host, isIp } =
    pool?.target(rawUrl) ?? target(rawUrl, allowlist, options.allowPlainHttp === true);
  const plain = url.protocol === 'http:';
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(options.headers ?? {})) {
    if (forbiddenHeaders.has(name.toLowerCase())) {
      throw new TypeError(`safeHttpsRequest does not send a ${name} header`);
    }
    headers[name] = value;
  }
  if (options.authorization !== undefined) headers.Authorization = options.authorization;
  if (options.body !== undefined) headers['Content-Length'] = String(options.body.byteLength);

  return new Promise<SafeResponse>((resolve, reject) => {
    const oneShot =
      pool !== undefined
        ? null
        : plain
          ? new http.Agent({ keepAlive: false })
          : new https.Agent({ keepAlive: false, maxCachedSessions: 0 });
    const agent = pool?.agent ?? oneShot!;
    let phase: Phase = 'connecting';
    let body: Transform | null = null;
    let request: ClientRequest;
    try {
      request = (plain ? http : https).request({
        host,
        port: url.port === '' ? (plain ? 80 : 443) : Number(url.port),
        path: `${url.pathname}${url.search}`,
        method: options.method ?? 'GET',
        headers,
        agent,
        // The pool's agent carries the same lookup itself (and its options win).
        ...(isIp ? {} : { lookup: checkedLookup(allowlist, resolver) }),
      });
    } catch (error) {
      // A header value Node refuses (a caller's bug); nothing was sent.
      oneShot?.destroy();
      throw error;
    }
    // Set right after the request: its DNS lookup and connect only start on the next tick.
    const deadline = setTimeout(() => {
      const error = timeout(options.timeoutMs);
      body?.destroy(error);
      request.destroy(error);
    }, options.timeoutMs);
    const finish = (): void => {
      clearTimeout(deadline);
      oneShot?.destroy();
    };
    request.on('socket', (socket) => {
      if (request.reusedSocket) {
        phase = 'connected';
        return;
      }
      socket.once('connect', () => {
        // Plain HTTP has no handshake: connected is connected.
        phase = plain ? 'connected' : 'handshake';
      });
      socket.once('secureConnect', () => {
        phase = 'connected';
      });
    });
    request.on('error', (error) => {
      finish();
      reject(describeFailure(error, phase));
    });
    request.on('response', (response) => {
      const capped = byteCap(options.maxResponseBytes);
      body = capped;
      // Keeps an unconsumed body that fails (deadline, cap) from crashing the process; readers
      // still see the error.
      capped.on('error', () => {});
      capped.on('close', () => {
        // A response not read to its end takes its socket with it (IncomingMessage destroys
        // the socket of an unfinished message), so no half-read socket returns to a pool; a
        // finished one was already handed back (Node detaches it from the response first).
        response.destroy();
        finish();
      });
      response.on('error', (error) => capped.destroy(describeFailure(error, phase)));
      response.pipe(capped);
      resolve({
        status: response.statusCode ?? 0,
        headers: response.headers,
        body: capped,
        readAll: async () => {
          const chunks: Buffer[] = [];
          for await (const chunk of capped) chunks.push(chunk as Buffer);
          return Buffer.concat(chunks);
        },
        discard: () => {
          capped.destroy();
        },
      });
    });
    request.end(options.body);
  });
}
