import { type Locale, type Messages, messagesOf } from '@esign/shared/messages';
import type { AuditTrailEvent } from '../pdf/auditTrail/types';
import { type AuditEventRow, auditDetailsOf } from './queries';
import type { AuditAction, AuditSubject } from './subject';

type PdfWords = Messages['pdf'];

/**
 * The audit PDF's words in the service's language, then in the other: its labels carry both (the
 * primary above or first), so a reader of either language reads it.
 */
export function trailLanguages(locale: Locale): [PdfWords, PdfWords] {
  return [messagesOf(locale).pdf, messagesOf(locale === 'vi' ? 'en' : 'vi').pdf];
}

/** Every action has words; a dossier's differ where `dossierActions` says. */
function actionWords(kind: AuditSubject['kind'], words: PdfWords): Partial<Record<string, string>> {
  const actions: Record<AuditAction, string> = words.auditActions;
  return kind === 'dossier' ? { ...actions, ...words.dossierActions } : actions;
}

/** `primary / secondary`, e.g. `Tạo hợp đồng / Created`; an unknown action as it is. */
function labelOf(kind: AuditSubject['kind'], action: string, locale: Locale): string {
  const [primary, secondary] = trailLanguages(locale).map(
    (words) => actionWords(kind, words)[action],
  );
  return primary === undefined || secondary === undefined ? action : `${primary} / ${secondary}`;
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
export function renderedEvent(
  kind: AuditSubject['kind'],
  event: AuditEventRow,
  locale: Locale,
): AuditTrailEvent {
  const details = detailsOf(event);
  return {
    at: new Date(event.at),
    actor: event.actor_name,
    action: labelOf(kind, event.action, locale),
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
