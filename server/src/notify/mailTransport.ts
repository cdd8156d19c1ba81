import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import type Mail from 'nodemailer/lib/mailer';
import type { Config, MailSettings } from '../platform/config';
import { type DevOutboxDeps, devOutboxKeeper, type KeepDevMessage } from './devOutbox';

type Nodemailer = typeof import('nodemailer');
let nodemailer: Promise<Nodemailer> | undefined;

/** The transporter, made with the first message: loading nodemailer at start slows every start. */
function lazily<T extends { close(): void }>(create: (mailer: Nodemailer) => T) {
  let made: T | undefined;
  return {
    get: async (): Promise<T> => {
      if (made) return made;
      nodemailer ??= import('nodemailer');
      const mailer = await nodemailer;
      made ??= create(mailer);
      return made;
    },
    close: () => made?.close(),
  };
}

/**
 * How e-mail leaves the service. Both transports compose the message with nodemailer (UTF-8,
 * MIME encoded-words for non-ASCII headers, quoted-printable parts, multipart/alternative with
 * the plain-text part first), so the development `.eml` file is byte for byte what SMTP would
 * carry.
 */

export interface OutgoingMail {
  from: string;
  to: { name: string | null; address: string };
  subject: string;
  text: string;
  html: string;
  /** Extra headers, e.g. X-Original-To in sandbox mode. */
  headers: Record<string, string>;
  /** `<…@…>`; the same on every retry, so a receiver can spot a duplicate. */
  messageId: string;
  date: Date;
}

export interface MailTransport {
  /** Resolves once the message is accepted (SMTP 250) or written; rejects otherwise. */
  send(mail: OutgoingMail): Promise<{ providerMessageId: string }>;
  close(): void;
}

function mailOptions(mail: OutgoingMail): Mail.Options {
  return {
    from: mail.from,
    to: mail.to.name ? { name: mail.to.name, address: mail.to.address } : mail.to.address,
    subject: mail.subject,
    text: mail.text,
    html: mail.html,
    headers: mail.headers,
    messageId: mail.messageId,
    date: mail.date,
    textEncoding: 'quoted-printable',
  };
}

/** SMTP with the configured host, port, TLS and credentials; one connection per message. */
export function smtpMailTransport(
  settings: Extract<MailSettings, { transport: 'smtp' }>,
): MailTransport {
  const transporter = lazily((mailer) =>
    mailer.createTransport({
      host: settings.host,
      port: settings.port,
      secure: settings.secure,
      requireTLS: settings.requireTls,
      ...(settings.user !== undefined
        ? { auth: { user: settings.user, pass: settings.password ?? '' } }
        : {}),
      connectionTimeout: 10_000,
      greetingTimeout: 10_000,
      socketTimeout: 30_000,
      logger: false,
      debug: false,
    }),
  );
  return {
    send: async (mail) => {
      const info = await (await transporter.get()).sendMail(mailOptions(mail));
      return { providerMessageId: info.messageId };
    },
    close: () => transporter.close(),
  };
}

/**
 * The development transport: each message is kept in the development outbox (the database,
 * devOutbox.ts) and becomes an RFC 5322 `.eml` file (CRLF line ends) in `directory`, written to
 * a temporary name and renamed, so a reader never sees half a message. The provider message id
 * is the file's path.
 */
export function fileMailTransport(directory: string, keep: KeepDevMessage): MailTransport {
  const composer = lazily((mailer) =>
    mailer.createTransport({
      streamTransport: true,
      buffer: true,
      newline: 'windows',
    }),
  );
  return {
    send: async (mail) => {
      const info = await (await composer.get()).sendMail(mailOptions(mail));
      fs.mkdirSync(directory, { recursive: true });
      const stamp = mail.date
        .toISOString()
        .replace(/[-:]/g, '')
        .replace(/\.\d+Z$/, 'Z');
      const name = mail.messageId.replace(/^<|@.*$/g, '').replace(/[^A-Za-z0-9._-]/g, '_');
      const file = path.join(directory, `${stamp}-${name}.eml`);
      const message = info.message as Buffer;
      await keep({
        channel: 'mail',
        providerMessageId: file,
        recipient: mail.to.address,
        content: message.toString('utf8'),
      });
      const temporary = `${file}.${crypto.randomUUID()}.tmp`;
      fs.writeFileSync(temporary, message);
      fs.renameSync(temporary, file);
      return { providerMessageId: file };
    },
    close: () => composer.close(),
  };
}

export function mailTransportFrom(deps: DevOutboxDeps & { config: Config }): MailTransport {
  const settings = deps.config.notify.mail;
  return settings.transport === 'smtp'
    ? smtpMailTransport(settings)
    : fileMailTransport(deps.config.notify.mailDir, devOutboxKeeper(deps));
}

/** Quoted-printable (RFC 2045) to bytes: soft line breaks dropped, `=XX` decoded. */
function quotedPrintable(text: string): Buffer {
  const source = text.replace(/=\r?\n/g, '');
  const bytes: Buffer[] = [];
  let plain = '';
  for (let at = 0; at < source.length; at++) {
    const hex = source.slice(at + 1, at + 3);
    if (source[at] === '=' && /^[0-9A-Fa-f]{2}$/.test(hex)) {
      bytes.push(Buffer.from(plain, 'utf8'), Buffer.from([Number.parseInt(hex, 16)]));
      plain = '';
      at += 2;
    } else plain += source[at];
  }
  bytes.push(Buffer.from(plain, 'utf8'));
  return Buffer.concat(bytes);
}

/**
 * An `.eml` file the development transport wrote before its messages were kept in the database
 * (`provider message id` = its path). Only a file directly in `directory` is read; undefined
 * when it is not one or is gone.
 */
export function readDevMailFile(directory: string, file: string | null): string | undefined {
  if (file === null || path.dirname(path.resolve(file)) !== path.resolve(directory)) return;
  if (!file.endsWith('.eml') || !fs.existsSync(file)) return;
  return fs.readFileSync(file, 'utf8');
}

/**
 * The parts of an e-mail the development transport sent, for the operator's CLI: a sensitive
 * body erased from the notify outbox still stands there.
 */
export function parseDevMail(source: string): { text: string | null; html: string | null } {
  const boundary = /boundary="?([^";\r\n]+)"?/i.exec(source)?.[1];
  const sections = boundary ? source.split(`--${boundary}`).slice(1, -1) : [source];
  const parts: Record<string, string> = {};
  for (const section of sections) {
    const split = section.search(/\r?\n\r?\n/);
    if (split < 0) continue;
    const head = section.slice(0, split);
    const body = section
      .slice(split)
      .replace(/^\r?\n\r?\n/, '')
      .replace(/\r?\n$/, '');
    const type = /^content-type:\s*([^;\r\n]+)/im.exec(head)?.[1]?.trim().toLowerCase();
    const encoding = /^content-transfer-encoding:\s*(\S+)/im.exec(head)?.[1]?.toLowerCase();
    if (type !== 'text/plain' && type !== 'text/html') continue;
    parts[type] =
      encoding === 'quoted-printable'
        ? quotedPrintable(body).toString('utf8')
        : encoding === 'base64'
          ? Buffer.from(body.replace(/\s+/g, ''), 'base64').toString('utf8')
          : body;
  }
  return { text: parts['text/plain'] ?? null, html: parts['text/html'] ?? null };
}
