import { trailLanguages } from '../audit/render';
import { contractTrail } from '../audit/subject';
import { sealedTrailPdf } from '../audit/trailPdf';
import type { AppDeps } from '../context';
import { type ContractRow, fileVersion } from './queries';

/**
 * Renders the contract's audit trail (every event so far, with the chain's head hash) and seals
 * it (audit/trailPdf.ts). Returns the path of a temp file the caller streams and removes.
 */
export async function auditPdf(deps: AppDeps, contract: ContractRow): Promise<string> {
  const original = await fileVersion(deps.db, contract.id, 'original');
  const [primary, secondary] = trailLanguages(deps.config.notify.locale);
  return sealedTrailPdf(deps, {
    subject: contractTrail(contract.id),
    tenantId: contract.tenant_id,
    uuid: contract.uuid,
    title: primary.contractTrail.title(contract.title),
    documentName: contract.source_name,
    documentHash: `sha256:${original?.sha256 ?? ''} · chain head ${contract.audit_head}`,
    reason: `${primary.contractTrail.reason} / ${secondary.contractTrail.reason}`,
  });
}
