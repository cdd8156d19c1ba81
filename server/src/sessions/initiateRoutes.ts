import { createRoute } from '@hono/zod-openapi';
import { originOf } from '../audit/origin';
import { contractSecurity } from '../auth/areas';
import { requireActor } from '../auth/authenticate';
import { callerOf } from '../contracts/access';
import {
  createRouter,
  envelopeOf,
  errorResponses,
  guardErrors,
  jsonBodyErrors,
  jsonContent,
} from '../http/openapi';
import { pdfPreparationErrors } from '../pdf/signing/errors';
import { type SessionGuards, taskSigningSecurity } from './guards';
import { contractTurnErrors } from './routeErrors';
import {
  InitiateBody,
  SessionStartedEnvelope,
  TaskSessionBody,
  TaskSessionParam,
  TaskSessionStartedEnvelope,
} from './schemas';

/** Loads with the first request that needs it: it brings the signing stack (see routes.ts). */
const initiateModule = () => import('./initiate');

/** Opening a session: for a dossier task's signer, or for a contract signer by a partner. */
export function initiateRoutes(guards: SessionGuards) {
  const router = createRouter();

  const taskInitiate = createRoute({
    tags: ['Signing sessions'],
    security: taskSigningSecurity,
    middleware: guards.taskSigner,
    method: 'post',
    path: '/tasks/{taskCode}/signing-session',
    operationId: 'initiateTaskSigning',
    summary: 'Open a signing session for the caller’s turn of a dossier task',
    description:
      'For the web app (and partners acting for the person): a digital_signature step signs with usb_token or cloud_hsm, an image_signature step with image_signature. Prepares the newest version of the dossier’s MAIN file; the session’s steps are those of /api/signing/{sessionId}/…, and a signature completes the turn (the signed PDF becomes the file’s next version).',
    request: {
      params: TaskSessionParam,
      body: { required: true, content: { 'application/json': { schema: TaskSessionBody } } },
    },
    responses: {
      200: jsonContent(TaskSessionStartedEnvelope, 'The session'),
      ...errorResponses(guardErrors, jsonBodyErrors, pdfPreparationErrors, [
        'TASK_NOT_FOUND',
        'DOSSIER_ENDED',
        'TASK_ALREADY_HANDLED',
        'TASK_EXPIRED',
        'NOT_YOUR_TURN',
        'MAIN_FILE_NOT_SINGLE',
        'SIGNER_KEY_NOT_ENROLLED',
        'SIGNATURE_NOT_EXPECTED',
        'SIGNING_METHOD_NOT_ALLOWED',
        'SIGNER_IDENTITY_MISMATCH',
      ]),
    },
  });
  router.openapi(taskInitiate, async (c) => {
    const { taskCode } = c.req.valid('param');
    const { signingMethod } = c.req.valid('json');
    const userId = requireActor(c.get('principal')).id;
    const { initiateTaskSession } = await initiateModule();
    const data = await initiateTaskSession(
      c.get('deps'),
      userId,
      { taskCode, signingMethod },
      originOf(c),
    );
    return c.json(envelopeOf(c, data), 200);
  });

  const initiate = createRoute({
    tags: ['Signing sessions'],
    security: contractSecurity,
    middleware: guards.partner,
    method: 'post',
    path: '/signing/initiate',
    operationId: 'initiateSigning',
    summary: 'Open a signing session for the signer whose turn it is',
    description:
      'Prepares the signer’s revision of the newest contract version (a visible box "Ký bởi: <name> — <time>" at the signer’s placement, default the bottom of the last page). A new initiate for the same signer supersedes the open session. usb_token sessions also get tsaUrl.',
    request: {
      body: { required: true, content: { 'application/json': { schema: InitiateBody } } },
    },
    responses: {
      200: jsonContent(SessionStartedEnvelope, 'The session'),
      ...errorResponses(guardErrors, jsonBodyErrors, pdfPreparationErrors, [
        'ORIGIN_NOT_REGISTERED',
        'CONTRACT_NOT_FOUND',
        'SIGNER_NOT_FOUND',
        ...contractTurnErrors,
      ]),
    },
  });
  router.openapi(initiate, async (c) => {
    const { initiateSession } = await initiateModule();
    const data = await initiateSession(c.get('deps'), await callerOf(c), c.req.valid('json'));
    return c.json(envelopeOf(c, data), 200);
  });

  return router;
}
