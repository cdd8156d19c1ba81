import { createRoute, z } from '@hono/zod-openapi';
import { originOf } from '../audit/origin';
import { credentialAreas, integrationSecurity } from '../auth/areas';
import { authenticate } from '../auth/authenticate';
import { type RateLimiter, rateLimit } from '../auth/rateLimit';
import { fileNotFound, fileResponse } from '../files/download';
import { presignedUrlCodes, verifyPresigned } from '../files/presign';
import { fileByUuid } from '../files/queries';
import { createRouter, errorResponses, guardErrors } from '../http/openapi';
import { downloadFileInScope, presignedUrlActor, recordFileDownload } from './downloads';
import { requirePermissionOrSigner } from './scope';

const FileUuidParam = z.object({
  fileUuid: z
    .string()
    .openapi({ param: { name: 'fileUuid', in: 'path' }, description: 'fileUuid of a file item' }),
});

const PresignedQuery = z.object({
  expires: z.string().optional().openapi({ description: 'Expiry, Unix seconds' }),
  signature: z.string().optional().openapi({ description: 'HMAC-SHA256, hex' }),
});

const fileBytes = {
  description:
    'The newest version of the file, streamed, with Content-Type, Content-Disposition (attachment), Content-Length and Cache-Control: private, no-store',
  content: { 'application/pdf': { schema: z.string().openapi({ format: 'binary' }) } },
};

/** Endpoint 5 (under /api/integration) and the presigned file URL (under /api), mounted at /api. */
export function fileRoutes(limiter: RateLimiter) {
  const router = createRouter();

  const download = createRoute({
    method: 'get',
    path: '/integration/files/{fileUuid}/download',
    operationId: 'downloadFile',
    tags: ['Dossiers'],
    summary: 'Download the newest version of a file (5)',
    description:
      'Streams the content directly, no redirect; works in any dossier state. A file unknown or of another organization gives 404 FILE_NOT_FOUND.',
    security: integrationSecurity,
    middleware: [
      authenticate(credentialAreas.integration),
      rateLimit(limiter, 'api'),
      requirePermissionOrSigner('document:view'),
    ],
    request: { params: FileUuidParam },
    responses: {
      200: fileBytes,
      ...errorResponses(guardErrors, ['FILE_NOT_FOUND']),
    },
  });
  router.openapi(download, async (c) => {
    const { fileUuid } = c.req.valid('param');
    return downloadFileInScope(
      c.get('deps'),
      c.get('principal'),
      { fileUuid },
      { origin: originOf(c), via: 'api' },
    );
  });

  const presigned = createRoute({
    method: 'get',
    path: '/files/{fileUuid}',
    operationId: 'downloadPresignedFile',
    tags: ['Dossiers'],
    summary: 'Presigned file URL (the `url` of file items)',
    description:
      'No credential: the signature is one. 403 PRESIGNED_URL_INVALID for a missing or wrong signature, 410 PRESIGNED_URL_EXPIRED after 24 hours.',
    // The signature in the query is the credential.
    security: [],
    middleware: [rateLimit(limiter, 'api')],
    request: { params: FileUuidParam, query: PresignedQuery },
    responses: {
      200: fileBytes,
      ...errorResponses([
        presignedUrlCodes.invalid,
        'FILE_NOT_FOUND',
        presignedUrlCodes.expired,
        'RATE_LIMITED',
      ]),
    },
  });
  router.openapi(presigned, async (c) => {
    const deps = c.get('deps');
    const { fileUuid } = c.req.valid('param');
    const { expires, signature } = c.req.valid('query');
    verifyPresigned(deps, fileUuid, expires, signature);
    const file = await fileByUuid(deps.db, fileUuid);
    if (!file) throw fileNotFound(fileUuid);
    await recordFileDownload(deps, file, {
      actor: presignedUrlActor,
      origin: originOf(c),
      via: 'presigned_url',
    });
    return fileResponse(deps, file, { redirect: true });
  });

  return router;
}
