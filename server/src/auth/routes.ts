import { createRoute, type z } from '@hono/zod-openapi';
import type { AppDeps } from '../context';
import { limitBody } from '../http/bodyLimit';
import {
  createRouter,
  type ErrorStatus,
  envelope,
  envelopeOf,
  errorResponses,
  jsonContent,
} from '../http/openapi';
import { credentialAreas } from './areas';
import { authenticate } from './authenticate';
import { type RateLimiter, rateLimit } from './rateLimit';
import {
  LoginBody,
  LoginServerBody,
  PartnerLoginBody,
  PartnerLoginData,
  RefreshBody,
  SessionTokens,
} from './schemas';
import {
  login,
  loginServer,
  partnerLogin,
  refresh,
  type SessionTokens as SessionTokensData,
} from './service';

const json = <T extends Parameters<typeof jsonContent>[0]>(schema: T) => ({
  required: true,
  content: { 'application/json': { schema } },
});

export function authRoutes(limiter: RateLimiter) {
  const router = createRouter();
  const anonymousLimit = rateLimit(limiter, 'auth');
  // Every auth body is a few short strings; 16 KiB leaves room and keeps floods out of memory.
  const smallBody = limitBody(16 * 1024);

  /** The three anonymous routes that open a session share one shape: JSON in, tokens out. */
  function sessionRoute<S extends z.ZodType>(
    spec: { path: string; summary: string; description: string; schema: S; errors: ErrorStatus[] },
    open: (deps: AppDeps, input: z.infer<S>) => Promise<SessionTokensData>,
  ) {
    const route = createRoute({
      method: 'post',
      path: spec.path,
      tags: ['Authentication'],
      summary: spec.summary,
      middleware: [anonymousLimit, smallBody] as const,
      request: { body: json(spec.schema) },
      responses: {
        200: jsonContent(envelope(SessionTokens), spec.description),
        ...errorResponses(...spec.errors),
      },
    });
    router.openapi(route, async (c) => {
      // zod-openapi cannot infer the validated type through a generic route; the schema ran.
      const input = c.req.valid('json' as never) as z.infer<S>;
      return c.json(envelopeOf(c, await open(c.get('deps'), input)), 200);
    });
  }

  sessionRoute(
    {
      path: '/login',
      summary: 'Log in with e-mail or login name and password',
      description: 'Access token (1 hour) and refresh token (7 days, single use)',
      schema: LoginBody,
      errors: [400, 401, 403, 413, 429],
    },
    (deps, input) => login(deps, input.username, input.password),
  );
  sessionRoute(
    {
      path: '/refresh',
      summary: 'Exchange a refresh token for a new pair (rotation)',
      description: 'New access and refresh tokens; the old refresh token is spent',
      schema: RefreshBody,
      errors: [400, 401, 413, 429],
    },
    (deps, input) => refresh(deps, input.refreshToken),
  );
  sessionRoute(
    {
      path: '/login-server',
      summary: 'Backend only: session of a user identified by citizen id, without password',
      description: 'Same data as login',
      schema: LoginServerBody,
      errors: [400, 401, 403, 404, 413, 429],
    },
    (deps, input) => loginServer(deps, input.secretKey, input.cccd),
  );

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
    return c.json(envelopeOf(c, data), 201);
  });

  return router;
}
