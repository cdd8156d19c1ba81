import { createRoute } from '@hono/zod-openapi';
import type { Context } from 'hono';
import type { AppEnv } from '../context';
import { limitBody } from '../http/bodyLimit';
import { createRouter, envelope, errorResponses, jsonContent } from '../http/openapi';
import { type RateLimiter, rateLimit } from '../http/rateLimit';
import { credentialAreas } from './areas';
import { authenticate } from './authenticate';
import {
  LoginBody,
  LoginServerBody,
  PartnerLoginBody,
  PartnerLoginData,
  RefreshBody,
  SessionTokens,
} from './schemas';
import { login, loginServer, partnerLogin, refresh } from './service';

function body<T>(c: Context<AppEnv>, data: T, statusCode = 200) {
  return { statusCode, data, timestamp: c.get('deps').clock.now().toISOString() };
}

const json = <T extends Parameters<typeof jsonContent>[0]>(schema: T) => ({
  required: true,
  content: { 'application/json': { schema } },
});

export function authRoutes(limiter: RateLimiter) {
  const router = createRouter();
  const anonymousLimit = rateLimit(limiter, 'auth');
  // Every auth body is a few short strings; 16 KiB leaves room and keeps floods out of memory.
  const smallBody = limitBody(16 * 1024);

  const loginRoute = createRoute({
    method: 'post',
    path: '/login',
    tags: ['Authentication'],
    summary: 'Log in with e-mail or login name and password',
    middleware: [anonymousLimit, smallBody] as const,
    request: { body: json(LoginBody) },
    responses: {
      200: jsonContent(
        envelope(SessionTokens),
        'Access token (1 hour) and refresh token (7 days, single use)',
      ),
      ...errorResponses(400, 401, 403, 413, 429),
    },
  });
  router.openapi(loginRoute, async (c) => {
    const input = c.req.valid('json');
    return c.json(body(c, await login(c.get('deps'), input.username, input.password)), 200);
  });

  const refreshRoute = createRoute({
    method: 'post',
    path: '/refresh',
    tags: ['Authentication'],
    summary: 'Exchange a refresh token for a new pair (rotation)',
    middleware: [anonymousLimit, smallBody] as const,
    request: { body: json(RefreshBody) },
    responses: {
      200: jsonContent(
        envelope(SessionTokens),
        'New access and refresh tokens; the old refresh token is spent',
      ),
      ...errorResponses(400, 401, 413, 429),
    },
  });
  router.openapi(refreshRoute, async (c) => {
    const input = c.req.valid('json');
    return c.json(body(c, await refresh(c.get('deps'), input.refreshToken)), 200);
  });

  const loginServerRoute = createRoute({
    method: 'post',
    path: '/login-server',
    tags: ['Authentication'],
    summary: 'Backend only: session of a user identified by citizen id, without password',
    middleware: [anonymousLimit, smallBody] as const,
    request: { body: json(LoginServerBody) },
    responses: {
      200: jsonContent(envelope(SessionTokens), 'Same data as login'),
      ...errorResponses(400, 401, 403, 404, 413, 429),
    },
  });
  router.openapi(loginServerRoute, async (c) => {
    const input = c.req.valid('json');
    return c.json(body(c, await loginServer(c.get('deps'), input.secretKey, input.cccd)), 200);
  });

  const partnerLoginRoute = createRoute({
    method: 'post',
    path: '/partner-login',
    tags: ['Authentication'],
    summary: 'Partner access token (15 days) for an existing member of the tenant',
    security: [{ ApiKey: [] }],
    middleware: [
      authenticate(credentialAreas.partnerLogin),
      rateLimit(limiter, 'auth'),
      smallBody,
    ] as const,
    request: { body: json(PartnerLoginBody) },
    responses: {
      201: jsonContent(envelope(PartnerLoginData), 'HTTP 201 with body statusCode 200'),
      ...errorResponses(400, 401, 403, 404, 413, 429),
    },
  });
  router.openapi(partnerLoginRoute, async (c) => {
    const input = c.req.valid('json');
    const data = await partnerLogin(
      c.get('deps'),
      c.get('principal'),
      input.username,
      input.tenantCode,
    );
    return c.json(body(c, data), 201);
  });

  return router;
}
