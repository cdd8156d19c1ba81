import { createRoute } from '@hono/zod-openapi';
import { originOf } from '../audit/origin';
import { credentialAreas, integrationSecurity } from '../auth/areas';
import { authenticate } from '../auth/authenticate';
import { requirePermission } from '../auth/permissions';
import { type RateLimiter, rateLimit } from '../auth/rateLimit';
import { limitBody } from '../http/bodyLimit';
import {
  createRouter,
  envelopeOf,
  errorResponses,
  guardErrors,
  jsonBodyErrors,
  jsonContent,
} from '../http/openapi';
import { fileUrlCodes } from '../outbound/downloadPdf';
import { pdfInspectionCodes } from '../pdf/inspection';
import { pdfReadErrors } from '../pdf/signing/errors';
import type { Permission } from '../tenancy/permissionCatalog';
import {
  creationLimits,
  DocumentIdParam,
  DossierCreateBody,
  DossierCreatedEnvelope,
  DossierFileListEnvelope,
  DossierLookupEnvelope,
  DossierStartedEnvelope,
} from './schemas';
import { requirePermissionOrSigner } from './scope';
import { createDossier, listDossierFiles, lookupDossier, startDossier } from './service';

/** Dossier endpoints 1–4, mounted under /api/integration by app.ts. */
export function dossierRoutes(limiter: RateLimiter) {
  const router = createRouter();

  /** Writes need the permission; reads also let outside signers reach their own dossiers. */
  const guarded = (permission: Permission, readable = false) => ({
    tags: ['Dossiers'],
    security: integrationSecurity,
    middleware: [
      authenticate(credentialAreas.integration),
      rateLimit(limiter, 'api'),
      readable ? requirePermissionOrSigner(permission) : requirePermission(permission),
    ],
  });
  const creationGuard = guarded('document:create');

  const create = createRoute({
    ...creationGuard,
    // The body (templateData and metadata included) is refused with 413 before it is read.
    middleware: [...creationGuard.middleware, limitBody(creationLimits.bodyBytes)],
    method: 'post',
    path: '/documents',
    operationId: 'createDossier',
    summary: 'Create a signing dossier (1)',
    description:
      'Atomic: files are fetched (SSRF-safe) or rendered first, then everything is written at once; any failure leaves nothing behind. A fetched file is read like a contract upload: 422 PDF_UNREADABLE, PDF_TOO_COMPLEX, PDF_ENCRYPTED, PDF_ACTIVE_CONTENT name its `files.N.fileUrl`. fileUrl failures: see docs/file-url-errors.md.',
    request: {
      body: { required: true, content: { 'application/json': { schema: DossierCreateBody } } },
    },
    responses: {
      201: jsonContent(DossierCreatedEnvelope, 'HTTP 201 with body statusCode 200'),
      ...errorResponses(guardErrors, jsonBodyErrors, pdfReadErrors, [
        'SIGNER_REQUIRED',
        'STEP_CODE_NOT_FOUND',
        'USERNAME_NOT_FOUND',
        'USER_LOCKED',
        'TEMPLATE_NOT_FOUND',
        'TEMPLATE_FIELD_UNKNOWN',
        'TEMPLATE_DATA_INVALID',
        fileUrlCodes.invalid,
        fileUrlCodes.forbiddenAddress,
        'PROCESS_NOT_FOUND',
        'DUPLICATE_DOCUMENT_ID',
        'SIGNER_ACCOUNT_CONFLICT',
        'PAYLOAD_TOO_LARGE',
        fileUrlCodes.tooLarge,
        fileUrlCodes.notPdf,
        'MISSING_ECM_CLASS_CODE',
        'PROCESS_HAS_NO_STEPS',
        pdfInspectionCodes.activeContent,
        fileUrlCodes.redirect,
        fileUrlCodes.httpStatus,
        fileUrlCodes.timeout,
        fileUrlCodes.tls,
        fileUrlCodes.unreachable,
      ]),
    },
  });
  router.openapi(create, async (c) => {
    const data = await createDossier(
      c.get('deps'),
      c.get('principal'),
      c.req.valid('json'),
      originOf(c),
    );
    return c.json(envelopeOf(c, data), 201);
  });

  const start = createRoute({
    ...guarded('document:start'),
    method: 'post',
    path: '/documents/{documentId}/start',
    operationId: 'startDossier',
    summary: 'Start a dossier created with disableStart (2)',
    description:
      'PENDING → PENDING_SIGN and the first task. 404 unknown documentId; 400 DOSSIER_NOT_PENDING when the dossier is not PENDING (also a second call).',
    request: { params: DocumentIdParam },
    responses: {
      200: jsonContent(DossierStartedEnvelope, 'The dossier, now PENDING_SIGN'),
      ...errorResponses(guardErrors, ['DOSSIER_NOT_PENDING', 'DOCUMENT_NOT_FOUND']),
    },
  });
  router.openapi(start, async (c) => {
    const { documentId } = c.req.valid('param');
    const data = await startDossier(c.get('deps'), c.get('principal'), documentId, originOf(c));
    return c.json(envelopeOf(c, data), 200);
  });

  const lookup = createRoute({
    ...guarded('document:view', true),
    method: 'get',
    path: '/documents/{documentId}',
    operationId: 'getDossierByDocumentId',
    summary: 'Look up a dossier (3)',
    request: { params: DocumentIdParam },
    responses: {
      200: jsonContent(DossierLookupEnvelope, 'The dossier with files and signers'),
      ...errorResponses(guardErrors, ['DOCUMENT_NOT_FOUND']),
    },
  });
  router.openapi(lookup, async (c) => {
    const { documentId } = c.req.valid('param');
    const data = await lookupDossier(c.get('deps'), c.get('principal'), documentId);
    return c.json(envelopeOf(c, data), 200);
  });

  const files = createRoute({
    ...guarded('document:view', true),
    method: 'get',
    path: '/documents/{documentId}/files',
    operationId: 'listDossierFiles',
    summary: 'List the files of a dossier (4)',
    request: { params: DocumentIdParam },
    responses: {
      200: jsonContent(DossierFileListEnvelope, 'MAIN files and attachments'),
      ...errorResponses(guardErrors, ['DOCUMENT_NOT_FOUND']),
    },
  });
  router.openapi(files, async (c) => {
    const { documentId } = c.req.valid('param');
    const data = await listDossierFiles(c.get('deps'), c.get('principal'), documentId);
    return c.json(envelopeOf(c, data), 200);
  });

  return router;
}
