import type { MiddlewareHandler } from 'hono';
import { bodyLimit } from 'hono/body-limit';
import type { AppEnv } from '../context';
import { ApiError } from '../errors/apiError';

/**
 * Refuses a body over `maxBytes` with 413 before it is read into memory (by Content-Length, or
 * while it streams when there is none). Anonymous endpoints need it most: anyone can send.
 */
export function limitBody(maxBytes: number): MiddlewareHandler<AppEnv> {
  return bodyLimit({
    maxSize: maxBytes,
    onError: () => {
      throw new ApiError(413, 'PAYLOAD_TOO_LARGE', `The request body exceeds ${maxBytes} bytes`);
    },
  });
}
