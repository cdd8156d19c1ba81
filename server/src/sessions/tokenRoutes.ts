import { createRoute } from '@hono/zod-openapi';
import { limitBody } from '../http/bodyLimit';
import {
  createRouter,
  envelopeOf,
  errorResponses,
  guardErrors,
  jsonBodyErrors,
  jsonContent,
} from '../http/openapi';
import { pdfPreparationErrors, pdfReadErrors } from '../pdf/signing/errors';
import { stepContext } from './access';
import { type SessionGuards, stepSecurity } from './guards';
import { sessionStateErrors, tokenRefusals } from './routeErrors';
import {
  SessionIdParam,
  SignatureResultEnvelope,
  TokenPrepareBody,
  TokenPreparedEnvelope,
  TokenSignatureBody,
} from './schemas';

/** Loads with the first request that needs it: it brings the signing stack (see routes.ts). */
const stepsModule = () => import('./steps');

/** A usb_token session's steps: the revision prepared again, then the token's signature. */
export function tokenRoutes(guards: SessionGuards) {
  const router = createRouter();
  const step = { tags: ['Signing sessions'], security: stepSecurity };

  const tokenRoute = createRoute({
    ...step,
    middleware: [guards.step, limitBody(256 * 1024)],
    method: 'post',
    path: '/signing/{sessionId}/sign-with-token',
    operationId: 'signWithToken',
    summary: 'Sign with a USB token (usb_token): signature, chain, timestamp',
    description:
      'See docs/signing-with-a-token.md. The engine’s refusals keep their codes and leave the session open for another try; 409 DOCUMENT_CHANGED when another signer signed since initiate (initiate again).',
    request: {
      params: SessionIdParam,
      body: { required: true, content: { 'application/json': { schema: TokenSignatureBody } } },
    },
    responses: {
      200: jsonContent(SignatureResultEnvelope, 'The signature'),
      ...errorResponses(
        guardErrors,
        jsonBodyErrors,
        sessionStateErrors,
        tokenRefusals,
        pdfReadErrors,
        ['PAYLOAD_TOO_LARGE'],
      ),
    },
  });
  router.openapi(tokenRoute, async (c) => {
    const { sessionId } = c.req.valid('param');
    const { signWithToken } = await stepsModule();
    const data = await signWithToken(
      c.get('deps'),
      await stepContext(c, sessionId),
      c.req.valid('json'),
    );
    return c.json(envelopeOf(c, data), 200);
  });

  const prepareRoute = createRoute({
    ...step,
    middleware: [guards.step, limitBody(64 * 1024)],
    method: 'post',
    path: '/signing/{sessionId}/prepare',
    operationId: 'prepareTokenSigning',
    summary: 'Prepare the revision again just before the token signs (usb_token)',
    description:
      'Its /M and visible time become this moment; with the token’s certificate, the box shows the certificate’s name and the certificate must name the signer (422 SIGNER_IDENTITY_MISMATCH). Answers the new contractHash and a ticket; the previous contractHash can no longer be signed. sign-with-token refuses a revision whose /M is more than 5 minutes before the timestamp (409 PREPARATION_STALE). See docs/signing-with-a-token.md.',
    request: {
      params: SessionIdParam,
      body: { required: true, content: { 'application/json': { schema: TokenPrepareBody } } },
    },
    responses: {
      200: jsonContent(TokenPreparedEnvelope, 'The new revision to sign'),
      ...errorResponses(guardErrors, jsonBodyErrors, sessionStateErrors, pdfPreparationErrors, [
        'INVALID_BASE64',
        'CERTIFICATE_MALFORMED',
        'ORIGIN_NOT_REGISTERED',
        'PAYLOAD_TOO_LARGE',
        'CERTIFICATE_INVALID',
        'SIGNER_IDENTITY_MISMATCH',
      ]),
    },
  });
  router.openapi(prepareRoute, async (c) => {
    const { sessionId } = c.req.valid('param');
    const { prepareForToken } = await stepsModule();
    const data = await prepareForToken(
      c.get('deps'),
      await stepContext(c, sessionId),
      c.req.valid('json'),
    );
    return c.json(envelopeOf(c, data), 200);
  });

  return router;
}
