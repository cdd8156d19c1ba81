import { createRouter } from '../http/openapi';
import type { RateLimiter } from '../http/rateLimit';

/** Integration API routes of this domain, mounted under /api/integration by app.ts. */
export function fileRoutes(_limiter: RateLimiter) {
  return createRouter();
}
