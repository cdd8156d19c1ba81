import { createRouter } from '../http/openapi';
import type { RateLimiter } from '../http/rateLimit';

/** Directory endpoints 9–16 of the integration API. */
export function directoryRoutes(_limiter: RateLimiter) {
  return createRouter();
}
