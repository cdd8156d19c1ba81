/** What the audit-trail renderer draws (see ./index). */

export interface AuditTrailEvent {
  at: Date;
  /** Who acted: a name, with an account or e-mail if the caller wants it shown. */
  actor: string;
  action: string;
  details?: string;
}

/** The renderer's words in one language: the caller's catalogue gives them. */
export interface AuditTrailLabels {
  document: string;
  hash: string;
  generatedAt: string;
  /** Said once, after the generation time. */
  timeZone: string;
  /** The table's columns. */
  number: string;
  time: string;
  actor: string;
  action: string;
  details: string;
  noEvents: string;
  /** Marks an event's row continued on the next page. */
  continued: string;
  /** The foot of each page. */
  page: (page: number, total: number) => string;
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
  /** The labels in both languages. */
  labels: Record<'vi' | 'en', AuditTrailLabels>;
}

export interface RenderedAuditTrail {
  pages: number;
  bytes: number;
}
