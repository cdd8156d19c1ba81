import { type Messages, messagesOf } from '@esign/shared/messages';
import type { NotifyLocale } from '../platform/config';
import {
  type NotificationData,
  type NotificationEvent,
  type NotificationStep,
  notificationEvents,
} from '../webhooks/payloads';

/**
 * The notification e-mails the service sends itself, in Vietnamese and English, each with an
 * HTML part and a plain-text part built from the same blocks. Every renderer takes the data of
 * the matching webhook `notification.*` event (spec 01, "notification.* data") plus the one
 * recipient, so one data object feeds both the delegated webhook and the e-mail. Every value is
 * escaped where it enters HTML.
 */

type KindOf<E> = E extends `notification.${infer K}` ? K : never;

/** `task_assigned_internal`, …: the event type without its `notification.` prefix. */
export type NotificationKind = KindOf<NotificationEvent>;

/** The kind of a `notification.*` event type. */
export function notificationKind(event: NotificationEvent): NotificationKind {
  return event.slice('notification.'.length) as NotificationKind;
}

export const notificationKinds: readonly NotificationKind[] =
  notificationEvents.map(notificationKind);

export type NotificationRecipient = NotificationData['recipients'][number];

/** `{userName, password: null}` (an existing account) or `{userName, password}` (a new one). */
export type NotificationCredentials = NonNullable<NotificationRecipient['credentials']>;

export type { NotificationData, NotificationEvent, NotificationStep };

export interface MessageOptions {
  locale: NotifyLocale;
  /** Shown in subjects and the signature (config.serviceName). */
  serviceName: string;
}

export interface RenderedMail {
  subject: string;
  text: string;
  html: string;
  /** Holds a password: stored encrypted, erased once sent, never shown by the CLI. */
  sensitive: boolean;
}

/** What a message is made of; each block has one text and one HTML form. */
type Block =
  | { kind: 'paragraph'; text: string }
  | { kind: 'facts'; rows: [label: string, value: string | null][] }
  | { kind: 'link'; label: string; url: string }
  | { kind: 'notice'; text: string };

export function escapeHtml(value: string): string {
  return value
    .replaceAll('&', '&amp;')
    .replaceAll('<', '&lt;')
    .replaceAll('>', '&gt;')
    .replaceAll('"', '&quot;')
    .replaceAll("'", '&#39;');
}

/** Only http(s) links become anchors; anything else is shown as text. */
function isWebUrl(url: string): boolean {
  try {
    const { protocol } = new URL(url);
    return protocol === 'https:' || protocol === 'http:';
  } catch {
    return false;
  }
}

/**
 * An ISO 8601 instant in Vietnam time (UTC+7 all year), `25/11/2026 15:00 (GMT+7)`; a value that
 * is not a date is shown as it came.
 */
export function formatInstant(iso: string, locale: NotifyLocale): string {
  const at = new Date(iso);
  if (Number.isNaN(at.getTime())) return iso;
  const local = new Date(at.getTime() + 7 * 3600_000);
  const two = (n: number) => String(n).padStart(2, '0');
  const date = `${two(local.getUTCDate())}/${two(local.getUTCMonth() + 1)}/${local.getUTCFullYear()}`;
  const time = `${two(local.getUTCHours())}:${two(local.getUTCMinutes())}`;
  return wordsOf(locale).instant(date, time);
}

function blockText(block: Block): string {
  switch (block.kind) {
    case 'paragraph':
    case 'notice':
      return block.text;
    case 'facts':
      return block.rows
        .filter((row): row is [string, string] => row[1] !== null)
        .map(([label, value]) => `${label}: ${value}`)
        .join('\n');
    case 'link':
      return `${block.label}:\n${block.url}`;
  }
}

function blockHtml(block: Block): string {
  switch (block.kind) {
    case 'paragraph':
      return `<p>${escapeHtml(block.text)}</p>`;
    case 'notice':
      return `<p style="padding:8px 12px;background:#fff4e5;border-left:4px solid #f0a020">${escapeHtml(block.text)}</p>`;
    case 'facts': {
      const rows = block.rows
        .filter((row): row is [string, string] => row[1] !== null)
        .map(
          ([label, value]) =>
            `<tr><td style="padding:2px 12px 2px 0;color:#555">${escapeHtml(label)}</td><td style="padding:2px 0"><strong>${escapeHtml(value)}</strong></td></tr>`,
        );
      return rows.length === 0 ? '' : `<table role="presentation">${rows.join('')}</table>`;
    }
    case 'link':
      return isWebUrl(block.url)
        ? `<p><a href="${escapeHtml(block.url)}" style="display:inline-block;padding:10px 18px;background:#1a56db;color:#fff;text-decoration:none;border-radius:4px">${escapeHtml(block.label)}</a></p><p style="font-size:12px;color:#555">${escapeHtml(block.url)}</p>`
        : `<p>${escapeHtml(block.label)}: ${escapeHtml(block.url)}</p>`;
  }
}

type Wording = Messages['mail'];

/** The words of the e-mails and SMS in `locale` (shared/src/messages/<locale>/mail.ts). */
function wordsOf(locale: NotifyLocale): Wording {
  return messagesOf(locale).mail;
}

/** Greeting, blocks, signature; the same words in both parts. */
function compose(
  options: MessageOptions,
  recipientName: string,
  subject: string,
  blocks: Block[],
  sensitive: boolean,
): RenderedMail {
  const w = wordsOf(options.locale);
  const fullSubject = `[${options.serviceName}] ${subject}`;
  const body: Block[] = [{ kind: 'paragraph', text: w.greeting(recipientName.trim()) }, ...blocks];
  const text = [
    ...body.map(blockText).filter((part) => part !== ''),
    `${w.regards}\n${options.serviceName}\n\n-- \n${w.automated}`,
  ].join('\n\n');
  const html = [
    '<!DOCTYPE html>',
    `<html lang="${options.locale}"><head><meta charset="utf-8"><title>${escapeHtml(fullSubject)}</title></head>`,
    '<body style="font-family:Arial,Helvetica,sans-serif;font-size:14px;line-height:1.5;color:#111">',
    ...body.map(blockHtml).filter((part) => part !== ''),
    `<p>${escapeHtml(w.regards)}<br>${escapeHtml(options.serviceName)}</p>`,
    `<hr><p style="font-size:12px;color:#777">${escapeHtml(w.automated)}</p>`,
    '</body></html>',
  ].join('\n');
  return { subject: fullSubject, text, html, sensitive };
}

function title(data: NotificationData, w: Wording): string {
  return data.documentTitle?.trim() || w.untitled;
}

function at(iso: string | null, locale: NotifyLocale): string | null {
  return iso === null ? null : formatInstant(iso, locale);
}

function documentFacts(data: NotificationData, w: Wording): [string, string | null][] {
  return [
    [w.document, title(data, w)],
    [w.documentId, data.documentId],
  ];
}

function stepFact(data: NotificationData, w: Wording): [string, string | null] {
  return [
    w.step,
    data.step ? w.stepValue(data.step.stepName, data.step.order, data.totalSteps) : null,
  ];
}

/**
 * The shape every notification shares: greeting, one sentence, the facts, the link (when there
 * is one), then anything else.
 */
function notificationMessage(
  options: MessageOptions,
  data: NotificationData,
  recipient: NotificationRecipient,
  content: {
    subject: string;
    intro: string;
    facts: [string, string | null][];
    linkLabel: string;
    more?: Block[];
    sensitive?: boolean;
  },
): RenderedMail {
  return compose(
    options,
    recipient.name,
    content.subject,
    [
      { kind: 'paragraph', text: content.intro },
      { kind: 'facts', rows: content.facts },
      ...(data.signUrl
        ? [{ kind: 'link', label: content.linkLabel, url: data.signUrl } as const]
        : []),
      ...(content.more ?? []),
    ],
    content.sensitive ?? false,
  );
}

/** What renders one kind of notification for one recipient. */
export type NotificationRenderer = (
  data: NotificationData,
  recipient: NotificationRecipient,
  options: MessageOptions,
) => RenderedMail;

type NotificationContent = Parameters<typeof notificationMessage>[3];

/** A kind's renderer from what that kind says, in the words of the recipient's language. */
function notificationRenderer(
  content: (input: {
    data: NotificationData;
    recipient: NotificationRecipient;
    w: Wording;
    locale: NotifyLocale;
  }) => NotificationContent,
): NotificationRenderer {
  return (data, recipient, options) =>
    notificationMessage(
      options,
      data,
      recipient,
      content({ data, recipient, w: wordsOf(options.locale), locale: options.locale }),
    );
}

/** `notification.task_assigned_internal`: an internal staff member is assigned a task. */
export const taskAssignedInternalMail = notificationRenderer(({ data, w, locale }) => ({
  subject: w.internal.subject(title(data, w)),
  intro: w.internal.intro(title(data, w), data.step?.stepName ?? null),
  facts: [
    ...documentFacts(data, w),
    stepFact(data, w),
    [w.prevActor, data.prevActorName],
    [w.dueBy, at(data.expireAt, locale)],
  ],
  linkLabel: w.internal.link,
}));

/** The account part of an invitation: a new account's user name and password, or the existing one. */
function accountBlocks(w: Wording, credentials: NotificationCredentials | null): Block[] {
  if (credentials === null) return [];
  if (credentials.password === null) {
    return [
      { kind: 'paragraph', text: w.external.existingAccount },
      { kind: 'facts', rows: [[w.userName, credentials.userName]] },
    ];
  }
  return [
    { kind: 'paragraph', text: w.external.newAccount },
    {
      kind: 'facts',
      rows: [
        [w.userName, credentials.userName],
        [w.password, credentials.password],
      ],
    },
    { kind: 'notice', text: w.external.keepSecret },
  ];
}

/**
 * `notification.task_assigned_external`: an outside signer is invited, with the sign link and,
 * when an account was created for them, the user name and password (the mail is then sensitive).
 */
export const taskAssignedExternalMail = notificationRenderer(({ data, recipient, w, locale }) => {
  const credentials = recipient.type === 'external' ? recipient.credentials : null;
  return {
    subject: w.external.subject(title(data, w)),
    intro: w.external.intro(title(data, w)),
    facts: [...documentFacts(data, w), stepFact(data, w), [w.prevActor, data.prevActorName]],
    linkLabel: w.external.link,
    more: [
      { kind: 'facts', rows: [[w.linkValidUntil, at(data.expireAt, locale)]] },
      ...accountBlocks(w, credentials),
    ],
    sensitive: credentials?.password != null,
  };
});

/** `notification.task_rejected`: to the creator and the participants, with the reason. */
export const taskRejectedMail = notificationRenderer(({ data, w }) => ({
  subject: w.rejected.subject(title(data, w)),
  intro: w.rejected.intro(title(data, w), data.step?.stepName ?? null),
  facts: [
    ...documentFacts(data, w),
    stepFact(data, w),
    [w.rejectedBy, data.prevActorName],
    [w.reason, data.note],
  ],
  linkLabel: w.rejected.link,
}));

/** `notification.process_finished`: the whole process is finished. */
export const processFinishedMail = notificationRenderer(({ data, w, locale }) => ({
  subject: w.finished.subject(title(data, w)),
  intro: w.finished.intro(title(data, w)),
  facts: [...documentFacts(data, w), [w.completedAt, at(data.completeDate, locale)]],
  linkLabel: w.finished.link,
}));

/** What a contract e-mail is about: a signer's (or viewer's) link, or news for its creator. */
export type ContractMailKind =
  | 'invitation'
  | 'viewing'
  | 'expired'
  | 'cancelled'
  | 'completed'
  | 'rejected'
  /** To the creator: every signer of one order has signed, the next ones are invited. */
  | 'signed'
  /** To a signer without a phone: the session's OTP. */
  | 'otp';

export interface ContractMailData {
  recipientName: string;
  contractId: string;
  contractTitle: string;
  senderName: string | null;
  /** The signing-page link (invitation, viewing) and until when it works (the deadline). */
  link: string | null;
  deadline: string | null;
  reason: string | null;
  /** Who signed in the turn just done (`signed`). */
  signedBy?: string | null;
  /** The one-time code (`otp`): the message is then stored encrypted. */
  otp?: string | null;
}

/** A contract e-mail (contract API): same layout and languages as the notification e-mails. */
export function contractMail(
  kind: ContractMailKind,
  data: ContractMailData,
  options: MessageOptions,
): RenderedMail {
  const w = wordsOf(options.locale);
  const words = w.contract[kind];
  const title = data.contractTitle.trim() || w.untitled;
  const blocks: Block[] = [
    { kind: 'paragraph', text: words.intro(title) },
    {
      kind: 'facts',
      rows: [
        [w.contract.label, title],
        [w.contract.id, data.contractId],
        [w.contract.sender, data.senderName],
        [w.contract.deadline, at(data.deadline, options.locale)],
        [w.contract.reason, data.reason],
        [w.contract.signedBy, data.signedBy ?? null],
        [w.contract.code, data.otp ?? null],
      ],
    },
  ];
  if (data.link !== null && 'link' in words) {
    blocks.push({ kind: 'link', label: words.link, url: data.link });
  }
  // The link opens the signing page without login until the deadline: stored like a secret.
  const sensitive = data.link !== null || (data.otp ?? null) !== null;
  return compose(options, data.recipientName, words.subject(title), blocks, sensitive);
}

/** The renderer of each kind. */
export const notificationMail: Record<NotificationKind, NotificationRenderer> = {
  task_assigned_internal: taskAssignedInternalMail,
  task_assigned_external: taskAssignedExternalMail,
  task_rejected: taskRejectedMail,
  process_finished: processFinishedMail,
};

/**
 * The sandbox line at the top of both parts and a subject prefix, naming the recipient the
 * message was meant for.
 */
export function withSandboxNotice(
  mail: Pick<RenderedMail, 'subject' | 'text' | 'html'>,
  locale: NotifyLocale,
  originalRecipient: string,
): Pick<RenderedMail, 'subject' | 'text' | 'html'> {
  const notice: Block = { kind: 'notice', text: wordsOf(locale).sandbox(originalRecipient) };
  const bodyTag = /<body[^>]*>/i.exec(mail.html);
  const html = bodyTag
    ? `${mail.html.slice(0, bodyTag.index + bodyTag[0].length)}\n${blockHtml(notice)}${mail.html.slice(bodyTag.index + bodyTag[0].length)}`
    : `${blockHtml(notice)}\n${mail.html}`;
  return {
    subject: `[SANDBOX] ${mail.subject}`,
    text: `${blockText(notice)}\n\n${mail.text}`,
    html,
  };
}

/**
 * Vietnamese text without diacritics: SMS stay in the GSM 7-bit alphabet (160 characters a part
 * instead of 70), as Vietnamese brand-name SMS usually are.
 */
export function withoutDiacritics(text: string): string {
  return text
    .normalize('NFD')
    .replace(/[\u0300-\u036f]/g, '')
    .replaceAll('đ', 'd')
    .replaceAll('Đ', 'D');
}

/** The OTP SMS (next issue): the code, its validity, and a warning not to share it. */
export function otpSms(locale: NotifyLocale, otp: string, minutes: number): string {
  return wordsOf(locale).sms.otp(otp, minutes);
}

/**
 * The SMS an outside signer invited by phone number gets instead of the invitation e-mail: the
 * document title, the sign link and, when an account was created, its user name and password.
 */
export function invitationSms(
  locale: NotifyLocale,
  serviceName: string,
  data: Pick<NotificationData, 'documentTitle' | 'signUrl'>,
  credentials: NotificationCredentials | null,
): { text: string; sensitive: boolean } {
  const w = wordsOf(locale);
  const documentTitle = withoutDiacritics(data.documentTitle?.trim() || w.untitled);
  const parts = [w.sms.invited(serviceName, documentTitle)];
  if (data.signUrl) parts.push(w.sms.signAt(data.signUrl));
  if (credentials?.password != null) {
    parts.push(w.sms.account(credentials.userName, credentials.password));
  }
  return { text: parts.join(' '), sensitive: credentials?.password != null };
}

/** The SMS form of the sandbox notice. */
export function withSandboxSmsNotice(text: string, originalRecipient: string): string {
  return `[SANDBOX -> ${originalRecipient}] ${text}`;
}
