import type { RateLimiter } from '../auth/rateLimit';
import { createRouter } from '../http/openapi';
import { listRoutes } from './listRoutes';
import { directoryGuard } from './routeGuards';
import { DirectoryUserRow } from './schemas';
import { userRoutes } from './userRoutes';

/**
 * Directory endpoints 9–16 of the integration API, `X-API-Key` only, bare JSON bodies: the
 * lists (listRoutes) and the users (userRoutes).
 */
export function directoryRoutes(limiter: RateLimiter) {
  const guarded = directoryGuard(limiter);
  const router = createRouter();
  router.openAPIRegistry.register('DirectoryUserRow', DirectoryUserRow);
  return router.route('/', listRoutes(guarded)).route('/', userRoutes(guarded));
}
