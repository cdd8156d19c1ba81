import fs from 'node:fs/promises';
import path from 'node:path';
import { auditEventsOf } from '../audit/queries';
import { renderedEvent } from '../audit/render';
import { contractTrail } from '../audit/subject';
import type { AppDeps } from '../context';
import { type ContractRow, fileVersion } from './queries';

/**
 * Renders the contract's audit trail (every event so far, with the chain's head hash) and seals
 * it with the service seal (B-LT when its CA answers OCSP or CRL, else B-T). Returns the path
 * of a temp file the caller streams and removes; each download is rendered afresh because each
 * download is itself an event.
 */
export async function auditPdf(deps: AppDeps, contract: ContractRow): Promise<string> {
  const [events, original] = await Promise.all([
    auditEventsOf(deps.db, contractTrail(contract.id)),
    fileVersion(deps.db, contract.id, 'original'),
  ]);
  // Loaded on first use: the renderer (pdf-lib) and the signing stack stay out of start-up.
  const [{ renderAuditTrail }, { sealPdf }] = await Promise.all([
    import('../pdf/auditTrail'),
    import('../signing/finalize'),
  ]);
  await deps.files.init();
  const rendered = path.join(deps.files.tempDir, `audit-${contract.uuid}-${Date.now()}.pdf`);
  try {
    await renderAuditTrail(
      {
        title: `Nhật ký ký số: ${contract.title}`,
        documentName: contract.source_name,
        documentHash: `sha256:${original?.sha256 ?? ''} · chain head ${contract.audit_head}`,
        events: events.map((event) => renderedEvent('contract', event)),
        generatedAt: deps.clock.now(),
      },
      rendered,
    );
    return await sealPdf(deps, rendered, {
      tenantId: contract.tenant_id,
      reason: 'Nhật ký ký số / Audit trail',
    });
  } finally {
    await fs.rm(rendered, { force: true });
  }
}
