import type net from 'node:net';
import { SMTPServer, type SMTPServerAuthentication } from 'smtp-server';
import { testTls } from '../../../test/support/httpsServer';
import { recordMessageSecrets, runLogDir, runLogged } from '../../../test/support/runLog';
import type { AppDeps } from '../../src/context';
import { inTransaction } from '../../src/db/database';
import {
  type NotificationData,
  type NotificationRecipient,
  taskAssignedExternalMail,
} from '../../src/notify/messages';
import { queueNotification } from '../../src/notify/notifications';
import { messageById } from '../../src/notify/queries';
import type { SmsProvider } from '../../src/notify/sms';
import { type NotifyWorkerOptions, startNotifyWorker } from '../../src/notify/worker';
import { createLogger } from '../../src/platform/logger';
import type { Harness } from '../support/harness';

/** A runner without its loop: it moves only when a test calls drain(). */
export function manualWorker(deps: AppDeps, options: NotifyWorkerOptions = {}) {
  return startNotifyWorker(deps, { poll: false, ...options });
}

/** A message with its job's state under the names the assertions use. */
export async function outboxRow(h: Harness, id: number) {
  const row = await messageById(h.deps.db, undefined, id);
  if (!row) throw new Error(`no message ${id}`);
  return row;
}

/** Every message, oldest first, as `outboxRow` shows it. */
export async function outboxRows(h: Harness) {
  const ids = await h.deps.db.selectFrom('notify_outbox').select('id').orderBy('id').execute();
  return Promise.all(ids.map(({ id }) => outboxRow(h, id)));
}

/** An SMS provider that records what it was given. */
export function recordingProvider(): SmsProvider & { sent: { to: string; text: string }[] } {
  const sent: { to: string; text: string }[] = [];
  return {
    sent,
    send: async (to, text) => {
      recordMessageSecrets(text, 'SMS provider');
      sent.push({ to, text });
      return { providerMessageId: `p-${sent.length}` };
    },
  };
}

export const failingProvider: SmsProvider = {
  send: async () => {
    throw new Error('gateway down');
  },
};

/**
 * Queues and sends the invitation of an outside signer whose account was just created (the
 * password has characters HTML must escape); returns its outbox id and the expected rendering.
 */
export async function sendInvitation(h: Harness, tenantId: number) {
  const recipient = externalRecipient({
    credentials: { userName: 'anh.nguyen', password: 'Xy7&<pw>' },
  });
  const data = sampleData({ recipients: [recipient] });
  const { queued } = await inTransaction(h.deps.db, (trx) =>
    queueNotification(trx, h.deps, {
      tenantId,
      event: 'notification.task_assigned_external',
      data,
      delegatedByWebhook: false,
    }),
  );
  const worker = manualWorker(h.deps);
  await worker.drain();
  await worker.stop();
  const expected = taskAssignedExternalMail(data, recipient, {
    locale: 'vi',
    serviceName: 'ESign',
  });
  return { id: queued[0]!.id, expected };
}

export interface ReceivedMail {
  from: string | undefined;
  to: string[];
  user: string | undefined;
  /** The message as received (dot-unstuffed), CRLF line ends. */
  raw: Buffer;
}

export interface TestSmtpServer {
  port: number;
  received: ReceivedMail[];
  /** Answers the next DATA commands with this SMTP error (a temporary failure by default). */
  failNext(count: number, code?: number): void;
  close(): Promise<void>;
}

/**
 * A real SMTP server (smtp-server) on 127.0.0.1, port 0. Without `auth` it takes mail from
 * anyone in clear (no STARTTLS offered); with `auth` it offers STARTTLS with the TEST-ONLY
 * certificate and accepts only that user and password; with `implicitTls` it speaks TLS from
 * the first byte (port 465 style).
 */
export async function startSmtpServer(
  options: { auth?: { user: string; password: string }; implicitTls?: boolean } = {},
): Promise<TestSmtpServer> {
  const received: ReceivedMail[] = [];
  let failures = 0;
  let failureCode = 451;
  const auth = options.auth;
  const server = new SMTPServer({
    logger: false,
    banner: 'test smtp',
    size: 10 * 1024 * 1024,
    ...(auth
      ? {
          key: testTls.key(),
          cert: testTls.cert(),
          authMethods: ['PLAIN', 'LOGIN'],
          onAuth(
            login: SMTPServerAuthentication,
            _session: unknown,
            callback: (error: Error | null | undefined, response?: { user: string }) => void,
          ) {
            if (login.username === auth.user && login.password === auth.password) {
              callback(null, { user: login.username ?? '' });
            } else {
              callback(new Error('Invalid username or password'));
            }
          },
        }
      : options.implicitTls
        ? { secure: true, key: testTls.key(), cert: testTls.cert(), authOptional: true }
        : { authOptional: true, disabledCommands: ['AUTH', 'STARTTLS'] }),
    onData(stream, session, callback) {
      const chunks: Buffer[] = [];
      stream.on('data', (chunk: Buffer) => chunks.push(chunk));
      stream.on('end', () => {
        if (failures > 0) {
          failures -= 1;
          const error = new Error('Try again later') as Error & { responseCode: number };
          error.responseCode = failureCode;
          callback(error);
          return;
        }
        const raw = Buffer.concat(chunks);
        recordMailSecrets(raw, 'SMTP sink');
        received.push({
          from: session.envelope.mailFrom ? session.envelope.mailFrom.address : undefined,
          to: session.envelope.rcptTo.map((rcpt) => rcpt.address),
          user: typeof session.user === 'string' ? session.user : undefined,
          raw,
        });
        callback();
      });
    },
  });
  server.on('error', () => {});
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = ((server as unknown as { server: net.Server }).server.address() as net.AddressInfo)
    .port;
  return {
    port,
    received,
    failNext: (count, code = 451) => {
      failures = count;
      failureCode = code;
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

/** A pino logger writing into an array, to prove what is and is not logged. */
export function capturedLogger() {
  const lines: string[] = [];
  const logger = createLogger(
    'debug',
    runLogged({
      write: (line: string) => {
        lines.push(line);
      },
    }),
  );
  return { logger, lines, text: () => lines.join('') };
}

export async function setDeveloperAccount(
  deps: AppDeps,
  tenantId: number,
  account: { email?: string | null; phone?: string | null },
): Promise<void> {
  await inTransaction(deps.db, (trx) =>
    trx
      .updateTable('tenants')
      .set({
        developer_email: account.email ?? null,
        developer_phone: account.phone ?? null,
      })
      .where('id', '=', tenantId)
      .execute(),
  );
}

export const vietnameseTitle = 'Hợp đồng lao động <2026>';
export const vietnameseName = 'Nguyễn Văn Ánh';

export function externalRecipient(
  overrides: Partial<NotificationRecipient> = {},
): NotificationRecipient {
  return {
    type: 'external',
    name: vietnameseName,
    email: 'anh.nguyen@partner.example',
    phone: null,
    credentials: null,
    ...overrides,
  };
}

export function internalRecipient(
  overrides: Partial<NotificationRecipient> = {},
): NotificationRecipient {
  return {
    type: 'internal',
    name: 'Trần Thị Bình',
    email: 'binh.tran@company.example',
    phone: '0912 345 678',
    credentials: null,
    ...overrides,
  };
}

/** A `notification.*` data object as the workflow will produce it. */
export function sampleData(overrides: Partial<NotificationData> = {}): NotificationData {
  return {
    transactionId: 'TX-2026-0001',
    documentId: 'HD-2026-001',
    documentUuid: '5b0f6a8e-0d0c-4f3e-9d53-3f5a2b1c4d7e',
    documentTitle: vietnameseTitle,
    totalSteps: 3,
    step: { stepCode: 'KY_KHACH_HANG', stepName: 'Khách hàng ký', order: 2 },
    recipients: [externalRecipient()],
    signUrl: 'https://sign.example/ky-so/abc?token=t1&lang=vi',
    expireAt: '2026-11-27T10:30:00.000Z',
    prevActorName: 'Lê Văn Cường',
    completeDate: null,
    note: null,
    metadata: { contractNo: 'C-1' },
    ...overrides,
  };
}

// ---------------------------------------------------------------------------------------------
// A small independent MIME reader (RFC 5322 + 2045/2047), so the tests do not trust nodemailer
// to check nodemailer.

export interface MimePart {
  headers: Map<string, string>;
  contentType: string;
  /** Decoded body text (charset UTF-8). */
  body: string;
}

export interface ParsedMail {
  /** Raw (unfolded, not decoded) header values by lower-case name; the first of each. */
  headers: Map<string, string>;
  /** A header with its encoded-words decoded. */
  header(name: string): string | undefined;
  parts: MimePart[];
  text: string | undefined;
  html: string | undefined;
}

function splitHead(source: string): { headers: Map<string, string>; body: string } {
  const end = source.indexOf('\n\n');
  const head = end === -1 ? source : source.slice(0, end);
  const body = end === -1 ? '' : source.slice(end + 2);
  const headers = new Map<string, string>();
  const unfolded = head.replace(/\n[ \t]/g, ' ');
  for (const line of unfolded.split('\n')) {
    const colon = line.indexOf(':');
    if (colon <= 0) continue;
    const name = line.slice(0, colon).trim().toLowerCase();
    if (!headers.has(name)) headers.set(name, line.slice(colon + 1).trim());
  }
  return { headers, body };
}

function qpBytes(text: string): Buffer {
  const bytes: number[] = [];
  const source = text.replace(/=\n/g, '');
  for (let i = 0; i < source.length; i++) {
    const char = source[i]!;
    if (char === '=' && /^[0-9A-Fa-f]{2}$/.test(source.slice(i + 1, i + 3))) {
      bytes.push(Number.parseInt(source.slice(i + 1, i + 3), 16));
      i += 2;
    } else {
      bytes.push(...Buffer.from(char, 'utf8'));
    }
  }
  return Buffer.from(bytes);
}

/** RFC 2047: adjacent encoded-words join (the white space between them is dropped). */
export function decodeWords(value: string): string {
  const joined = value.replace(/(\?=)\s+(=\?)/g, '$1$2');
  return joined.replace(/(?:=\?([^?]+)\?([QqBb])\?([^?]*)\?=)+/g, (run) => {
    const bytes: Buffer[] = [];
    for (const word of run.matchAll(/=\?([^?]+)\?([QqBb])\?([^?]*)\?=/g)) {
      const [, , encoding, text = ''] = word;
      bytes.push(
        encoding!.toUpperCase() === 'B'
          ? Buffer.from(text, 'base64')
          : qpBytes(text.replaceAll('_', ' ')),
      );
    }
    return Buffer.concat(bytes).toString('utf8');
  });
}

function decodeBody(headers: Map<string, string>, body: string): string {
  const encoding = (headers.get('content-transfer-encoding') ?? '7bit').toLowerCase();
  if (encoding === 'base64')
    return Buffer.from(body.replace(/\s+/g, ''), 'base64').toString('utf8');
  if (encoding === 'quoted-printable') return qpBytes(body).toString('utf8');
  return body;
}

export function parseMail(raw: Buffer | string): ParsedMail {
  const source = (typeof raw === 'string' ? raw : raw.toString('utf8')).replace(/\r\n/g, '\n');
  const { headers, body } = splitHead(source);
  const type = headers.get('content-type') ?? 'text/plain';
  const parts: MimePart[] = [];
  const boundary = /boundary="?([^";]+)"?/i.exec(type)?.[1];
  if (boundary) {
    const sections = body.split(`--${boundary}`);
    for (const section of sections.slice(1)) {
      if (section.startsWith('--')) break;
      const part = splitHead(section.replace(/^\n/, ''));
      parts.push({
        headers: part.headers,
        contentType: (part.headers.get('content-type') ?? 'text/plain').split(';')[0]!.trim(),
        body: decodeBody(part.headers, part.body.replace(/\n$/, '')),
      });
    }
  } else {
    parts.push({
      headers,
      contentType: type.split(';')[0]!.trim(),
      body: decodeBody(headers, body),
    });
  }
  return {
    headers,
    header: (name) => {
      const value = headers.get(name.toLowerCase());
      return value === undefined ? undefined : decodeWords(value);
    },
    parts,
    text: parts.find((part) => part.contentType === 'text/plain')?.body,
    html: parts.find((part) => part.contentType === 'text/html')?.body,
  };
}

/** Notes a mail's link tokens, codes and passwords among the jest run's issued secrets. */
export function recordMailSecrets(raw: Buffer | string, source: string): void {
  if (runLogDir() === undefined) return;
  const mail = parseMail(raw);
  recordMessageSecrets(
    [mail.header('subject') ?? '', ...mail.parts.map((part) => part.body)].join('\n'),
    source,
  );
}
