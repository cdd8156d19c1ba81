import { type Locale, messagesOf } from '@esign/shared/messages';
import { type ContractSignerRow, placementOf } from '../contracts/queries';
import { formatInstant } from '../notify';
import type { PageBox, SignatureRect } from '../pdf/signing';
import { sessionErrors } from './errors';
import type { SessionRow } from './queries';

/** How long a session, its signing link and its page credential live. */
export const sessionLifetimeMs = 30 * 60_000;
export const otpLifetimeMs = 5 * 60_000;
export const otpResendMs = 60_000;
/**
 * How long after a usb_token revision's /M its timestamp may come: room for the signer's
 * consent and PIN, not for a revision prepared at initiate and signed half an hour later.
 */
export const tokenSigningTimeLagMs = 5 * 60_000;
/** The largest signature picture accepted, decoded. */
export const maxImageBytes = 512 * 1024;
/** The fifth wrong code locks the session. */
export const otpMaxFailures = 5;

/** The earliest order still waiting below the signer's own, or null when it is their turn. */
export function blockingOrder(
  signers: readonly ContractSignerRow[],
  signer: ContractSignerRow,
): number | null {
  const waiting = signers
    .filter(
      (s) => s.role === 'signer' && s.status !== 'signed' && s.signing_order < signer.signing_order,
    )
    .map((s) => s.signing_order);
  return waiting.length === 0 ? null : Math.min(...waiting);
}

/** The session can still take a step: open (409 by cause otherwise) and not expired (410). */
export function assertSessionOpen(session: SessionRow, now: Date): void {
  if (session.state === 'superseded') throw sessionErrors.superseded();
  if (session.state === 'locked') throw sessionErrors.locked();
  if (session.state !== 'open') throw sessionErrors.used(session.state);
  if (session.expires_at <= now.toISOString()) throw sessionErrors.expired(session.expires_at);
}

/** `0912345678` → `09******78`: enough for the signer to recognise the number. */
export function maskPhone(phone: string): string {
  const digits = phone.replace(/^\+/, '');
  const prefix = phone.startsWith('+') ? '+' : '';
  if (digits.length <= 4) return `${prefix}${'*'.repeat(digits.length)}`;
  return `${prefix}${digits.slice(0, 2)}${'*'.repeat(digits.length - 4)}${digits.slice(-2)}`;
}

/** `binh@partner.example` → `b***@partner.example`. */
export function maskEmail(email: string): string {
  const at = email.lastIndexOf('@');
  return `${email.slice(0, 1)}***${email.slice(at)}`;
}

/** The default boxes: 170×60 pt, three a row from the bottom-left margin upwards. */
const defaultBox = { width: 170, height: 60, margin: 36, gap: 10, perRow: 3 };

/**
 * Where the signer's visible signature goes: their placement from contract creation, else a
 * default box at the bottom of the last page, one per signer in the order of the signers list
 * (so parallel signers never share a box). Boxes are kept inside the page.
 */
export function signatureBox(
  signers: readonly ContractSignerRow[],
  signer: ContractSignerRow,
  lastPage: PageBox,
): { page: number; rect: SignatureRect } {
  const [x0, y0, x1, y1] = lastPage.mediaBox;
  const placement = placementOf(signer);
  if (placement) {
    const page = Math.min(placement.page ?? lastPage.page, lastPage.pageCount);
    const x = Math.min(x0 + placement.x, x1 - placement.width);
    const y = Math.min(y0 + placement.y, y1 - placement.height);
    return { page, rect: [x, y, x + placement.width, y + placement.height] };
  }
  const index = signers.filter((s) => s.role === 'signer').findIndex((s) => s.id === signer.id);
  return defaultSignatureBox(index, lastPage);
}

/** The `index`-th default box (from 0) at the bottom of the last page, kept inside the page. */
export function defaultSignatureBox(
  index: number,
  lastPage: PageBox,
): { page: number; rect: SignatureRect } {
  const [x0, y0, x1, y1] = lastPage.mediaBox;
  const column = Math.max(0, index) % defaultBox.perRow;
  const row = Math.floor(Math.max(0, index) / defaultBox.perRow);
  const width = Math.min(defaultBox.width, (x1 - x0 - 2 * defaultBox.margin) / defaultBox.perRow);
  const x = x0 + defaultBox.margin + column * (width + defaultBox.gap);
  const y = Math.min(
    y0 + defaultBox.margin + row * (defaultBox.height + defaultBox.gap),
    y1 - defaultBox.height,
  );
  return { page: lastPage.page, rect: [x, y, x + width, y + defaultBox.height] };
}

/** The text of every visible signature: who and when, in Vietnam time, in the service's language. */
export function appearanceLines(name: string, at: Date, locale: Locale): string[] {
  return [messagesOf(locale).pdf.signedBy(name, formatInstant(at.toISOString(), locale))];
}
