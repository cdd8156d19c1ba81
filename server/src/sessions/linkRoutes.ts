import { createRoute } from '@hono/zod-openapi';
import { originOf } from '../audit/origin';
import { type RateLimiter, rateLimit } from '../auth/rateLimit';
import { limitBody } from '../http/bodyLimit';
import {
  createRouter,
  envelopeOf,
  errorResponses,
  jsonBodyErrors,
  jsonContent,
} from '../http/openapi';
import { pdfPreparationErrors } from '../pdf/signing/errors';
import { contractTurnErrors, invitationErrors, sessionStateErrors } from './routeErrors';
import {
  ExchangeBody,
  InvitationBody,
  InvitationEnvelope,
  InvitationStartBody,
  PageCredentialEnvelope,
} from './schemas';

/** Loaded with the first request that needs them: they bring the signing stack (routes.ts). */
const initiateModule = () => import('./initiate');
const invitationModule = () => import('./invitation');

/**
 * What a signing page holding a link does, without any other credential: exchange a session's
 * signing link for its page credential, read an e-mailed invitation, open a session from it.
 */
export function linkRoutes(limiter: RateLimiter) {
  const router = createRouter();
  const byLink = () => ({
    tags: ['Signing sessions'],
    security: [],
    middleware: [rateLimit(limiter, 'auth'), limitBody(4 * 1024)],
  });

  const exchange = createRoute({
    ...byLink(),
    method: 'post',
    path: '/signing/page-credential',
    operationId: 'exchangeSigningLink',
    summary: 'Turn a signing link into the signing page’s credential (once)',
    description:
      'A signing page holding a signingUrl (/ky-so/phien/<token>) sends its token (the web app’s own page exchanges it the same way, at its own path); the answer’s pageCredential authorises this session’s steps (header X-Signing-Token) until the session expires. The link works once; opening it is recorded (viewed).',
    request: {
      body: { required: true, content: { 'application/json': { schema: ExchangeBody } } },
    },
    responses: {
      200: jsonContent(PageCredentialEnvelope, 'The page credential'),
      ...errorResponses(jsonBodyErrors, sessionStateErrors, [
        'SIGNING_LINK_NOT_FOUND',
        'SIGNING_LINK_USED',
        'SIGNING_LINK_EXPIRED',
        'SESSION_EXPIRED',
        'PAYLOAD_TOO_LARGE',
        'RATE_LIMITED',
      ]),
    },
  });
  router.openapi(exchange, async (c) => {
    const { token } = c.req.valid('json');
    const { exchangeSigningLink } = await initiateModule();
    const data = await exchangeSigningLink(c.get('deps'), token, originOf(c));
    return c.json(envelopeOf(c, data), 200);
  });

  const readInvitationRoute = createRoute({
    ...byLink(),
    method: 'post',
    path: '/signing/invitation',
    operationId: 'readSigningInvitation',
    summary: 'Read the invitation behind an e-mailed signing link',
    description:
      'The signing page of the invitation link ({APP_URL}/ky-so/<token>, e-mailed by send) sends its token: the contract, the signer, whether it is their turn and the methods they may pick. Opening it is recorded (viewed). The link works until the contract’s deadline while the contract is being signed.',
    request: {
      body: { required: true, content: { 'application/json': { schema: InvitationBody } } },
    },
    responses: {
      200: jsonContent(InvitationEnvelope, 'The invitation'),
      ...errorResponses(jsonBodyErrors, invitationErrors),
    },
  });
  router.openapi(readInvitationRoute, async (c) => {
    const { token } = c.req.valid('json');
    const { readInvitation } = await invitationModule();
    const data = await readInvitation(c.get('deps'), token, originOf(c));
    return c.json(envelopeOf(c, data), 200);
  });

  const startInvitationRoute = createRoute({
    ...byLink(),
    method: 'post',
    path: '/signing/invitation/session',
    operationId: 'startInvitationSigning',
    summary: 'Open a signing session from an invitation link, with its page credential',
    description:
      'The signer’s own initiate, no partner credential: the same rules as POST /api/signing/initiate (their turn, not signed, not a viewer); a new session supersedes the signer’s open one. Answers what POST /api/signing/page-credential answers: pageCredential authorises the session’s steps (X-Signing-Token). The invitation link stays usable until the deadline.',
    request: {
      body: { required: true, content: { 'application/json': { schema: InvitationStartBody } } },
    },
    responses: {
      200: jsonContent(PageCredentialEnvelope, 'The session and its page credential'),
      ...errorResponses(jsonBodyErrors, invitationErrors, pdfPreparationErrors, contractTurnErrors),
    },
  });
  router.openapi(startInvitationRoute, async (c) => {
    const { startInvitationSession } = await invitationModule();
    const data = await startInvitationSession(c.get('deps'), c.req.valid('json'), originOf(c));
    return c.json(envelopeOf(c, data), 200);
  });

  return router;
}
