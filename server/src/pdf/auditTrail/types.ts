/** What the audit-trail renderer draws (see ./index). */

export interface AuditTrailEvent {
  at: Date;
  /** Who acted: a name, with an account or e-mail if the caller wants it shown. */
  actor: string;
  action: string;
  details?: string;
}

export interface AuditTrailInput {
  title: string;
  documentName: string;
  /** Shown as given (e.g. a SHA-256 in hex). */
  documentHash: string;
  events: AuditTrailEvent[];
  generatedAt: Date;
  /** `vi` (default): Vietnamese labels, English beneath; `en`: the other way round. */
  locale?: 'vi' | 'en';
}

export interface RenderedAuditTrail {
  pages: number;
  bytes: number;
}
