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
  return locale === 'vi' ? `${time} ngày ${date} (GMT+7)` : `${date} ${time} (GMT+7)`;
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

const wording = {
  vi: {
    greeting: (name: string) => `Kính gửi ${name || 'Quý khách'},`,
    regards: 'Trân trọng,',
    automated: 'Đây là thư tự động, vui lòng không trả lời thư này.',
    untitled: '(không có tiêu đề)',
    document: 'Hồ sơ',
    documentId: 'Mã hồ sơ',
    step: 'Bước',
    stepValue: (step: NotificationStep, total: number) =>
      `${step.stepName} (bước ${step.order}/${total})`,
    prevActor: 'Người xử lý bước trước',
    dueBy: 'Hạn xử lý',
    linkValidUntil: 'Liên kết có hiệu lực đến',
    completedAt: 'Thời điểm hoàn tất',
    rejectedBy: 'Người từ chối',
    reason: 'Lý do từ chối',
    userName: 'Tên đăng nhập',
    password: 'Mật khẩu',
    sandbox: (recipient: string) =>
      `[SANDBOX] Thư này được gửi tới địa chỉ của tài khoản nhà phát triển thay cho người nhận thật: ${recipient}.`,
    internal: {
      subject: (title: string) => `Bạn có công việc cần xử lý: ${title}`,
      intro: (title: string, step: NotificationStep | null) =>
        step
          ? `Bạn được giao xử lý bước “${step.stepName}” của hồ sơ “${title}”.`
          : `Bạn được giao xử lý hồ sơ “${title}”.`,
      link: 'Mở hồ sơ để xử lý',
    },
    external: {
      subject: (title: string) => `Mời bạn ký hồ sơ: ${title}`,
      intro: (title: string) => `Bạn được mời xem xét và ký hồ sơ “${title}”.`,
      link: 'Xem và ký hồ sơ',
      newAccount: 'Một tài khoản đã được tạo để bạn đăng nhập:',
      keepSecret:
        'Vui lòng đổi mật khẩu sau lần đăng nhập đầu tiên và không chuyển tiếp thư này cho người khác.',
      existingAccount: 'Bạn cũng có thể đăng nhập bằng tài khoản hiện có:',
    },
    rejected: {
      subject: (title: string) => `Hồ sơ bị từ chối: ${title}`,
      intro: (title: string, step: NotificationStep | null) =>
        step
          ? `Hồ sơ “${title}” đã bị từ chối ở bước “${step.stepName}”.`
          : `Hồ sơ “${title}” đã bị từ chối.`,
      link: 'Xem hồ sơ',
    },
    finished: {
      subject: (title: string) => `Hồ sơ đã hoàn tất: ${title}`,
      intro: (title: string) => `Quy trình ký hồ sơ “${title}” đã hoàn tất.`,
      link: 'Xem hồ sơ',
    },
    contract: {
      label: 'Hợp đồng',
      id: 'Mã hợp đồng',
      sender: 'Người gửi',
      deadline: 'Hạn ký',
      reason: 'Lý do',
      signedBy: 'Người đã ký',
      code: 'Mã OTP',
      invitation: {
        subject: (title: string) => `Mời bạn ký hợp đồng: ${title}`,
        intro: (title: string) => `Bạn được mời xem xét và ký hợp đồng “${title}”.`,
        link: 'Xem và ký hợp đồng',
      },
      viewing: {
        subject: (title: string) => `Hợp đồng gửi bạn để xem: ${title}`,
        intro: (title: string) => `Hợp đồng “${title}” được gửi tới bạn để xem.`,
        link: 'Xem hợp đồng',
      },
      expired: {
        subject: (title: string) => `Hợp đồng đã hết hạn ký: ${title}`,
        intro: (title: string) => `Hợp đồng “${title}” đã hết hạn ký trước khi mọi người ký xong.`,
      },
      cancelled: {
        subject: (title: string) => `Hợp đồng đã bị hủy: ${title}`,
        intro: (title: string) => `Hợp đồng “${title}” đã bị hủy; liên kết ký không còn hiệu lực.`,
      },
      completed: {
        subject: (title: string) => `Hợp đồng đã được ký xong: ${title}`,
        intro: (title: string) => `Mọi người đã ký hợp đồng “${title}”.`,
      },
      rejected: {
        subject: (title: string) => `Hợp đồng bị từ chối: ${title}`,
        intro: (title: string) => `Hợp đồng “${title}” đã bị từ chối ký.`,
      },
      signed: {
        subject: (title: string) => `Một lượt ký đã xong: ${title}`,
        intro: (title: string) =>
          `Các bên của một lượt đã ký hợp đồng “${title}”; người ký tiếp theo đã được mời.`,
      },
      otp: {
        subject: (title: string) => `Mã OTP ký hợp đồng: ${title}`,
        intro: (title: string) =>
          `Mã OTP để ký hợp đồng “${title}” ở dưới, có hiệu lực 5 phút. Không chia sẻ mã này với bất kỳ ai.`,
      },
    },
  },
  en: {
    greeting: (name: string) => `Dear ${name || 'Sir or Madam'},`,
    regards: 'Kind regards,',
    automated: 'This is an automated message; please do not reply.',
    untitled: '(untitled)',
    document: 'Document',
    documentId: 'Document ID',
    step: 'Step',
    stepValue: (step: NotificationStep, total: number) =>
      `${step.stepName} (step ${step.order} of ${total})`,
    prevActor: 'Previous step handled by',
    dueBy: 'Due by',
    linkValidUntil: 'The link is valid until',
    completedAt: 'Completed at',
    rejectedBy: 'Rejected by',
    reason: 'Reason',
    userName: 'User name',
    password: 'Password',
    sandbox: (recipient: string) =>
      `[SANDBOX] This message goes to the developer account's address instead of the real recipient: ${recipient}.`,
    internal: {
      subject: (title: string) => `A task is waiting for you: ${title}`,
      intro: (title: string, step: NotificationStep | null) =>
        step
          ? `You have been assigned the step “${step.stepName}” of the document “${title}”.`
          : `You have been assigned the document “${title}”.`,
      link: 'Open the document',
    },
    external: {
      subject: (title: string) => `You are invited to sign: ${title}`,
      intro: (title: string) => `You are invited to review and sign the document “${title}”.`,
      link: 'Review and sign',
      newAccount: 'An account has been created for you to sign in:',
      keepSecret:
        'Please change the password after your first sign-in and do not forward this e-mail.',
      existingAccount: 'You can also sign in with your existing account:',
    },
    rejected: {
      subject: (title: string) => `Document rejected: ${title}`,
      intro: (title: string, step: NotificationStep | null) =>
        step
          ? `The document “${title}” has been rejected at the step “${step.stepName}”.`
          : `The document “${title}” has been rejected.`,
      link: 'View the document',
    },
    finished: {
      subject: (title: string) => `Document completed: ${title}`,
      intro: (title: string) => `The signing process of the document “${title}” is complete.`,
      link: 'View the document',
    },
    contract: {
      label: 'Contract',
      id: 'Contract ID',
      sender: 'Sent by',
      deadline: 'Signing deadline',
      reason: 'Reason',
      signedBy: 'Signed by',
      code: 'Code',
      invitation: {
        subject: (title: string) => `You are invited to sign: ${title}`,
        intro: (title: string) => `You are invited to review and sign the contract “${title}”.`,
        link: 'Review and sign',
      },
      viewing: {
        subject: (title: string) => `A contract shared with you: ${title}`,
        intro: (title: string) => `The contract “${title}” has been shared with you to view.`,
        link: 'View the contract',
      },
      expired: {
        subject: (title: string) => `Contract expired: ${title}`,
        intro: (title: string) =>
          `The signing deadline of the contract “${title}” passed before everyone signed.`,
      },
      cancelled: {
        subject: (title: string) => `Contract cancelled: ${title}`,
        intro: (title: string) =>
          `The contract “${title}” has been cancelled; its signing link no longer works.`,
      },
      completed: {
        subject: (title: string) => `Contract signed by everyone: ${title}`,
        intro: (title: string) => `Everyone has signed the contract “${title}”.`,
      },
      rejected: {
        subject: (title: string) => `Contract rejected: ${title}`,
        intro: (title: string) => `The contract “${title}” has been rejected.`,
      },
      signed: {
        subject: (title: string) => `A signing turn is done: ${title}`,
        intro: (title: string) =>
          `The signers of one turn have signed the contract “${title}”; the next signers have been invited.`,
      },
      otp: {
        subject: (title: string) => `Your signing code: ${title}`,
        intro: (title: string) =>
          `Your one-time code to sign the contract “${title}” is below, valid for 5 minutes. Do not share it with anyone.`,
      },
    },
  },
} as const;

type Wording = (typeof wording)[NotifyLocale];

/** Greeting, blocks, signature; the same words in both parts. */
function compose(
  options: MessageOptions,
  recipientName: string,
  subject: string,
  blocks: Block[],
  sensitive: boolean,
): RenderedMail {
  const w = wording[options.locale];
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
  return [w.step, data.step ? w.stepValue(data.step, data.totalSteps) : null];
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

/** `notification.task_assigned_internal`: an internal staff member is assigned a task. */
export function taskAssignedInternalMail(
  data: NotificationData,
  recipient: NotificationRecipient,
  options: MessageOptions,
): RenderedMail {
  const w = wording[options.locale];
  return notificationMessage(options, data, recipient, {
    subject: w.internal.subject(title(data, w)),
    intro: w.internal.intro(title(data, w), data.step),
    facts: [
      ...documentFacts(data, w),
      stepFact(data, w),
      [w.prevActor, data.prevActorName],
      [w.dueBy, at(data.expireAt, options.locale)],
    ],
    linkLabel: w.internal.link,
  });
}

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
export function taskAssignedExternalMail(
  data: NotificationData,
  recipient: NotificationRecipient,
  options: MessageOptions,
): RenderedMail {
  const w = wording[options.locale];
  const credentials = recipient.type === 'external' ? recipient.credentials : null;
  return notificationMessage(options, data, recipient, {
    subject: w.external.subject(title(data, w)),
    intro: w.external.intro(title(data, w)),
    facts: [...documentFacts(data, w), stepFact(data, w), [w.prevActor, data.prevActorName]],
    linkLabel: w.external.link,
    more: [
      { kind: 'facts', rows: [[w.linkValidUntil, at(data.expireAt, options.locale)]] },
      ...accountBlocks(w, credentials),
    ],
    sensitive: credentials?.password != null,
  });
}

/** `notification.task_rejected`: to the creator and the participants, with the reason. */
export function taskRejectedMail(
  data: NotificationData,
  recipient: NotificationRecipient,
  options: MessageOptions,
): RenderedMail {
  const w = wording[options.locale];
  return notificationMessage(options, data, recipient, {
    subject: w.rejected.subject(title(data, w)),
    intro: w.rejected.intro(title(data, w), data.step),
    facts: [
      ...documentFacts(data, w),
      stepFact(data, w),
      [w.rejectedBy, data.prevActorName],
      [w.reason, data.note],
    ],
    linkLabel: w.rejected.link,
  });
}

/** `notification.process_finished`: the whole process is finished. */
export function processFinishedMail(
  data: NotificationData,
  recipient: NotificationRecipient,
  options: MessageOptions,
): RenderedMail {
  const w = wording[options.locale];
  return notificationMessage(options, data, recipient, {
    subject: w.finished.subject(title(data, w)),
    intro: w.finished.intro(title(data, w)),
    facts: [...documentFacts(data, w), [w.completedAt, at(data.completeDate, options.locale)]],
    linkLabel: w.finished.link,
  });
}

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
  const w = wording[options.locale];
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
export const notificationMail: Record<
  NotificationKind,
  (
    data: NotificationData,
    recipient: NotificationRecipient,
    options: MessageOptions,
  ) => RenderedMail
> = {
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
  const notice: Block = { kind: 'notice', text: wording[locale].sandbox(originalRecipient) };
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
  return locale === 'vi'
    ? `Ma OTP cua ban la ${otp}, co hieu luc trong ${minutes} phut. Khong chia se ma nay voi bat ky ai.`
    : `Your OTP is ${otp}, valid for ${minutes} minutes. Do not share this code with anyone.`;
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
  const w = wording[locale];
  const documentTitle = withoutDiacritics(data.documentTitle?.trim() || w.untitled);
  const parts =
    locale === 'vi'
      ? [`${serviceName}: Ban duoc moi ky ho so "${documentTitle}".`]
      : [`${serviceName}: You are invited to sign "${documentTitle}".`];
  if (data.signUrl)
    parts.push(locale === 'vi' ? `Ky tai: ${data.signUrl}` : `Sign at: ${data.signUrl}`);
  if (credentials?.password != null) {
    parts.push(
      locale === 'vi'
        ? `Tai khoan: ${credentials.userName}, mat khau: ${credentials.password}`
        : `Account: ${credentials.userName}, password: ${credentials.password}`,
    );
  }
  return { text: parts.join(' '), sensitive: credentials?.password != null };
}

/** The SMS form of the sandbox notice. */
export function withSandboxSmsNotice(text: string, originalRecipient: string): string {
  return `[SANDBOX -> ${originalRecipient}] ${text}`;
}
