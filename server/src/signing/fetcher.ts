/**
 * How the engine reaches the network: OCSP responders, CRL distribution points and an HTTP
 * timestamp authority. The engine builds the request and judges the answer (every one of them
 * is signed); the caller decides where a request may go (the server: its SSRF-safe outbound
 * client and allow-list, see engineFetcher in runtime.ts), so the engine never opens a socket.
 */
export interface FetchRequest {
  /** `http:` or `https:` (OCSP answers and CRLs are published over plain HTTP). */
  url: string;
  method: 'GET' | 'POST';
  /** Content-Type, Accept, ...; never credentials (see `authorization`). */
  headers?: Record<string, string>;
  body?: Buffer;
  /** An `Authorization` value for an operator-configured endpoint (a TSA with a password). */
  authorization?: string;
  /** One deadline from the call to the last body byte. */
  timeoutMs: number;
  /** The body may not exceed this many bytes. */
  maxResponseBytes: number;
}

/** What a fetch gives back: the body of a 200, the status of any other answer, or a refusal. */
export type FetchResult =
  | { kind: 'ok'; contentType: string; body: Buffer }
  | { kind: 'status'; status: number }
  | {
      kind: 'failed';
      /** The deadline passed (a TSA reports it apart). */
      timeout: boolean;
      /** The caller's code for the refusal (`OUTBOUND_ADDRESS_FORBIDDEN`, ...), for messages. */
      code: string;
      message: string;
    };

export interface Fetcher {
  fetch(request: FetchRequest): Promise<FetchResult>;
}

/** The engine's clock: validation times, freshness of revocation answers, a token's genTime. */
export interface Clock {
  now(): Date;
}
