import { createRouter } from '../http/openapi';
import type { RateLimiter } from '../http/rateLimit';

/** Endpoints 17 (webhook test) and 18 (sandbox receiver), mounted under /api by app.ts. */
export function webhookRoutes(_limiter: RateLimiter) {
  return createRouter();
}
