import { createRoute, z } from '@hono/zod-openapi';
import { contractSecurity, credentialAreas } from '../auth/areas';
import { authenticate } from '../auth/authenticate';
import { requireAnyPermission, requirePermission } from '../auth/permissions';
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
import { pdfReadErrors } from '../pdf/signing';
import type { Permission } from '../tenancy/permissionCatalog';
import { callerOf, contractReaders } from './access';
import { createContract } from './create';
import { documentCodes } from './document';
import { existingSignatureCodes } from './existingSignatures';
import {
  CancelBody,
  ContractCancelledEnvelope,
  ContractCreatedEnvelope,
  ContractDetailEnvelope,
  ContractIdParam,
  ContractListEnvelope,
  ContractListQuery,
  ContractSentEnvelope,
  contractCreateBodySchema,
  DownloadQuery,
} from './schemas';
import {
  cancelContract,
  contractDetail,
  downloadContract,
  listContractPage,
  sendContract,
} from './service';
import { tooLarge, uploadCodes, uploadLimits } from './upload';

const notFound = ['CONTRACT_NOT_FOUND'] as const;

const pdfBytes = {
  description:
    'The PDF, streamed, with Content-Type, Content-Length, Content-Disposition (attachment; filename and filename* UTF-8) and Cache-Control: private, no-store',
  content: { 'application/pdf': { schema: z.string().openapi({ format: 'binary' }) } },
};

/** The contract endpoints, mounted under /api by app.ts. */
export function contractRoutes(limiter: RateLimiter) {
  const router = createRouter();
  const guarded = (
    permission: Permission | Permission[],
    ...extra: ReturnType<typeof rateLimit>[]
  ) => ({
    tags: ['Contracts'],
    security: contractSecurity,
    middleware: [
      authenticate(credentialAreas.contracts),
      rateLimit(limiter, 'api'),
      ...extra,
      Array.isArray(permission) ? requireAnyPermission(permission) : requirePermission(permission),
    ],
  });

  const creationErrors = errorResponses(guardErrors, pdfReadErrors, [
    'VALIDATION_ERROR',
    uploadCodes.badMultipart,
    'CONTRACT_TYPE_NOT_FOUND',
    uploadCodes.tooLarge,
    'UNSUPPORTED_MEDIA_TYPE',
    uploadCodes.unsupportedType,
    documentCodes.notDocx,
    documentCodes.conversionUnavailable,
    documentCodes.activeContent,
    existingSignatureCodes.invalid,
    documentCodes.tooLarge,
    documentCodes.conversionFailed,
    documentCodes.conversionTimeout,
    documentCodes.conversionBusy,
  ]);
  const createGuard = guarded('contract:create', rateLimit(limiter, 'upload'));
  const create = createRoute({
    ...createGuard,
    middleware: [
      ...createGuard.middleware,
      limitBody(uploadLimits.fileBytes + uploadLimits.overheadBytes, tooLarge),
    ],
    method: 'post',
    path: '/contracts',
    operationId: 'createContract',
    summary: 'Create a contract by uploading a file',
    description:
      'multipart/form-data, read as it streams (never buffered whole). A .docx is converted to PDF by LibreOffice. Counts against the upload limit (10 a minute). Atomic: a failure leaves no contract and no stored file.',
    request: {
      // A plain schema, not zod: the route reads the multipart stream itself (a zod form schema
      // would make the framework buffer and parse the whole body first).
      body: {
        required: true,
        content: { 'multipart/form-data': { schema: contractCreateBodySchema } },
      },
    },
    responses: {
      201: jsonContent(ContractCreatedEnvelope, 'HTTP 201 with body statusCode 200'),
      ...creationErrors,
    },
  });
  router.openapi(create, async (c) => {
    const data = await createContract(c.get('deps'), await callerOf(c), c.req.raw);
    return c.json(envelopeOf(c, data), 201);
  });

  const list = createRoute({
    ...guarded(contractReaders),
    method: 'get',
    path: '/contracts',
    operationId: 'listContracts',
    summary: 'List contracts',
    description:
      'contract:view lists the contracts the caller created; contract:view-all every contract of the tenant. Ties in the sort keep creation order.',
    request: { query: ContractListQuery },
    responses: {
      200: jsonContent(ContractListEnvelope, 'One page, with meta'),
      ...errorResponses(guardErrors, ['VALIDATION_ERROR']),
    },
  });
  router.openapi(list, async (c) => {
    const { data, meta } = await listContractPage(
      c.get('deps'),
      await callerOf(c),
      c.req.valid('query'),
    );
    return c.json({ ...envelopeOf(c, data), meta }, 200);
  });

  const detail = createRoute({
    ...guarded(contractReaders),
    method: 'get',
    path: '/contracts/{id}',
    operationId: 'getContract',
    summary: 'A contract with its signers and audit trail',
    description: 'The read is recorded in the audit trail (viewed) and shows in the answer.',
    request: { params: ContractIdParam },
    responses: {
      200: jsonContent(ContractDetailEnvelope, 'The contract'),
      ...errorResponses(guardErrors, notFound),
    },
  });
  router.openapi(detail, async (c) => {
    const { id } = c.req.valid('param');
    const data = await contractDetail(c.get('deps'), await callerOf(c), id);
    return c.json(envelopeOf(c, data), 200);
  });

  const send = createRoute({
    ...guarded('contract:send'),
    method: 'post',
    path: '/contracts/{id}/send',
    operationId: 'sendContract',
    summary: 'Send a draft contract for signing',
    description:
      'draft → signing. The signers of the lowest order (and every viewer) are e-mailed a link to the signing page, valid until expiredAt.',
    request: { params: ContractIdParam },
    responses: {
      200: jsonContent(ContractSentEnvelope, 'The contract, now signing'),
      ...errorResponses(guardErrors, notFound, ['CONTRACT_NOT_DRAFT', 'CONTRACT_DEADLINE_PASSED']),
    },
  });
  router.openapi(send, async (c) => {
    const { id } = c.req.valid('param');
    const data = await sendContract(c.get('deps'), await callerOf(c), id);
    return c.json(envelopeOf(c, data), 200);
  });

  const cancel = createRoute({
    ...guarded('contract:cancel'),
    method: 'delete',
    path: '/contracts/{id}',
    operationId: 'cancelContract',
    summary: 'Cancel a draft or signing contract',
    description:
      'draft or signing → cancelled, with the reason; invited signers are told. completed, rejected, expired and cancelled contracts answer 409.',
    request: {
      params: ContractIdParam,
      body: { required: true, content: { 'application/json': { schema: CancelBody } } },
    },
    responses: {
      200: jsonContent(ContractCancelledEnvelope, 'The contract, now cancelled'),
      ...errorResponses(guardErrors, jsonBodyErrors, notFound, ['CONTRACT_NOT_CANCELLABLE']),
    },
  });
  router.openapi(cancel, async (c) => {
    const { id } = c.req.valid('param');
    const { reason } = c.req.valid('json');
    const data = await cancelContract(c.get('deps'), await callerOf(c), id, reason);
    return c.json(envelopeOf(c, data), 200);
  });

  const download = createRoute({
    ...guarded(contractReaders),
    method: 'get',
    path: '/contracts/{id}/download',
    operationId: 'downloadContract',
    summary: 'Download the original, the signed PDF or the audit-trail PDF',
    description:
      'original: the unsigned PDF (a .docx upload converted); signed: the newest signed version, 404 SIGNED_FILE_NOT_AVAILABLE before the first signature; audit: the audit trail as a PDF. Recorded in the audit trail.',
    request: { params: ContractIdParam, query: DownloadQuery },
    responses: {
      200: pdfBytes,
      // Sealing the audit trail reads the rendered PDF, in the pool like every read.
      ...errorResponses(guardErrors, pdfReadErrors, [
        'VALIDATION_ERROR',
        'CONTRACT_NOT_FOUND',
        'SIGNED_FILE_NOT_AVAILABLE',
        'TIMESTAMP_FAILED',
      ]),
    },
  });
  router.openapi(download, async (c) => {
    const { id } = c.req.valid('param');
    const { type } = c.req.valid('query');
    return downloadContract(c.get('deps'), await callerOf(c), id, type);
  });

  return router;
}
