import fs from 'node:fs/promises';
import path from 'node:path';
import { messagesOf } from '@esign/shared/messages';
import type { AppDeps } from '../context';
import { auditEventsOf } from './queries';
import { renderedEvent } from './render';
import type { AuditSubject } from './subject';

/** What the first lines of an audit PDF say about its subject. */
export interface TrailHeading {
  /** Whose trail: every event of it is drawn. */
  subject: AuditSubject;
  /** The tenant whose seal signs the PDF. */
  tenantId: number;
  /** Unique in the temp folder while the PDF is made (the subject's uuid). */
  uuid: string;
  title: string;
  documentName: string;
  /** The document's hash and the chain's head, as the reader should compare them. */
  documentHash: string;
  /** The seal's reason. */
  reason: string;
}

/**
 * Renders a trail (every event so far) and seals it with the service seal (B-LT when its CA
 * answers OCSP or CRL, else B-T). Returns the path of a temp file the caller streams and
 * removes; each download is rendered afresh because each download is itself an event.
 */
export async function sealedTrailPdf(deps: AppDeps, heading: TrailHeading): Promise<string> {
  const events = await auditEventsOf(deps.db, heading.subject);
  // Loaded on first use: the renderer (pdf-lib) and the signing stack stay out of start-up.
  const [{ renderAuditTrail }, { sealPdf }, { sealKey }] = await Promise.all([
    import('../pdf/auditTrail'),
    import('../signing/finalize'),
    import('../keys/signingKeys'),
  ]);
  await deps.files.init();
  const rendered = path.join(deps.files.tempDir, `audit-${heading.uuid}-${Date.now()}.pdf`);
  const locale = deps.config.notify.locale;
  try {
    await renderAuditTrail(
      {
        title: heading.title,
        documentName: heading.documentName,
        documentHash: heading.documentHash,
        events: events.map((event) => renderedEvent(heading.subject.kind, event, locale)),
        generatedAt: deps.clock.now(),
        locale,
        labels: { vi: messagesOf('vi').pdf.auditTrail, en: messagesOf('en').pdf.auditTrail },
      },
      rendered,
    );
    return await sealPdf(deps, await sealKey(deps), rendered, {
      tenantId: heading.tenantId,
      reason: heading.reason,
    });
  } finally {
    await fs.rm(rendered, { force: true });
  }
}
