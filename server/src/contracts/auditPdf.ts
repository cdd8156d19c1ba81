import type { AppDeps } from '../context';
import { ApiError } from '../errors/apiError';
import type { ContractRow } from './queries';

/** The audit-trail PDF of a contract, sealed and kept in the FileStore. */
export interface AuditPdf {
  sha256: string;
  mimeType: 'application/pdf';
}

/**
 * Renders the contract's audit trail as a sealed PDF (`download?type=audit`). The renderer
 * (`server/src/pdf/audit/`) is being built on another branch; until it is wired here this
 * answers 503 AUDIT_PDF_NOT_READY, a clear refusal instead of a wrong document.
 */
export async function auditPdf(_deps: AppDeps, _contract: ContractRow): Promise<AuditPdf> {
  throw new ApiError(
    503,
    'AUDIT_PDF_NOT_READY',
    'The audit-trail PDF is not available in this build yet; GET /api/contracts/{id} shows the trail',
  );
}
