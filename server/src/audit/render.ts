import type { AuditTrailEvent } from '../pdf/auditTrail/types';
import { type AuditEventRow, auditDetailsOf } from './queries';
import type { AuditAction, AuditSubject } from './subject';

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
  invitation_resent: 'Gửi lại lời mời ký / Invitation sent again',
};

/** Where a dossier's wording differs from a contract's. */
const dossierLabels: Partial<Record<AuditAction, string>> = {
  created: 'Tạo hồ sơ / Created',
};

function labelOf(kind: AuditSubject['kind'], action: string): string {
  const labels: Partial<Record<string, string>> =
    kind === 'dossier' ? { ...actionLabels, ...dossierLabels } : actionLabels;
  return labels[action] ?? action;
}

/** The event's facts as "key: value" lines; nested values as compact JSON. */
function detailsOf(event: AuditEventRow): string | undefined {
  const facts = auditDetailsOf(event);
  const lines = Object.entries(facts).map(
    ([key, value]) => `${key}: ${typeof value === 'string' ? value : JSON.stringify(value)}`,
  );
  if (event.client_address) lines.push(`IP: ${event.client_address}`);
  return lines.length === 0 ? undefined : lines.join('\n');
}

/** An event as the audit PDF renderer draws it. */
export function renderedEvent(kind: AuditSubject['kind'], event: AuditEventRow): AuditTrailEvent {
  const details = detailsOf(event);
  return {
    at: new Date(event.at),
    actor: event.actor_name,
    action: labelOf(kind, event.action),
    ...(details === undefined ? {} : { details }),
  };
}

/** An event as the API shows it (the contract detail's `auditTrail`). */
export function eventView(event: AuditEventRow) {
  return {
    seq: event.seq,
    action: event.action,
    at: event.at,
    actor: { kind: event.actor_kind, name: event.actor_name },
    clientAddress: event.client_address,
    userAgent: event.user_agent,
    details: auditDetailsOf(event),
    hash: event.hash,
  };
}
