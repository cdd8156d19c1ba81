import { trailLanguages } from '../audit/render';
import { dossierTrail } from '../audit/subject';
import { sealedTrailPdf } from '../audit/trailPdf';
import type { AppDeps } from '../context';
import { dossierFiles } from '../files/queries';
import type { DossierRow } from './queries';

/**
 * Renders the dossier's audit trail (every event so far) and seals it (audit/trailPdf.ts): its
 * heading names the dossier and the newest version of each signed (MAIN) file with its SHA-256,
 * and the chain's head. Returns the path of a temp file the caller streams and removes.
 */
export async function dossierAuditPdf(deps: AppDeps, dossier: DossierRow): Promise<string> {
  const mains = (await dossierFiles(deps.db, dossier.id)).filter((file) => file.kind === 'MAIN');
  const hashes = mains.map((file) => `sha256:${file.sha256}`).join(' · ');
  const head = `chain head ${dossier.audit_head}`;
  const [primary, secondary] = trailLanguages(deps.config.notify.locale);
  return sealedTrailPdf(deps, {
    subject: dossierTrail(dossier.id),
    tenantId: dossier.tenant_id,
    uuid: dossier.uuid,
    title: primary.dossierTrail.title(dossier.title),
    // The renderer holds 1,000 characters of name.
    documentName: (
      [dossier.document_id, ...mains.map((file) => file.title)]
        .filter((part): part is string => part !== null && part !== '')
        .join(' · ') || dossier.title
    ).slice(0, 1000),
    // The heading holds 300 characters: the head first, then as many file hashes as fit.
    documentHash: `${head} · ${hashes}`.slice(0, 300),
    reason: `${primary.dossierTrail.reason} / ${secondary.dossierTrail.reason}`,
  });
}
