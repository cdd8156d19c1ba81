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
import { pdfPreparationErrors } from '../pdf/signing/errors';
import { stepContext } from './access';
import { type SessionGuards, stepSecurity } from './guards';
import { sessionStateErrors } from './routeErrors';
import {
  ConfirmBody,
  OtpSentEnvelope,
  RejectBody,
  RejectedEnvelope,
  SessionIdParam,
  SignatureResultEnvelope,
} from './schemas';

/** Loads with the first request that needs it: it brings the signing stack (see routes.ts). */
const stepsModule = () => import('./steps');

/** The picture and the body it comes in: 512 KB decoded is about 700 KB of base64. */
const confirmBodyLimit = 800 * 1024;

/**
 * A session's steps with a server-held key (the OTP, the confirmation that signs) and the
 * signer's refusal, which any session may take.
 */
export function stepRoutes(guards: SessionGuards) {
  const router = createRouter();
  const step = { tags: ['Signing sessions'], security: stepSecurity, middleware: [guards.step] };

  const sendOtpRoute = createRoute({
    ...step,
    method: 'post',
    path: '/signing/{sessionId}/send-otp',
    operationId: 'sendSigningOtp',
    summary: 'Send the 6-digit code (otp_sms, cloud_hsm)',
    description:
      'By SMS to the signer’s phone, by e-mail when the signer has none; valid 5 minutes; one a minute per session (429 OTP_RESEND_TOO_SOON with Retry-After). Whatever the session, at most 5 codes per signer in any hour (429 OTP_SEND_LIMIT_REACHED), and none while the signer’s wrong codes are used up (429 OTP_FAILURE_LIMIT_REACHED); both with Retry-After. message names the masked number.',
    request: { params: SessionIdParam },
    responses: {
      200: jsonContent(OtpSentEnvelope, 'The code is on its way'),
      ...errorResponses(guardErrors, sessionStateErrors, [
        'OTP_RESEND_TOO_SOON',
        'OTP_SEND_LIMIT_REACHED',
        'OTP_FAILURE_LIMIT_REACHED',
      ]),
    },
  });
  router.openapi(sendOtpRoute, async (c) => {
    const { sessionId } = c.req.valid('param');
    const deps = c.get('deps');
    const { sendOtp } = await stepsModule();
    const { message, data } = await sendOtp(deps, await stepContext(c, sessionId));
    return c.json(envelopeOf(c, data, message), 200);
  });

  const confirmRoute = createRoute({
    ...step,
    middleware: [guards.step, limitBody(confirmBodyLimit)],
    method: 'post',
    path: '/signing/{sessionId}/confirm',
    operationId: 'confirmSigning',
    summary: 'Sign: otp_sms and cloud_hsm with the code, image_signature with the picture',
    description:
      'cloud_hsm signs with the signer’s own key, otp_sms and image_signature with the service seal; image_signature draws the PNG or JPEG in the signer’s box. Wrong codes are counted; the fifth of a session locks it (409 SESSION_LOCKED). Whatever the session, at most 10 wrong codes per signer in any 24 hours: the tenth and every try after it answer 429 OTP_FAILURE_LIMIT_REACHED with Retry-After.',
    request: {
      params: SessionIdParam,
      body: { required: true, content: { 'application/json': { schema: ConfirmBody } } },
    },
    responses: {
      200: jsonContent(SignatureResultEnvelope, 'The signature'),
      ...errorResponses(guardErrors, jsonBodyErrors, sessionStateErrors, pdfPreparationErrors, [
        'OTP_NOT_SENT',
        'SIGNER_KEY_NOT_ENROLLED',
        'DOCUMENT_CHANGED',
        'SEAL_CERTIFICATE_MISSING',
        'PREPARATION_NOT_OPEN',
        'OTP_EXPIRED',
        'PREPARATION_EXPIRED',
        'PAYLOAD_TOO_LARGE',
        'IMAGE_TOO_LARGE',
        'IMAGE_TYPE_UNSUPPORTED',
        'OTP_INVALID',
        'IMAGE_UNREADABLE',
        'SIGNER_IDENTITY_MISMATCH',
        'OTP_FAILURE_LIMIT_REACHED',
        'TIMESTAMP_FAILED',
      ]),
    },
  });
  router.openapi(confirmRoute, async (c) => {
    const { sessionId } = c.req.valid('param');
    const { confirm } = await stepsModule();
    const data = await confirm(c.get('deps'), await stepContext(c, sessionId), c.req.valid('json'));
    return c.json(envelopeOf(c, data), 200);
  });

  const rejectRoute = createRoute({
    ...step,
    method: 'post',
    path: '/signing/{sessionId}/reject',
    operationId: 'rejectSigning',
    summary: 'Decline to sign: the contract is rejected',
    description: 'reason is required; the creator is e-mailed.',
    request: {
      params: SessionIdParam,
      body: { required: true, content: { 'application/json': { schema: RejectBody } } },
    },
    responses: {
      200: jsonContent(RejectedEnvelope, 'The contract, now rejected'),
      ...errorResponses(guardErrors, jsonBodyErrors, sessionStateErrors),
    },
  });
  router.openapi(rejectRoute, async (c) => {
    const { sessionId } = c.req.valid('param');
    const { reason } = c.req.valid('json');
    const { reject } = await stepsModule();
    const data = await reject(c.get('deps'), await stepContext(c, sessionId), reason);
    return c.json(envelopeOf(c, data), 200);
  });

  return router;
}
