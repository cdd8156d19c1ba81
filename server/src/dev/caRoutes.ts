import { createRoute, z } from '@hono/zod-openapi';
import type { Context } from 'hono';
import { type RateLimiter, rateLimit } from '../auth/rateLimit';
import type { AppEnv } from '../context';
import { DomainError } from '../errors/domainError';
import { limitBody } from '../http/bodyLimit';
import { createRouter, errorResponses } from '../http/openapi';

/** An OCSPRequest for a few certificates is a few hundred bytes; 8 KB allows any extension. */
const maxRequestBytes = 8 * 1024;

const binary = (description: string) => z.string().openapi({ format: 'binary', description });

const reply = {
  200: {
    description:
      'An OCSPResponse: successful with a BasicOCSPResponse signed by the development CA (good for a certificate it issued, unknown for any other serial), or malformedRequest / unauthorized (a certificate of another CA)',
    content: { 'application/ocsp-response': { schema: binary('DER OCSPResponse (RFC 6960)') } },
  },
};

const description =
  'The development CA’s OCSP responder (RFC 6960), named in the authorityInfoAccess of every certificate the development CA issues (the seal, cloud_hsm signer keys, the development TSA), so that development and sandbox signatures carry revocation answers (PAdES B-LT) like a real CA’s. Answers are signed by the development CA, echo the request’s nonce and hold for a day. 404 NOT_FOUND in production, which never uses the development CA.';

/** 404 in production; otherwise the answer as DER with its media type. */
async function answer(c: Context<AppEnv>, requestDer: Buffer) {
  const deps = c.get('deps');
  if (deps.config.environment === 'production') {
    throw new DomainError('NOT_FOUND', `No route for ${c.req.method} ${c.req.path}`);
  }
  // Loaded on the first request: the ASN.1 libraries are not paid for at start.
  const { developmentOcspResponse } = await import('./ocspResponder');
  const der = await developmentOcspResponse(deps, requestDer);
  return c.body(new Uint8Array(der), 200, {
    'Content-Type': 'application/ocsp-response',
    // RFC 5019 6: an answer may be cached by HTTP caches until its nextUpdate; ours are fresh.
    'Cache-Control': 'no-cache',
  });
}

/** The development OCSP responder, mounted under /api by app.ts; 404 in production. */
export function developmentOcspRoutes(limiter: RateLimiter) {
  const router = createRouter();
  const post = createRoute({
    method: 'post',
    path: '/dev/ocsp',
    operationId: 'devOcsp',
    tags: ['Signing'],
    summary: 'Development OCSP responder (development and sandbox only)',
    description: `${description} POST a DER OCSPRequest.`,
    // Anyone may ask, as of any CA's responder; only the rate limit applies.
    security: [],
    middleware: [rateLimit(limiter, 'api'), limitBody(maxRequestBytes)] as const,
    request: {
      body: {
        required: true,
        content: { 'application/ocsp-request': { schema: binary('DER OCSPRequest (RFC 6960)') } },
      },
    },
    responses: {
      ...reply,
      ...errorResponses([
        'NOT_FOUND',
        'PAYLOAD_TOO_LARGE',
        'UNSUPPORTED_MEDIA_TYPE',
        'RATE_LIMITED',
      ]),
    },
  });
  router.openapi(post, async (c) => {
    const type = (c.req.header('content-type') ?? '').split(';')[0]!.trim().toLowerCase();
    if (type !== 'application/ocsp-request') {
      throw new DomainError(
        'UNSUPPORTED_MEDIA_TYPE',
        'Send the body as application/ocsp-request (a DER OCSPRequest)',
      );
    }
    return answer(c, Buffer.from(await c.req.arrayBuffer()));
  });

  const get = createRoute({
    method: 'get',
    path: '/dev/ocsp/{request}',
    operationId: 'devOcspGet',
    tags: ['Signing'],
    summary: 'Development OCSP responder, GET form (development and sandbox only)',
    description: `${description} GET with the DER OCSPRequest base64-encoded, then URL-encoded, as the last path segment (RFC 6960 appendix A.1).`,
    security: [],
    middleware: [rateLimit(limiter, 'api')] as const,
    request: {
      params: z.object({
        request: z
          .string()
          .max(Math.ceil((maxRequestBytes * 4) / 3) + 4)
          .regex(/^[A-Za-z0-9+/]*={0,2}$/, 'must be base64')
          .openapi({ description: 'base64 of the DER OCSPRequest, URL-encoded' }),
      }),
    },
    responses: {
      ...reply,
      ...errorResponses(['VALIDATION_ERROR', 'NOT_FOUND', 'RATE_LIMITED']),
    },
  });
  router.openapi(get, (c) => answer(c, Buffer.from(c.req.valid('param').request, 'base64')));
  return router;
}
