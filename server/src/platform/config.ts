import path from 'node:path';
import { ConfigError } from '../errors/configError';
import { type Allowlist, parseAllowlist } from '../outbound/addressPolicy';

export { ConfigError };

export type AppEnvironment = 'production' | 'development' | 'sandbox';

export interface RateLimits {
  /** requests per minute on /api/auth/* */
  auth: number;
  /** requests per minute on every other API route */
  api: number;
  /** requests per minute on file uploads */
  upload: number;
}

export interface Config {
  serviceName: string;
  host: string;
  port: number;
  dataDir: string;
  databaseFile: string;
  publicUrl: string;
  appUrl: string;
  environment: AppEnvironment;
  sandbox: boolean;
  /** Overrides the JWT key derived from the master secret (one per environment). */
  jwtSecret: string | undefined;
  /** Overrides the master secret otherwise generated under DATA_DIR. */
  secretKey: string | undefined;
  logLevel: string;
  trustProxy: boolean;
  /** OUTBOUND_ALLOWLIST: hosts or CIDRs that outbound requests may reach despite the address policy. */
  outboundAllowlist: Allowlist;
  rateLimits: RateLimits;
  /** Notification e-mail and SMS (server/src/notify). */
  notify: NotifyConfig;
}

function intFrom(env: NodeJS.ProcessEnv, name: string, fallback: number): number {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  const value = Number(raw);
  if (!Number.isInteger(value) || value <= 0) {
    throw new ConfigError(`${name} must be a positive integer, got "${raw}"`);
  }
  return value;
}

function environmentFrom(env: NodeJS.ProcessEnv): AppEnvironment {
  const raw = env.APP_ENV ?? (env.SANDBOX === '1' ? 'sandbox' : 'development');
  if (raw === 'production' || raw === 'development' || raw === 'sandbox') return raw;
  throw new ConfigError(`APP_ENV must be production, development or sandbox, got "${raw}"`);
}

/** Reads every setting from environment variables; the README lists them. */
export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  const host = env.HOST || '127.0.0.1';
  const port = intFrom(env, 'PORT', 3000);
  const dataDir = path.resolve(env.DATA_DIR || './data');
  const publicUrl = (env.PUBLIC_URL || `http://${host}:${port}`).replace(/\/+$/, '');
  const environment = environmentFrom(env);
  return {
    serviceName: env.SERVICE_NAME || 'ESign',
    host,
    port,
    dataDir,
    databaseFile: path.join(dataDir, 'esign.sqlite'),
    publicUrl,
    appUrl: (env.APP_URL || `${publicUrl}/app`).replace(/\/+$/, ''),
    environment,
    sandbox: env.SANDBOX === '1' || environment === 'sandbox',
    jwtSecret: env.JWT_SECRET || undefined,
    secretKey: env.SECRET_KEY || undefined,
    logLevel: env.LOG_LEVEL || 'info',
    trustProxy: env.TRUST_PROXY === '1',
    outboundAllowlist: parseAllowlist(env.OUTBOUND_ALLOWLIST ?? ''),
    rateLimits: {
      auth: intFrom(env, 'RATE_LIMIT_AUTH', 10),
      api: intFrom(env, 'RATE_LIMIT_API', 100),
      upload: intFrom(env, 'RATE_LIMIT_UPLOAD', 10),
    },
    notify: notifyFrom(env, dataDir, env.SERVICE_NAME || 'ESign'),
  };
}

export type NotifyLocale = 'vi' | 'en';

/** How e-mail leaves: SMTP, or `.eml` files under DATA_DIR/outbox/mail (development default). */
export type MailSettings =
  | { transport: 'file' }
  | {
      transport: 'smtp';
      host: string;
      port: number;
      /** Implicit TLS from the first byte (SMTP_SECURE=1, port 465 by default). */
      secure: boolean;
      /** STARTTLS must succeed before anything else is sent; always on when a user is set. */
      requireTls: boolean;
      user: string | undefined;
      password: string | undefined;
    };

/** How SMS leave: an HTTP gateway, or JSON lines under DATA_DIR/outbox/sms (development default). */
export type SmsSettings =
  | { provider: 'file' }
  | {
      provider: 'http';
      url: string;
      method: 'GET' | 'POST';
      headers: Record<string, string>;
      /** With {{to}} and {{text}}, escaped for the Content-Type of `headers` (JSON, form or text). */
      bodyTemplate: string;
      /** SMS_HTTP_AUTHORIZATION: the gateway's `Authorization` value (a secret; never logged). */
      authorization?: string;
    };

export interface NotifyConfig {
  /** NOTIFY_LOCALE: the language of messages that do not choose one. */
  locale: NotifyLocale;
  /** MAIL_FROM: the From of every e-mail. */
  mailFrom: string;
  mail: MailSettings;
  sms: SmsSettings;
  /** The development outboxes: DATA_DIR/outbox/mail and DATA_DIR/outbox/sms. */
  mailDir: string;
  smsDir: string;
}

/** Headers the SSRF-safe client never sends (credentials and routing belong to it). */
const refusedSmsHeaders = [
  'authorization',
  'proxy-authorization',
  'cookie',
  'host',
  'content-length',
];

function oneOf<T extends string>(
  env: NodeJS.ProcessEnv,
  name: string,
  values: T[],
  fallback: T,
): T {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  if ((values as string[]).includes(raw)) return raw as T;
  throw new ConfigError(`${name} must be ${values.join(' or ')}, got "${raw}"`);
}

function mailSettingsFrom(env: NodeJS.ProcessEnv): MailSettings {
  if (oneOf(env, 'MAIL_TRANSPORT', ['file', 'smtp'], 'file') === 'file')
    return { transport: 'file' };
  const host = env.SMTP_HOST?.trim();
  if (!host) throw new ConfigError('SMTP_HOST is required when MAIL_TRANSPORT=smtp');
  if (!env.MAIL_FROM?.trim())
    throw new ConfigError('MAIL_FROM is required when MAIL_TRANSPORT=smtp');
  const secure = ['1', 'true'].includes(
    oneOf(env, 'SMTP_SECURE', ['0', '1', 'false', 'true'], '0'),
  );
  const user = env.SMTP_USER || undefined;
  return {
    transport: 'smtp',
    host,
    port: intFrom(env, 'SMTP_PORT', secure ? 465 : 587),
    secure,
    requireTls: !secure && user !== undefined,
    user,
    password: env.SMTP_PASSWORD || undefined,
  };
}

function smsHeaders(raw: string | undefined): Record<string, string> {
  if (!raw) return {};
  let parsed: unknown = null;
  try {
    parsed = JSON.parse(raw);
  } catch {}
  if (
    typeof parsed !== 'object' ||
    parsed === null ||
    Array.isArray(parsed) ||
    Object.values(parsed).some((value) => typeof value !== 'string')
  ) {
    throw new ConfigError('SMS_HTTP_HEADERS must be a JSON object of header names to strings');
  }
  const headers = parsed as Record<string, string>;
  const refused = Object.keys(headers).find((name) =>
    refusedSmsHeaders.includes(name.toLowerCase()),
  );
  if (refused) {
    throw new ConfigError(
      `SMS_HTTP_HEADERS may not set ${refused}; set SMS_HTTP_AUTHORIZATION for an Authorization value, or put a gateway key in another header (X-Api-Key), the URL or the body`,
    );
  }
  return headers;
}

function smsSettingsFrom(env: NodeJS.ProcessEnv): SmsSettings {
  if (oneOf(env, 'SMS_PROVIDER', ['file', 'http'], 'file') === 'file') return { provider: 'file' };
  let url: URL;
  try {
    url = new URL(env.SMS_HTTP_URL ?? '');
  } catch {
    throw new ConfigError('SMS_HTTP_URL must be an absolute https URL when SMS_PROVIDER=http');
  }
  if (url.protocol !== 'https:') throw new ConfigError('SMS_HTTP_URL must use https');
  const method = oneOf(env, 'SMS_HTTP_METHOD', ['GET', 'POST'], 'POST');
  const headers = smsHeaders(env.SMS_HTTP_HEADERS);
  const template = env.SMS_HTTP_BODY_TEMPLATE;
  if (method === 'GET' && template) {
    throw new ConfigError('SMS_HTTP_BODY_TEMPLATE cannot be used with SMS_HTTP_METHOD=GET');
  }
  const hasContentType = Object.keys(headers).some((name) => name.toLowerCase() === 'content-type');
  if (method === 'POST' && !hasContentType) headers['Content-Type'] = 'application/json';
  return {
    provider: 'http',
    // As written: {{to}} and {{text}} may stand in the query and are filled in at send time.
    url: (env.SMS_HTTP_URL ?? '').trim(),
    method,
    headers,
    bodyTemplate: method === 'GET' ? '' : (template ?? '{"to":"{{to}}","text":"{{text}}"}'),
    ...(env.SMS_HTTP_AUTHORIZATION ? { authorization: env.SMS_HTTP_AUTHORIZATION } : {}),
  };
}

function notifyFrom(env: NodeJS.ProcessEnv, dataDir: string, serviceName: string): NotifyConfig {
  return {
    locale: oneOf(env, 'NOTIFY_LOCALE', ['vi', 'en'], 'vi'),
    mailFrom: env.MAIL_FROM?.trim() || `${serviceName} <no-reply@localhost>`,
    mail: mailSettingsFrom(env),
    sms: smsSettingsFrom(env),
    mailDir: path.join(dataDir, 'outbox', 'mail'),
    smsDir: path.join(dataDir, 'outbox', 'sms'),
  };
}
