import fs from 'node:fs/promises';
import path from 'node:path';
import type { AppDeps } from '../context';
import type { AuditTrailEvent } from '../pdf/auditTrail/types';
import type { AuditAction } from './audit';
import {
  auditEventsOf,
  type ContractAuditEventRow,
  type ContractRow,
  fileVersion,
} from './queries';

/** Vietnamese first, English beneath: the audit PDF's readers are Vietnamese. */
const actionLabels: Record<AuditAction, string> = {
  created: 'Tạo hợp đồng / Created',
  sent: 'Gửi ký / Sent for signing',
  viewed: 'Xem / Viewed',
  downloaded: 'Tải xuống / Downloaded',
  cancelled: 'Huỷ / Cancelled',
  expired: 'Hết hạn / Expired',
  session_initiated: 'Bắt đầu phiên ký / Signing session started',
  otp_sent: 'Gửi OTP / OTP sent',
  otp_failed: 'OTP sai / Wrong OTP',
  signed: 'Đã ký / Signed',
  rejected: 'Từ chối / Rejected',
  completed: 'Hoàn tất / Completed',
};

function labelOf(action: string): string {
  return (actionLabels as Record<string, string | undefined>)[action] ?? action;
}

/** The event's facts as "key: value" lines; nested values as compact JSON. */
function detailsOf(event: ContractAuditEventRow): string | undefined {
  const facts = JSON.parse(event.details) as Record<string, unknown>;
  const lines = Object.entries(facts).map(
    ([key, value]) => `${key}: ${typeof value === 'string' ? value : JSON.stringify(value)}`,
  );
  if (event.client_address) lines.push(`IP: ${event.client_address}`);
  return lines.length === 0 ? undefined : lines.join('\n');
}

function trailEvent(event: ContractAuditEventRow): AuditTrailEvent {
  const details = detailsOf(event);
  return {
    at: new Date(event.at),
    actor: event.actor_name,
    action: labelOf(event.action),
    ...(details === undefined ? {} : { details }),
  };
}

/**
 * Renders the contract's audit trail (every event so far, with the chain's head hash) and seals
 * it with the service seal (B-LT when its CA answers OCSP or CRL, else B-T). Returns the path
 * of a temp file the caller streams and removes; each download is rendered afresh because each
 * download is itself an event.
 */
export async function auditPdf(deps: AppDeps, contract: ContractRow): Promise<string> {
  const [events, original] = await Promise.all([
    auditEventsOf(deps.db, contract.id),
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
        events: events.map(trailEvent),
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
