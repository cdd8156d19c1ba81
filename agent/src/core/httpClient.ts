import http from 'node:http';
import https from 'node:https';

export interface HttpExchange {
  method: 'GET' | 'POST';
  headers?: Record<string, string>;
  body?: Uint8Array;
  /** Deadline for the whole exchange, body included. */
  timeoutMs: number;
  /** A longer body is refused, not truncated. */
  maxBytes: number;
  /** Redirects followed (GET only; a TSA answer never moves). */
  maxRedirects?: number;
}

export interface HttpAnswer {
  status: number;
  contentType: string;
  body: Buffer;
}

/**
 * One small HTTP(S) exchange with a deadline and a size cap: what AIA issuer fetching and the
 * TSA need (both answer signed data, checked afterwards, so plain http is acceptable).
 */
export function httpExchange(url: string, exchange: HttpExchange): Promise<HttpAnswer> {
  return new Promise((resolve, reject) => {
    let target: URL;
    try {
      target = new URL(url);
    } catch {
      reject(new Error(`${url} is not a URL`));
      return;
    }
    const client =
      target.protocol === 'https:' ? https : target.protocol === 'http:' ? http : undefined;
    if (!client) {
      reject(new Error(`${url}: only http and https`));
      return;
    }
    /** Why we ended the exchange ourselves (else the socket's own error is reported). */
    let abandoned: Error | undefined;
    const abandon = (reason: string) => {
      abandoned = new Error(reason);
      request.destroy(abandoned);
    };
    const request = client.request(
      target,
      {
        method: exchange.method,
        headers: {
          ...exchange.headers,
          ...(exchange.body ? { 'Content-Length': String(exchange.body.length) } : {}),
        },
      },
      (response) => {
        const status = response.statusCode ?? 0;
        const location = response.headers.location;
        if (status >= 300 && status < 400 && location && (exchange.maxRedirects ?? 0) > 0) {
          response.resume();
          clearTimeout(deadline);
          const next = new URL(location, target).toString();
          httpExchange(next, { ...exchange, maxRedirects: (exchange.maxRedirects ?? 0) - 1 }).then(
            resolve,
            reject,
          );
          return;
        }
        const chunks: Buffer[] = [];
        let size = 0;
        response.on('data', (chunk: Buffer) => {
          size += chunk.length;
          if (size > exchange.maxBytes) {
            abandon(`${url} answered more than ${exchange.maxBytes} bytes`);
            return;
          }
          chunks.push(chunk);
        });
        response.on('end', () => {
          clearTimeout(deadline);
          const contentType = String(response.headers['content-type'] ?? '')
            .split(';')[0]!
            .trim()
            .toLowerCase();
          resolve({ status, contentType, body: Buffer.concat(chunks) });
        });
        response.on('error', reject);
      },
    );
    const deadline = setTimeout(() => {
      abandon(`${url} did not answer within ${exchange.timeoutMs} ms`);
    }, exchange.timeoutMs);
    request.on('error', (error) => {
      clearTimeout(deadline);
      reject(abandoned ?? new Error(`${url}: ${error.message}`));
    });
    request.end(exchange.body ? Buffer.from(exchange.body) : undefined);
  });
}
