import { createRoute, type z } from '@hono/zod-openapi';
import type { AppDeps } from '../context';
import { limitBody } from '../http/bodyLimit';
import {
  createRouter,
  type ErrorCodes,
  envelope,
  envelopeOf,
  errorResponses,
  jsonBodyErrors,
  jsonContent,
  tenantCodeErrors,
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
  /** What every auth route answers before its own logic: rate limit, body size, JSON body. */
  const bodyErrors: ErrorCodes = [...jsonBodyErrors, 'PAYLOAD_TOO_LARGE', 'RATE_LIMITED'];

  /** The three anonymous routes that open a session share one shape: JSON in, tokens out. */
  function sessionRoute<S extends z.ZodType>(
    spec: {
      path: string;
      operationId: string;
      summary: string;
      description: string;
      schema: S;
      errors: ErrorCodes;
    },
    open: (deps: AppDeps, input: z.infer<S>) => Promise<SessionTokensData>,
  ) {
    const route = createRoute({
      method: 'post',
      path: spec.path,
      operationId: spec.operationId,
      tags: ['Authentication'],
      summary: spec.summary,
      // Anonymous: the body carries what proves the caller.
      security: [],
      middleware: [anonymousLimit, smallBody] as const,
      request: { body: json(spec.schema) },
      responses: {
        200: jsonContent(envelope(SessionTokens), spec.description),
        ...errorResponses(bodyErrors, spec.errors),
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
      operationId: 'login',
      summary: 'Log in with e-mail or login name and password',
      description: 'Access token (1 hour) and refresh token (7 days, single use)',
      schema: LoginBody,
      errors: ['UNAUTHORIZED', 'ACCOUNT_INACTIVE'],
    },
    (deps, input) => login(deps, input.username, input.password),
  );
  sessionRoute(
    {
      path: '/refresh',
      operationId: 'refreshTokens',
      summary: 'Exchange a refresh token for a new pair (rotation)',
      description: 'New access and refresh tokens; the old refresh token is spent',
      schema: RefreshBody,
      errors: ['UNAUTHORIZED'],
    },
    (deps, input) => refresh(deps, input.refreshToken),
  );
  sessionRoute(
    {
      path: '/login-server',
      operationId: 'loginServer',
      summary: 'Backend only: session of a user identified by citizen id, without password',
      description: 'Same data as login',
      schema: LoginServerBody,
      errors: [
        'USER_AMBIGUOUS',
        'UNAUTHORIZED',
        'API_KEY_LEGACY_NOT_SUPPORTED',
        'ACCOUNT_INACTIVE',
        'USER_NOT_FOUND',
      ],
    },
    (deps, input) => loginServer(deps, input.secretKey, input.cccd),
  );

  const partnerLoginRoute = createRoute({
    method: 'post',
    path: '/partner-login',
    operationId: 'partnerLogin',
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
      ...errorResponses(
        ['UNAUTHORIZED', 'API_KEY_LEGACY_NOT_SUPPORTED'],
        bodyErrors,
        tenantCodeErrors,
        ['SUPER_ADMIN_NOT_ALLOWED', 'ACCOUNT_LOCKED', 'USER_NOT_FOUND'],
      ),
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
