import { AGENT_TICKET_KEYS_PATH } from '@esign/shared';
import { createRoute } from '@hono/zod-openapi';
import type { MiddlewareHandler } from 'hono';
import { originOf } from '../audit/origin';
import { credentialAreas, integrationSecurity } from '../auth/areas';
import { authenticate, requireActor } from '../auth/authenticate';
import { requireAnyPermission, requirePermission } from '../auth/permissions';
import { type RateLimiter, rateLimit } from '../auth/rateLimit';
import type { AppEnv } from '../context';
import { callerOf } from '../contracts/access';
import { contractStateCodes } from '../contracts/lifecycle';
import { contractSecurity } from '../contracts/routes';
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
import { pageCredentialHeader, requirePageCredential, stepContext } from './access';
import { agentTicketKeySet } from './agentTickets';
import { isTaskSession } from './queries';
import {
  AgentTicketKeySet,
  ConfirmBody,
  ExchangeBody,
  InitiateBody,
  InvitationBody,
  InvitationEnvelope,
  InvitationStartBody,
  OtpSentEnvelope,
  PageCredentialEnvelope,
  RejectBody,
  RejectedEnvelope,
  SessionIdParam,
  SessionStartedEnvelope,
  SignatureResultEnvelope,
  TaskSessionBody,
  TaskSessionParam,
  TaskSessionStartedEnvelope,
  TokenPrepareBody,
  TokenPreparedEnvelope,
  TokenSignatureBody,
  VerificationEnvelope,
  VerifyParam,
} from './schemas';

/**
 * The handlers' modules load with the first request that needs them: they bring the signing
 * stack (ASN.1 and CMS libraries, PDF signing), which would otherwise cost every start memory.
 */
const initiateModule = () => import('./initiate');
const invitationModule = () => import('./invitation');
const stepsModule = () => import('./steps');
const verifyModule = () => import('./verify');

/** The steps also take the signing page's credential (from the link exchange). */
const stepSecurity: Record<string, string[]>[] = [
  ...contractSecurity,
  ...integrationSecurity.filter((scheme) => !('ApiKey' in scheme)),
  { SigningPage: [] },
];

/** A task's signer: the web app's Bearer token, a partner token, or a key bound to them. */
const taskSigningSecurity: Record<string, string[]>[] = [
  ...contractSecurity,
  ...integrationSecurity.filter((scheme) => !('ApiKey' in scheme)),
];

/** What every step answers before its own work: the session, its contract, its state. */
const sessionStateErrors = [
  'SESSION_NOT_FOUND',
  'CONTRACT_CANCELLED',
  'CONTRACT_EXPIRED',
  'CONTRACT_COMPLETED',
  'CONTRACT_REJECTED',
  'SESSION_ALREADY_USED',
  'SESSION_SUPERSEDED',
  'SESSION_LOCKED',
  'SIGNING_METHOD_MISMATCH',
  'SESSION_EXPIRED',
] as const;

/** What the engine's finalize refuses a token signature with (docs/signing-with-a-token.md). */
const tokenRefusals = [
  'INVALID_BASE64',
  'SIGNATURE_MALFORMED',
  'CERTIFICATE_MALFORMED',
  'TIMESTAMP_TOKEN_MALFORMED',
  'SIGNED_DATA_MALFORMED',
  'PREPARATION_NOT_OPEN',
  'DOCUMENT_CHANGED',
  'PREPARATION_STALE',
  'PREPARATION_EXPIRED',
  'SIGNATURE_INVALID',
  'SIGNER_CERTIFICATE_NOT_FIRST',
  'DOCUMENT_DIGEST_MISMATCH',
  'SIGNING_CERTIFICATE_MISMATCH',
  'SIGNED_ATTRIBUTES_ABSENT',
  'SIGNED_ATTRIBUTES_WRONG_TAG',
  'SIGNED_ATTRIBUTES_UNSORTED',
  'SIGNED_ATTRIBUTES_MISSING',
  'SIGNED_ATTRIBUTES_EXTRA',
  'SIGNATURE_HASH_MISMATCH',
  'SIGNED_ATTRIBUTES_MISMATCH',
  'SIGNER_IDENTITY_MISMATCH',
  'CERTIFICATE_NOT_PREPARED',
  'CERTIFICATE_NAME_NOT_PREPARED',
  'SIGNATURE_SCHEME_MISMATCH',
  'CERTIFICATE_CHAIN_EMPTY',
  'CERTIFICATE_CHAIN_INVALID',
  'CERTIFICATE_INVALID',
  'CERTIFICATE_EXPIRED',
  'CERTIFICATE_NOT_YET_VALID',
  'CERTIFICATE_KEY_USAGE',
  'CERTIFICATE_KEY_UNSUPPORTED',
  'CERTIFICATE_UNTRUSTED',
  'CERTIFICATE_REVOKED',
  'TIMESTAMP_INVALID',
  'TIMESTAMP_IMPRINT_MISMATCH',
  'PDF_SIGNATURE_TOO_LARGE',
] as const;

/** The picture and the body it comes in: 512 KB decoded is about 700 KB of base64. */
const confirmBodyLimit = 800 * 1024;

/**
 * The signing-session endpoints, mounted under /api by app.ts. The steps take either a partner
 * credential holding `signing:initiate` whose scope holds the contract, or the page credential
 * of this very session (X-Signing-Token).
 */
export function sessionRoutes(limiter: RateLimiter) {
  const router = createRouter();
  const partner = [
    authenticate(credentialAreas.contracts),
    rateLimit(limiter, 'api'),
    requirePermission('signing:initiate'),
  ];
  const page = [rateLimit(limiter, 'api'), requirePageCredential];
  // A task's signer holds no contract permission: stepContext checks the session is theirs.
  const taskSigner = [authenticate(credentialAreas.taskSigning), rateLimit(limiter, 'api')];
  const stepGuard: MiddlewareHandler<AppEnv> = async (c, next) => {
    const chain =
      c.req.header(pageCredentialHeader) !== undefined
        ? page
        : (await isTaskSession(c.get('deps').db, c.req.param('sessionId')))
          ? taskSigner
          : partner;
    const run = async (index: number): Promise<void> => {
      const middleware = chain[index];
      if (!middleware) {
        await next();
        return;
      }
      await middleware(c, () => run(index + 1));
    };
    await run(0);
  };
  const step = { tags: ['Signing sessions'], security: stepSecurity, middleware: [stepGuard] };

  const taskInitiate = createRoute({
    tags: ['Signing sessions'],
    security: taskSigningSecurity,
    middleware: taskSigner,
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
    middleware: partner,
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
        ...Object.values(contractStateCodes),
        'SIGNER_IS_VIEWER',
        'SIGNER_ALREADY_SIGNED',
        'NOT_SIGNER_TURN',
        'SIGNER_KEY_NOT_ENROLLED',
        'SIGNER_IDENTITY_MISMATCH',
      ]),
    },
  });
  router.openapi(initiate, async (c) => {
    const { initiateSession } = await initiateModule();
    const data = await initiateSession(c.get('deps'), await callerOf(c), c.req.valid('json'));
    return c.json(envelopeOf(c, data), 200);
  });

  const exchange = createRoute({
    tags: ['Signing sessions'],
    security: [],
    middleware: [rateLimit(limiter, 'auth'), limitBody(4 * 1024)],
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

  const invitationErrors = [
    'INVITATION_NOT_FOUND',
    'INVITATION_EXPIRED',
    'PAYLOAD_TOO_LARGE',
    'RATE_LIMITED',
  ] as const;
  const readInvitationRoute = createRoute({
    tags: ['Signing sessions'],
    security: [],
    middleware: [rateLimit(limiter, 'auth'), limitBody(4 * 1024)],
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
    tags: ['Signing sessions'],
    security: [],
    middleware: [rateLimit(limiter, 'auth'), limitBody(4 * 1024)],
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
      ...errorResponses(jsonBodyErrors, invitationErrors, pdfPreparationErrors, [
        ...Object.values(contractStateCodes),
        'SIGNER_IS_VIEWER',
        'SIGNER_ALREADY_SIGNED',
        'NOT_SIGNER_TURN',
        'SIGNER_KEY_NOT_ENROLLED',
        'SIGNER_IDENTITY_MISMATCH',
      ]),
    },
  });
  router.openapi(startInvitationRoute, async (c) => {
    const { startInvitationSession } = await invitationModule();
    const data = await startInvitationSession(c.get('deps'), c.req.valid('json'), originOf(c));
    return c.json(envelopeOf(c, data), 200);
  });

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
    middleware: [stepGuard, limitBody(confirmBodyLimit)],
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

  const tokenRoute = createRoute({
    ...step,
    middleware: [stepGuard, limitBody(256 * 1024)],
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
    middleware: [stepGuard, limitBody(64 * 1024)],
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

  const verify = createRoute({
    tags: ['Signing sessions'],
    security: contractSecurity,
    middleware: [
      authenticate(credentialAreas.contracts),
      rateLimit(limiter, 'api'),
      requireAnyPermission(['contract:view', 'contract:view-all', 'signing:initiate']),
    ],
    method: 'get',
    path: '/signing/verify/{contractId}',
    operationId: 'verifyContractSignatures',
    summary: 'Verify the signatures of the newest signed version',
    description:
      'Every signature of the newest signed version, checked by the verification engine (integrity, certificate at the timestamp’s time, timestamp, changes after signing), named by the contract signer who made it. 404 CONTRACT_NOT_SIGNED before the first signature.',
    request: { params: VerifyParam },
    responses: {
      200: jsonContent(VerificationEnvelope, 'The verification result'),
      ...errorResponses(guardErrors, pdfReadErrors, ['CONTRACT_NOT_FOUND', 'CONTRACT_NOT_SIGNED']),
    },
  });
  router.openapi(verify, async (c) => {
    const { contractId } = c.req.valid('param');
    const { verifyContract } = await verifyModule();
    const data = await verifyContract(c.get('deps'), await callerOf(c), contractId);
    return c.json(envelopeOf(c, data), 200);
  });

  return router;
}

/**
 * GET /.well-known/esign-agent-keys.json (mounted at the root by app.ts): the public keys of the
 * desktop agent's signing tickets, which agents fetch once per server and pin.
 */
export function agentKeyRoutes(limiter: RateLimiter) {
  const router = createRouter();
  const keys = createRoute({
    tags: ['Signing sessions'],
    security: [],
    middleware: [rateLimit(limiter, 'api')] as const,
    method: 'get',
    path: AGENT_TICKET_KEYS_PATH,
    operationId: 'agentTicketKeys',
    summary: 'The public keys of the desktop agent’s signing tickets (JWKS)',
    description:
      'ES256 keys: the one signing tickets now and the next one (AGENT_TICKET_KEY_GENERATION + 1), so that agents which pinned this set on first use keep accepting tickets across one rotation.',
    responses: {
      200: jsonContent(AgentTicketKeySet, 'The key set'),
      ...errorResponses(['RATE_LIMITED']),
    },
  });
  router.openapi(keys, (c) => {
    c.header('Cache-Control', 'public, max-age=300');
    c.header('Access-Control-Allow-Origin', '*');
    return c.json(agentTicketKeySet(c.get('deps')), 200);
  });
  return router;
}
