import path from 'node:path';
import { firstIssue, plainIssues } from '@esign/shared';
import { z } from 'zod';
import { ConfigError } from '../errors/configError';
import { type Allowlist, parseAllowlist } from '../outbound/addressPolicy';

export { ConfigError };

const appEnvironments = ['production', 'development', 'sandbox'] as const;
export type AppEnvironment = (typeof appEnvironments)[number];

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
  /** The SQLite file, used when `databaseUrl` is unset (the embedded default). */
  databaseFile: string;
  /** DATABASE_URL: a PostgreSQL server instead of the SQLite file (holds a password: never logged). */
  databaseUrl: string | undefined;
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
  /** Tuning of the webhook job kind; unset values take the kind's defaults (webhooks/worker.ts). */
  webhookJobs: WebhookJobSettings;
  /** Notification e-mail and SMS (server/src/notify). */
  notify: NotifyConfig;
  /** KEYSTORE: where the service's signing keys live (server/src/signing/keys). */
  keyStore: KeyStoreSettings;
  /** The RFC 3161 timestamp authority (server/src/signing/timestamps). */
  tsa: TsaSettings;
  /** LibreOffice for `.docx` contract uploads (server/src/contracts/docx.ts). */
  docxConversion: DocxConversionSettings;
  /**
   * AGENT_TICKET_KEY_GENERATION: which key derived from the master secret signs the desktop
   * agent's signing tickets; raising it rotates the key (server/src/sessions/agentTickets.ts).
   */
  agentTicketKeyGeneration: number;
  /**
   * AGENT_DOWNLOAD_URL: where the signing page sends a signer whose computer runs no desktop
   * agent (default PUBLIC_URL/agent, where the operator publishes the installers).
   */
  agentDownloadUrl: string;
  /**
   * METRICS_TOKEN: the Bearer token GET /metrics asks for (a secret; never logged). Unset, the
   * metrics are not served (404).
   */
  metricsToken: string | undefined;
  /** FILE_STORE: where file bytes live (server/src/storage): `local` under DATA_DIR/files, or `s3`. */
  fileStore: 'local' | 's3';
  /**
   * S3_*: the bucket of FILE_STORE=s3, and the target of `admin storage copy --to s3`; undefined
   * when S3_BUCKET is not set.
   */
  s3: S3Settings | undefined;
}

/** S3_ENDPOINT, S3_BUCKET, S3_REGION, S3_ACCESS_KEY_ID, S3_SECRET_ACCESS_KEY, S3_FORCE_PATH_STYLE, S3_PRESIGNED_DOWNLOADS. */
export interface S3Settings {
  /** An S3-compatible service's URL (MinIO, Ceph RGW, ...); undefined means AWS S3 itself. */
  endpoint: string | undefined;
  bucket: string;
  region: string;
  /**
   * Static credentials; without them the SDK's default chain (an instance role, AWS_* variables)
   * is used. The secret is a function so that serializing or logging the config never shows it.
   */
  credentials: { accessKeyId: string; secretAccessKey(): string } | undefined;
  /** `https://endpoint/bucket/key` instead of `https://bucket.endpoint/key` (MinIO, s3rver). */
  forcePathStyle: boolean;
  /** Downloads answer 302 to a presigned GetObject URL (5 minutes) instead of streaming. */
  presignedDownloads: boolean;
}

/**
 * SOFFICE_PATH, DOCX_CONVERSION_TIMEOUT_SECONDS, DOCX_CONVERSION_MEMORY_MB,
 * DOCX_CONVERSION_CONCURRENCY, DOCX_CONVERSION_QUEUE.
 */
export interface DocxConversionSettings {
  /** The `soffice` program: a name looked up in PATH, or a path. */
  command: string;
  /** A conversion still running then is killed. */
  timeoutMs: number;
  /** The address space one conversion may use (`prlimit --as`); past it LibreOffice fails. */
  memoryBytes: number;
  /** Conversions running at once. */
  concurrency: number;
  /** Uploads waiting for a conversion; one more is refused with 503 DOCX_CONVERSION_BUSY. */
  queueLength: number;
}

/** TSA_URL, TSA_USERNAME, TSA_PASSWORD. */
export interface TsaSettings {
  /** The TSA's URL; undefined in development and sandbox means the server's own development TSA. */
  url: string | undefined;
  /** HTTP Basic credentials, when the TSA asks for them (secrets; never logged). */
  username: string | undefined;
  password: string | undefined;
}

/**
 * Software keys are encrypted under the master secret in the database; PKCS#11 keys stay on a
 * token. The PIN is a function so that serializing or logging the config never shows it.
 */
export type KeyStoreSettings =
  | { kind: 'software' }
  | { kind: 'pkcs11'; module: string; tokenLabel: string; pin(): string };

export interface WebhookJobSettings {
  /** WEBHOOK_CONCURRENCY: parallel sends. */
  concurrency: number | undefined;
  /** WEBHOOK_POLL_MS: the job runner's idle poll. */
  pollIntervalMs: number | undefined;
  /** WEBHOOK_LEASE_SECONDS, in ms: how long a claim holds a delivery (above the 10 s timeout). */
  leaseMs: number | undefined;
}

const notifyLocales = ['vi', 'en'] as const;
export type NotifyLocale = (typeof notifyLocales)[number];

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
  /** MAIL_CONCURRENCY and SMS_CONCURRENCY: sends in flight at once, per channel (4 each). */
  concurrency: { mail: number; sms: number };
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

// --- One setting -----------------------------------------------------------------------------
//
// Every rule's message is the predicate only: the variable's name goes in front of it.

const unsetWhenEmpty = (value: unknown) => (value === '' ? undefined : value);

/** An environment variable set to the empty string counts as unset (`PORT=` in a .env file). */
function setting<T extends z.ZodType>(schema: T) {
  return z.preprocess(unsetWhenEmpty, schema.optional());
}

/** A setting with its value when unset. */
function settingOr<T extends z.ZodType>(schema: T, fallback: z.util.NoUndefined<z.output<T>>) {
  return z.preprocess(unsetWhenEmpty, schema.default(fallback));
}

const got = (issue: { input?: unknown }) => `, got "${String(issue.input)}"`;

/** `a or b`, `a, b or c`. */
function choices(values: readonly string[]): string {
  return values.length < 2
    ? values.join('')
    : `${values.slice(0, -1).join(', ')} or ${values.at(-1)}`;
}

function oneOf<const T extends readonly [string, ...string[]]>(values: T) {
  return z.enum(values, { error: (issue) => `must be ${choices(values)}${got(issue)}` });
}

/** `1`/`true` or `0`/`false`. */
const flag = oneOf(['0', '1', 'false', 'true']).transform(
  (value) => value === '1' || value === 'true',
);

const positiveInteger = z
  .string()
  .regex(/^[1-9]\d*$/, { error: (issue) => `must be a positive integer${got(issue)}` })
  .transform(Number);

const nonNegativeInteger = z
  .string()
  .regex(/^(0|[1-9]\d*)$/, { error: (issue) => `must be 0 or a positive integer${got(issue)}` })
  .transform(Number);

const portNumber = positiveInteger.refine((port) => port <= 65535, {
  error: (issue) => `must be a port number from 1 to 65535${got(issue)}`,
});

/** An absolute http(s) URL, without trailing slashes (paths are appended to it). */
const baseUrl = z
  .string()
  .refine((value) => URL.canParse(value) && /^https?:$/.test(new URL(value).protocol), {
    error: (issue) => `must be an absolute http or https URL${got(issue)}`,
  })
  .transform((value) => value.replace(/\/+$/, ''));

const text = z.string();

/** postgres://user:password@host:port/database (the value itself is never repeated: a password). */
const postgresUrl = z
  .string()
  .trim()
  .refine((value) => URL.canParse(value) && /^postgres(ql)?:$/.test(new URL(value).protocol), {
    error: () => 'must be a postgres:// or postgresql:// URL',
  });

/** A link for people to follow, kept as written. */
const linkUrl = z
  .string()
  .trim()
  .refine((value) => URL.canParse(value) && /^https?:$/.test(new URL(value).protocol), {
    error: (issue) => `must be an absolute http or https URL${got(issue)}`,
  });

/** An absolute http(s) URL, kept as written (a TSA answers at its exact path). */
const absoluteHttpUrl = z
  .string()
  .trim()
  .refine((value) => URL.canParse(value) && /^https?:$/.test(new URL(value).protocol), {
    error: (issue) => `must be an absolute http or https URL${got(issue)}`,
  })
  .refine((value) => !URL.canParse(value) || new URL(value).username === '', {
    error: () => 'may not carry credentials; set TSA_USERNAME and TSA_PASSWORD',
  });
/** A bearer secret set by the operator: long enough that guessing it is hopeless. */
const bearerToken = z
  .string()
  .trim()
  .refine((value) => value.length >= 16, {
    error: () => 'must be at least 16 characters (for example: openssl rand -hex 32)',
  });

/** An S3 bucket name: 3 to 63 lower-case letters, digits, dots and hyphens. */
const bucketName = z
  .string()
  .trim()
  .regex(/^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$/, {
    error: (issue) =>
      `must be a bucket name (3 to 63 lower-case letters, digits, dots and hyphens)${got(issue)}`,
  });

/** Trimmed; only spaces count as unset. */
const trimmed = z
  .string()
  .trim()
  .transform((value) => value || undefined);

/** SMS_HTTP_HEADERS: a JSON object of header names to strings, none the safe client owns. */
const smsHeaders = z.string().transform((raw, context): Record<string, string> => {
  const parsed = z.record(z.string(), z.string()).safeParse(jsonOrNull(raw));
  const refused = parsed.success
    ? Object.keys(parsed.data).find((name) => refusedSmsHeaders.includes(name.toLowerCase()))
    : undefined;
  if (parsed.success && refused === undefined) return parsed.data;
  const message = parsed.success
    ? `may not set ${refused}; set SMS_HTTP_AUTHORIZATION for an Authorization value, or put a gateway key in another header (X-Api-Key), the URL or the body`
    : 'must be a JSON object of header names to strings';
  context.issues.push({ code: 'custom', message, input: raw });
  return z.NEVER;
});

function jsonOrNull(raw: string): unknown {
  try {
    return JSON.parse(raw);
  } catch {
    return null;
  }
}

// --- Every setting ---------------------------------------------------------------------------

/** The environment variables the server reads (the README lists them), each checked alone. */
const EnvironmentSchema = z.object({
  SERVICE_NAME: settingOr(text, 'ESign'),
  HOST: settingOr(text, '127.0.0.1'),
  PORT: settingOr(portNumber, 3000),
  DATA_DIR: settingOr(text, './data'),
  DATABASE_URL: setting(postgresUrl),
  PUBLIC_URL: setting(baseUrl),
  APP_URL: setting(baseUrl),
  APP_ENV: setting(oneOf(appEnvironments)),
  SANDBOX: setting(flag),
  JWT_SECRET: setting(text),
  SECRET_KEY: setting(text),
  LOG_LEVEL: settingOr(
    oneOf(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']),
    'info',
  ),
  TRUST_PROXY: settingOr(flag, false),
  OUTBOUND_ALLOWLIST: settingOr(text, ''),
  RATE_LIMIT_AUTH: settingOr(positiveInteger, 10),
  RATE_LIMIT_API: settingOr(positiveInteger, 100),
  RATE_LIMIT_UPLOAD: settingOr(positiveInteger, 10),
  WEBHOOK_CONCURRENCY: setting(positiveInteger),
  WEBHOOK_POLL_MS: setting(positiveInteger),
  WEBHOOK_LEASE_SECONDS: setting(positiveInteger),
  NOTIFY_LOCALE: settingOr(oneOf(notifyLocales), 'vi'),
  MAIL_FROM: setting(trimmed),
  MAIL_TRANSPORT: settingOr(oneOf(['file', 'smtp']), 'file'),
  SMTP_HOST: setting(trimmed),
  SMTP_PORT: setting(portNumber),
  SMTP_SECURE: settingOr(flag, false),
  SMTP_USER: setting(text),
  SMTP_PASSWORD: setting(text),
  MAIL_CONCURRENCY: settingOr(positiveInteger, 4),
  SMS_CONCURRENCY: settingOr(positiveInteger, 4),
  SMS_PROVIDER: settingOr(oneOf(['file', 'http']), 'file'),
  SMS_HTTP_URL: setting(trimmed),
  SMS_HTTP_METHOD: settingOr(oneOf(['GET', 'POST']), 'POST'),
  SMS_HTTP_HEADERS: setting(smsHeaders),
  SMS_HTTP_BODY_TEMPLATE: setting(text),
  SMS_HTTP_AUTHORIZATION: setting(text),
  TSA_URL: setting(absoluteHttpUrl),
  TSA_USERNAME: setting(text),
  TSA_PASSWORD: setting(text),
  KEYSTORE: settingOr(oneOf(['software', 'pkcs11']), 'software'),
  PKCS11_MODULE: setting(trimmed),
  PKCS11_TOKEN_LABEL: setting(text),
  PKCS11_PIN: setting(text),
  SOFFICE_PATH: settingOr(text, 'soffice'),
  DOCX_CONVERSION_TIMEOUT_SECONDS: settingOr(positiveInteger, 60),
  DOCX_CONVERSION_MEMORY_MB: settingOr(positiveInteger, 1024),
  DOCX_CONVERSION_CONCURRENCY: settingOr(positiveInteger, 1),
  DOCX_CONVERSION_QUEUE: settingOr(nonNegativeInteger, 4),
  AGENT_TICKET_KEY_GENERATION: settingOr(positiveInteger, 1),
  AGENT_DOWNLOAD_URL: setting(linkUrl),
  METRICS_TOKEN: setting(bearerToken),
  FILE_STORE: settingOr(oneOf(['local', 's3']), 'local'),
  S3_ENDPOINT: setting(baseUrl),
  S3_BUCKET: setting(bucketName),
  S3_REGION: settingOr(trimmed, 'us-east-1'),
  S3_ACCESS_KEY_ID: setting(trimmed),
  S3_SECRET_ACCESS_KEY: setting(text),
  S3_FORCE_PATH_STYLE: settingOr(flag, false),
  S3_PRESIGNED_DOWNLOADS: settingOr(flag, false),
});
type Environment = z.infer<typeof EnvironmentSchema>;

/** Rules between settings; each issue names the variable to change. */
function checkCombinations(env: Environment, context: z.core.$RefinementCtx<Environment>): void {
  const refuse = (name: keyof Environment, message: string) =>
    context.addIssue({ code: 'custom', path: [name], message, input: env[name] });
  if (env.APP_ENV === 'production' && env.SANDBOX === true) {
    // Sandbox routing sends every message to the developer account: never in production.
    refuse('SANDBOX', 'cannot be 1 with APP_ENV=production');
  }
  if (env.APP_ENV === 'sandbox' && env.SANDBOX === false) {
    refuse('SANDBOX', 'cannot be 0 with APP_ENV=sandbox (the sandbox always routes to developers)');
  }
  if (env.MAIL_TRANSPORT === 'smtp') {
    if (!env.SMTP_HOST) refuse('SMTP_HOST', 'is required when MAIL_TRANSPORT=smtp');
    if (!env.MAIL_FROM) refuse('MAIL_FROM', 'is required when MAIL_TRANSPORT=smtp');
  }
  if (env.SMS_PROVIDER === 'http') {
    const url = env.SMS_HTTP_URL;
    if (url === undefined || !URL.canParse(url)) {
      refuse('SMS_HTTP_URL', 'must be an absolute https URL when SMS_PROVIDER=http');
    } else if (new URL(url).protocol !== 'https:') {
      refuse('SMS_HTTP_URL', 'must use https');
    }
    if (env.SMS_HTTP_METHOD === 'GET' && env.SMS_HTTP_BODY_TEMPLATE !== undefined) {
      refuse('SMS_HTTP_BODY_TEMPLATE', 'cannot be used with SMS_HTTP_METHOD=GET');
    }
  }
  // Instances on one database must derive the same keys: a master.key made under each DATA_DIR
  // would differ (sealed keys, webhook secrets and tokens of one would not open on another).
  if (env.DATABASE_URL !== undefined && !env.SECRET_KEY) {
    refuse(
      'SECRET_KEY',
      'is required when DATABASE_URL names PostgreSQL: every instance must share one master secret (a master.key under each DATA_DIR would differ)',
    );
  }
  // Production timestamps come from a real TSA: the development TSA never signs there.
  if (env.APP_ENV === 'production' && env.TSA_URL === undefined) {
    refuse('TSA_URL', 'is required when APP_ENV=production (the URL of an RFC 3161 TSA)');
  }
  if (env.TSA_PASSWORD !== undefined && env.TSA_USERNAME === undefined) {
    refuse('TSA_USERNAME', 'is required when TSA_PASSWORD is set');
  }
  if (env.TSA_USERNAME !== undefined && env.TSA_URL === undefined) {
    refuse('TSA_URL', 'is required when TSA_USERNAME is set');
  }
  checkKeyStore(env, refuse);
  checkS3(env, refuse);
}

function checkS3(
  env: Environment,
  refuse: (name: keyof Environment, message: string) => void,
): void {
  if (env.FILE_STORE === 's3' && env.S3_BUCKET === undefined) {
    refuse('S3_BUCKET', 'is required when FILE_STORE=s3');
  }
  if (env.S3_SECRET_ACCESS_KEY !== undefined && env.S3_ACCESS_KEY_ID === undefined) {
    refuse('S3_ACCESS_KEY_ID', 'is required when S3_SECRET_ACCESS_KEY is set');
  }
  if (env.S3_ACCESS_KEY_ID !== undefined && env.S3_SECRET_ACCESS_KEY === undefined) {
    refuse('S3_SECRET_ACCESS_KEY', 'is required when S3_ACCESS_KEY_ID is set');
  }
  if (env.S3_PRESIGNED_DOWNLOADS && env.FILE_STORE !== 's3') {
    refuse('S3_PRESIGNED_DOWNLOADS', 'can only be 1 with FILE_STORE=s3');
  }
}

function s3Settings(env: Environment): S3Settings | undefined {
  if (env.S3_BUCKET === undefined) return undefined;
  const { S3_ACCESS_KEY_ID: accessKeyId, S3_SECRET_ACCESS_KEY: secret } = env;
  return {
    endpoint: env.S3_ENDPOINT,
    bucket: env.S3_BUCKET,
    region: env.S3_REGION ?? 'us-east-1',
    credentials:
      accessKeyId !== undefined && secret !== undefined
        ? { accessKeyId, secretAccessKey: () => secret }
        : undefined,
    forcePathStyle: env.S3_FORCE_PATH_STYLE,
    presignedDownloads: env.S3_PRESIGNED_DOWNLOADS,
  };
}

function checkKeyStore(
  env: Environment,
  refuse: (name: keyof Environment, message: string) => void,
): void {
  if (env.KEYSTORE !== 'pkcs11') return;
  for (const name of ['PKCS11_MODULE', 'PKCS11_TOKEN_LABEL', 'PKCS11_PIN'] as const) {
    if (env[name] === undefined) refuse(name, 'is required when KEYSTORE=pkcs11');
  }
  if (env.PKCS11_MODULE !== undefined && !path.isAbsolute(env.PKCS11_MODULE)) {
    // A relative path would be looked up by the dynamic loader, not from DATA_DIR or the cwd.
    refuse('PKCS11_MODULE', 'must be an absolute path to the PKCS#11 library');
  }
}

function keyStoreSettings(env: Environment): KeyStoreSettings {
  // checkKeyStore made the three PKCS#11 settings present for KEYSTORE=pkcs11.
  const { PKCS11_MODULE: module, PKCS11_TOKEN_LABEL: tokenLabel, PKCS11_PIN: pin } = env;
  if (env.KEYSTORE === 'software' || !module || !tokenLabel || pin === undefined) {
    return { kind: 'software' };
  }
  return { kind: 'pkcs11', module, tokenLabel, pin: () => pin };
}

function mailSettings(env: Environment): MailSettings {
  // checkCombinations made SMTP_HOST present for SMTP.
  if (env.MAIL_TRANSPORT === 'file' || env.SMTP_HOST === undefined) return { transport: 'file' };
  const secure = env.SMTP_SECURE;
  return {
    transport: 'smtp',
    host: env.SMTP_HOST,
    port: env.SMTP_PORT ?? (secure ? 465 : 587),
    secure,
    requireTls: !secure && env.SMTP_USER !== undefined,
    user: env.SMTP_USER,
    password: env.SMTP_PASSWORD,
  };
}

function smsSettings(env: Environment): SmsSettings {
  // checkCombinations made SMS_HTTP_URL present for the HTTP gateway.
  if (env.SMS_PROVIDER === 'file' || env.SMS_HTTP_URL === undefined) return { provider: 'file' };
  const method = env.SMS_HTTP_METHOD;
  const headers = { ...env.SMS_HTTP_HEADERS };
  const hasContentType = Object.keys(headers).some((name) => name.toLowerCase() === 'content-type');
  if (method === 'POST' && !hasContentType) headers['Content-Type'] = 'application/json';
  return {
    provider: 'http',
    // As written: {{to}} and {{text}} may stand in the query and are filled in at send time.
    url: env.SMS_HTTP_URL,
    method,
    headers,
    bodyTemplate:
      method === 'GET' ? '' : (env.SMS_HTTP_BODY_TEMPLATE ?? '{"to":"{{to}}","text":"{{text}}"}'),
    ...(env.SMS_HTTP_AUTHORIZATION ? { authorization: env.SMS_HTTP_AUTHORIZATION } : {}),
  };
}

function configOf(env: Environment, context: z.core.$RefinementCtx<Environment>): Config {
  const dataDir = path.resolve(env.DATA_DIR);
  const publicUrl = env.PUBLIC_URL ?? `http://${env.HOST}:${env.PORT}`;
  const environment = env.APP_ENV ?? (env.SANDBOX ? 'sandbox' : 'development');
  let outboundAllowlist: Allowlist = { hosts: new Set(), ranges: [] };
  try {
    outboundAllowlist = parseAllowlist(env.OUTBOUND_ALLOWLIST);
  } catch (error) {
    if (!(error instanceof ConfigError)) throw error;
    // Its message already names OUTBOUND_ALLOWLIST and the entry.
    context.addIssue({ code: 'custom', path: [], message: error.message, input: env });
  }
  return {
    serviceName: env.SERVICE_NAME,
    host: env.HOST,
    port: env.PORT,
    dataDir,
    databaseFile: path.join(dataDir, 'esign.sqlite'),
    databaseUrl: env.DATABASE_URL,
    publicUrl,
    appUrl: env.APP_URL ?? `${publicUrl}/app`,
    environment,
    sandbox: env.SANDBOX === true || environment === 'sandbox',
    jwtSecret: env.JWT_SECRET,
    secretKey: env.SECRET_KEY,
    logLevel: env.LOG_LEVEL,
    trustProxy: env.TRUST_PROXY,
    outboundAllowlist,
    rateLimits: {
      auth: env.RATE_LIMIT_AUTH,
      api: env.RATE_LIMIT_API,
      upload: env.RATE_LIMIT_UPLOAD,
    },
    webhookJobs: {
      concurrency: env.WEBHOOK_CONCURRENCY,
      pollIntervalMs: env.WEBHOOK_POLL_MS,
      leaseMs:
        env.WEBHOOK_LEASE_SECONDS === undefined ? undefined : env.WEBHOOK_LEASE_SECONDS * 1000,
    },
    notify: {
      locale: env.NOTIFY_LOCALE,
      mailFrom: env.MAIL_FROM ?? `${env.SERVICE_NAME} <no-reply@localhost>`,
      mail: mailSettings(env),
      sms: smsSettings(env),
      concurrency: { mail: env.MAIL_CONCURRENCY, sms: env.SMS_CONCURRENCY },
      mailDir: path.join(dataDir, 'outbox', 'mail'),
      smsDir: path.join(dataDir, 'outbox', 'sms'),
    },
    tsa: { url: env.TSA_URL, username: env.TSA_USERNAME, password: env.TSA_PASSWORD },
    keyStore: keyStoreSettings(env),
    docxConversion: {
      command: env.SOFFICE_PATH,
      timeoutMs: env.DOCX_CONVERSION_TIMEOUT_SECONDS * 1000,
      memoryBytes: env.DOCX_CONVERSION_MEMORY_MB * 1024 * 1024,
      concurrency: env.DOCX_CONVERSION_CONCURRENCY,
      queueLength: env.DOCX_CONVERSION_QUEUE,
    },
    agentTicketKeyGeneration: env.AGENT_TICKET_KEY_GENERATION,
    agentDownloadUrl: env.AGENT_DOWNLOAD_URL ?? `${publicUrl}/agent`,
    metricsToken: env.METRICS_TOKEN,
    fileStore: env.FILE_STORE,
    s3: s3Settings(env),
  };
}

const ConfigSchema = EnvironmentSchema.superRefine(checkCombinations).transform(configOf);

/**
 * Reads every setting from environment variables; the README lists them. An unusable one
 * throws ConfigError naming the variable and the problem (the first found).
 */
export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  const result = ConfigSchema.safeParse(env, { error: plainIssues });
  if (!result.success) throw new ConfigError(firstIssue(result.error));
  return result.data;
}
