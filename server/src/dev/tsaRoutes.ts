import { createRoute, z } from '@hono/zod-openapi';
import { type RateLimiter, rateLimit } from '../auth/rateLimit';
import { DomainError } from '../errors/domainError';
import { limitBody } from '../http/bodyLimit';
import { createRouter, errorResponses } from '../http/openapi';

/** A TimeStampReq is about a hundred bytes; a few KB allows any extension a client adds. */
const maxRequestBytes = 8 * 1024;

const binary = (description: string) => z.string().openapi({ format: 'binary', description });

/** The development TSA, mounted under /api by app.ts; 404 in production. */
export function developmentTsaRoutes(limiter: RateLimiter) {
  const router = createRouter();
  const route = createRoute({
    method: 'post',
    path: '/dev/tsa',
    operationId: 'devTimestamp',
    tags: ['Signing'],
    summary: 'Development TSA: RFC 3161 timestamps (development and sandbox only)',
    description:
      'The server as its own RFC 3161 timestamp authority, so that the agent and partner clients can timestamp without a TSA contract in development and sandbox: POST a DER TimeStampReq, get a DER TimeStampResp. Its certificate (critical timeStamping EKU) chains to a development CA that only development and sandbox trust. A request it cannot grant (unsupported hash, unknown policy, extensions) gets an RFC 3161 rejection. 404 NOT_FOUND in production, where TSA_URL names a real TSA.',
    // Anyone may ask, as of any public TSA; only the rate limit applies.
    security: [],
    middleware: [rateLimit(limiter, 'api'), limitBody(maxRequestBytes)] as const,
    request: {
      body: {
        required: true,
        content: {
          'application/timestamp-query': { schema: binary('DER TimeStampReq (RFC 3161)') },
        },
      },
    },
    responses: {
      200: {
        description: 'A TimeStampResp: granted with a token, or a rejection with its failInfo',
        content: {
          'application/timestamp-reply': { schema: binary('DER TimeStampResp (RFC 3161)') },
        },
      },
      ...errorResponses([
        'TIMESTAMP_REQUEST_INVALID',
        'NOT_FOUND',
        'PAYLOAD_TOO_LARGE',
        'UNSUPPORTED_MEDIA_TYPE',
        'RATE_LIMITED',
      ]),
    },
  });
  router.openapi(route, async (c) => {
    const deps = c.get('deps');
    if (deps.config.environment === 'production') {
      throw new DomainError('NOT_FOUND', `No route for ${c.req.method} ${c.req.path}`);
    }
    const type = (c.req.header('content-type') ?? '').split(';')[0]!.trim().toLowerCase();
    if (type !== 'application/timestamp-query') {
      throw new DomainError(
        'UNSUPPORTED_MEDIA_TYPE',
        'Send the body as application/timestamp-query (a DER TimeStampReq)',
      );
    }
    const requestDer = Buffer.from(await c.req.arrayBuffer());
    // Loaded on the first request: the ASN.1 and X.509 libraries are not paid for at start.
    const [{ developmentTsa }, { timestampResponse }] = await Promise.all([
      import('./developmentTsa'),
      import('./tsaResponder'),
    ]);
    const tsaSigner = await developmentTsa(deps);
    const reply = await timestampResponse({ clock: deps.clock, tsaSigner }, requestDer);
    return c.body(new Uint8Array(reply), 200, { 'Content-Type': 'application/timestamp-reply' });
  });
  return router;
}
