import fs from 'node:fs/promises';
import { CodedError } from '@esign/shared';
import type { Hono } from 'hono';
import type { UnofficialStatusCode } from 'hono/utils/http-status';
import { enforceRateLimit, type RateLimiter } from '../../auth/rateLimit';
import type { AppDeps } from '../../context';
import { receiveUpload, tooLarge, uploadLimits } from '../../contracts/upload';
import { bodyRefusalOf, limitBody } from '../../http/bodyLimit';
import { errorAnswer } from '../../http/errorStatuses';
import { clientClosedRequest, isClientAbort } from '../../platform/clientAbort';
import { type PdfVerification, verifyPdfSignatures } from '../../signing/verification';
import { asAppContext, type WebContext, type WebEnv } from '../context';
import { type VerifiedFile, type VerifyProblem, verifyPage } from './verify';

/**
 * `/xac-thuc`: anyone, signed in or not, uploads a signed PDF and reads the verification engine's
 * answer for it (the same call as the API's verify). Nothing of the file is kept: it streams to a
 * temp file that is removed whatever happens, and nothing is written to the database.
 *
 * The page is anyone's, so the body guard comes before everything (a body over the contract
 * upload's limit is refused before it is read), then a per-address limit (the upload class). Its
 * POST changes nothing, so it is mounted before the CSRF guard (web/routes.tsx), which would read
 * the whole multipart body to find a token.
 */
export function verifyPages(app: Hono<WebEnv>, limiter: RateLimiter): void {
  const megabytes = uploadLimits.fileBytes / 1024 / 1024;
  const guardBody = limitBody(uploadLimits.fileBytes + uploadLimits.overheadBytes, tooLarge);

  app.get('/xac-thuc', (c) => verifyPage(c, { megabytes }));

  app.post('/xac-thuc', async (c) => {
    try {
      await guardBody(asAppContext(c), async () => undefined);
      await enforceRateLimit(asAppContext(c), limiter, 'upload');
      const verified = await verifyUpload(c, c.get('deps'));
      if ('problem' in verified) {
        return verifyPage(c, { megabytes, problem: verified.problem, status: verified.status });
      }
      return verifyPage(c, { megabytes, verified });
    } catch (caught) {
      const error = bodyRefusalOf(c) ?? caught;
      if (!(error instanceof CodedError) && isClientAbort(error, c.req.raw)) {
        c.get('logger').info({ reason: (error as Error).message }, 'client aborted the upload');
        return c.body(null, clientClosedRequest as UnofficialStatusCode);
      }
      const answer = error instanceof CodedError ? problemOf(error) : undefined;
      if (!answer) throw error;
      for (const [name, value] of Object.entries(errorAnswer(error as CodedError).headers)) {
        c.header(name, value);
      }
      return verifyPage(c, { megabytes, ...answer });
    }
  });
}

type Answer = { problem: VerifyProblem; status: 400 | 413 | 415 | 422 | 429 | 503 };

/** What the page says for a refusal of the upload or of the file, by the service's code. */
function problemOf(error: CodedError): Answer | undefined {
  switch (error.code) {
    case 'FILE_TOO_LARGE':
    case 'PAYLOAD_TOO_LARGE':
      return {
        problem: { kind: 'tooLarge', megabytes: uploadLimits.fileBytes / 1024 / 1024 },
        status: 413,
      };
    case 'UNSUPPORTED_FILE_TYPE':
    case 'NOT_A_PDF':
      return { problem: { kind: 'notPdf' }, status: 415 };
    case 'UNSUPPORTED_MEDIA_TYPE':
    case 'INVALID_MULTIPART':
      return { problem: { kind: 'malformed' }, status: 400 };
    case 'PDF_UNREADABLE':
    case 'PDF_TOO_COMPLEX':
    case 'PDF_ENCRYPTED':
      return { problem: { kind: 'unreadable' }, status: 422 };
    case 'RATE_LIMITED':
      return {
        problem: {
          kind: 'rateLimited',
          seconds: error.retryAfterSeconds ?? 60,
        },
        status: 429,
      };
    case 'PDF_READER_BUSY':
      return { problem: { kind: 'busy' }, status: 503 };
    default:
      return undefined;
  }
}

/**
 * Receives the one `file` part into a temp file, verifies it with the trust anchors of the
 * viewer's tenant (the global ones for anyone else) and removes the file, whatever happened.
 */
async function verifyUpload(c: WebContext, deps: AppDeps): Promise<VerifiedFile | Answer> {
  const upload = await receiveUpload(c.req.raw, deps.files.tempDir, new Set());
  const file = upload.file;
  if (!file) return { problem: { kind: 'missing' }, status: 400 };
  try {
    if (file.kind !== 'pdf') return { problem: { kind: 'notPdf' }, status: 415 };
    if (file.size === 0) return { problem: { kind: 'missing' }, status: 400 };
    const verification: PdfVerification = await verifyPdfSignatures(deps, file.tempPath, {
      tenantId: c.get('viewer')?.actor.tenantId ?? null,
    });
    return { fileName: file.fileName, checkedAt: deps.clock.now().toISOString(), verification };
  } finally {
    await fs.rm(file.tempPath, { force: true });
  }
}
