/**
 * The agent's settings: where it listens, which page origins may use it without asking, and
 * which PKCS#11 modules it loads. Stored as JSON in the user's configuration folder; every
 * field the file lacks takes its default, every field it has is checked.
 */
import { randomUUID } from 'node:crypto';
import { mkdir, readFile, rename, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { AGENT_DEFAULT_PORT, checkWebOrigin, firstIssue, plainIssues } from '@esign/shared';
import { z } from 'zod';
import { ConfigurationError } from './errors';

/** Product name; also the folder of the settings file (where Electron keeps its user data). */
export const AGENT_PRODUCT_NAME = 'ESign Agent';

export interface Pkcs11ModuleSetting {
  /** Shown on the settings page, e.g. "VNPT-CA". */
  label: string;
  /** Absolute path of the PKCS#11 library (.so, .dll, .dylib). */
  path: string;
  /** A disabled module stays listed but is not loaded. */
  enabled: boolean;
  /**
   * True for the defaults below, which the user may edit or disable like any other entry.
   * Defaults whose file is absent are simply skipped when tokens are listed.
   */
  builtIn: boolean;
  /**
   * Signature mechanisms the agent must not use with this module's tokens although they
   * advertise them (firmware that fails on them). Set by support staff; the settings page only
   * keeps it.
   */
  avoidMechanisms: AgentMechanism[];
}

/** The PKCS#11 signature mechanisms the agent uses, by their PKCS#11 names. */
export const AGENT_MECHANISMS = [
  'CKM_SHA256_RSA_PKCS',
  'CKM_RSA_PKCS',
  'CKM_ECDSA',
  'CKM_ECDSA_SHA256',
] as const;
export type AgentMechanism = (typeof AGENT_MECHANISMS)[number];

export interface AgentSettings {
  /** TCP port of the WebSocket server on 127.0.0.1. */
  port: number;
  /**
   * Origins (`https://host[:port]`) whose pages may connect without asking. Any other origin
   * needs the user's approval in the agent, which is remembered by adding it here.
   */
  allowedOrigins: string[];
  /** Tried in order; several modules, tokens and certificates per token are normal. */
  pkcs11Modules: Pkcs11ModuleSetting[];
  /**
   * How often (ms) tokens are looked for: slot lists re-read, modules whose file appeared
   * loaded, and modules re-initialized while idle (many only see a token plugged in after
   * C_Initialize).
   */
  tokenPollIntervalMs: number;
  /** The timestamp authority used when a `sign` request names none. */
  tsaUrl: string | null;
  /** Fetch missing issuer certificates from the AIA caIssuers URL of a certificate. */
  fetchIssuers: boolean;
  /**
   * Signing servers (origins) whose signing tickets the agent accepts; a ticket from any other
   * server is refused. Their keys are fetched once and pinned in `pinnedTicketKeys`.
   */
  ticketServers: string[];
  /** Refuse every `sign` without a valid ticket (signing servers, managed desktops). */
  requireTicket: boolean;
  /** The ticket keys pinned per server on first use; removing an entry makes it fetch again. */
  pinnedTicketKeys: Record<string, TicketKey[]>;
  /** The language of the agent's windows and tray menu. */
  language: 'vi' | 'en';
  /** Start the agent when the user logs in (the Electron shell applies it). */
  startAtLogin: boolean;
}

/** A server's public ticket key as its JWKS publishes it (EC P-256, ES256). */
export interface TicketKey {
  kty: 'EC';
  crv: 'P-256';
  x: string;
  y: string;
  kid: string;
}

/** What the defaults and the settings file's location depend on. */
export interface AgentHostInfo {
  platform: NodeJS.Platform;
  /** As `process.arch`: `x64`, `arm64`, ... */
  arch: string;
  env: NodeJS.ProcessEnv;
  homeDir: string;
}

export function currentHost(): AgentHostInfo {
  return {
    platform: process.platform,
    arch: process.arch,
    env: process.env,
    homeDir: os.homedir(),
  };
}

// --- Default PKCS#11 modules ---------------------------------------------------------------
//
// Defaults only: the user edits them on the settings page when a token's middleware lives
// elsewhere. File names are the ones the vendors' own installers and web signing plugins use
// (VNPT-CA's plugin driver list, Viettel-CA's sign plugin library list, BKAV-CA's plugin list);
// the folders are where those installers put them (System32 on Windows). We never ship vendor
// libraries: each token needs the middleware of the CA that issued it. On 64-bit Windows a
// 64-bit agent loads the 64-bit copies the installers put in System32 (SysWOW64 holds the
// 32-bit ones, which it cannot load).

const LINUX_MULTIARCH: Record<string, string> = {
  x64: 'x86_64-linux-gnu',
  arm64: 'aarch64-linux-gnu',
  arm: 'arm-linux-gnueabihf',
  ia32: 'i386-linux-gnu',
};

function linuxModules(arch: string): Array<[label: string, path: string]> {
  const multiarch = `/usr/lib/${LINUX_MULTIARCH[arch] ?? 'x86_64-linux-gnu'}`;
  return [
    // SoftHSM2 (Debian/Ubuntu package softhsm2): development, tests and signing servers. On
    // Debian the first is a link to the second, so modules must be loaded once per real file.
    ['SoftHSM2', '/usr/lib/softhsm/libsofthsm2.so'],
    ['SoftHSM2', `${multiarch}/softhsm/libsofthsm2.so`],
    // OpenSC (package opensc-pkcs11): drives many USB tokens, Feitian ePass2003 among them.
    ['OpenSC', `${multiarch}/opensc-pkcs11.so`],
    // Vietnamese CAs publish Windows and macOS middleware; on Linux their tokens go through
    // OpenSC or the chip vendor's library (the user adds it here).
    ['Feitian ePass2003', '/usr/lib/libcastle.so.1.0.0'],
    ['SafeNet eToken', '/usr/lib/libeTPkcs11.so'],
  ];
}

function windowsModules(env: NodeJS.ProcessEnv): Array<[label: string, path: string]> {
  const system32 = path.win32.join(env.SystemRoot ?? 'C:\\Windows', 'System32');
  const inSystem32 = (file: string) => path.win32.join(system32, file);
  return [
    ['VNPT-CA', inSystem32('vnptca_p11_v8.dll')],
    ['VNPT-CA (older tokens)', inSystem32('vnpt-ca_csp11.dll')],
    ['Viettel-CA', inSystem32('viettel-ca_v6.dll')],
    ['Viettel-CA (v5)', inSystem32('viettel-ca_v5.dll')],
    ['BKAV-CA', inSystem32('BkavCA.dll')],
    ['BKAV-CA (v2)', inSystem32('BkavCAv2S.dll')],
    ['FPT-CA', inSystem32('fpt-ca.dll')],
    ['FPT-CA (v3)', inSystem32('fptca_v3.dll')],
    ['Feitian ePass2003', inSystem32('eps2003csp11.dll')],
    ['SafeNet eToken', inSystem32('eTPKCS11.dll')],
    ['OpenSC', 'C:\\Program Files\\OpenSC Project\\OpenSC\\pkcs11\\opensc-pkcs11.dll'],
  ];
}

function macosModules(arch: string): Array<[label: string, path: string]> {
  return [
    // Viettel-CA's plugin loads viettel-ca_v6.dylib; /usr/local/lib is the usual folder.
    ['Viettel-CA', '/usr/local/lib/viettel-ca_v6.dylib'],
    ['Feitian ePass2003', '/usr/local/lib/libcastle.1.0.0.dylib'],
    ['SafeNet eToken', '/usr/local/lib/libeTPkcs11.dylib'],
    ['OpenSC', '/Library/OpenSC/lib/opensc-pkcs11.so'],
    // Homebrew's SoftHSM2, for development.
    ['SoftHSM2', `${arch === 'arm64' ? '/opt/homebrew' : '/usr/local'}/lib/softhsm/libsofthsm2.so`],
  ];
}

/** The built-in module list for a platform; empty where we know of none. */
export function defaultPkcs11Modules(host: AgentHostInfo): Pkcs11ModuleSetting[] {
  const entries =
    host.platform === 'win32'
      ? windowsModules(host.env)
      : host.platform === 'darwin'
        ? macosModules(host.arch)
        : host.platform === 'linux'
          ? linuxModules(host.arch)
          : [];
  return entries.map(([label, modulePath]) => ({
    label,
    path: modulePath,
    enabled: true,
    builtIn: true,
    avoidMechanisms: [],
  }));
}

export function defaultSettings(host: AgentHostInfo): AgentSettings {
  return {
    port: AGENT_DEFAULT_PORT,
    allowedOrigins: [],
    pkcs11Modules: defaultPkcs11Modules(host),
    tokenPollIntervalMs: DEFAULT_TOKEN_POLL_INTERVAL_MS,
    tsaUrl: null,
    fetchIssuers: true,
    ticketServers: [],
    requireTicket: false,
    pinnedTicketKeys: {},
    language: 'vi',
    startAtLogin: true,
  };
}

const DEFAULT_TOKEN_POLL_INTERVAL_MS = 1500;

// --- Checking ------------------------------------------------------------------------------

function isAbsoluteFor(platform: NodeJS.Platform, modulePath: string): boolean {
  return platform === 'win32'
    ? path.win32.isAbsolute(modulePath)
    : path.posix.isAbsolute(modulePath);
}

const nonEmptyMessage = 'must be a non-empty string';
const nonEmptyString = z
  .string({ error: nonEmptyMessage })
  .refine((value) => value.trim() !== '', nonEmptyMessage);

/** An integer from `min` to `max`; any other value is refused saying the range and what came. */
function integerFrom(min: number, max: number, unit = '') {
  const error = (issue: { input?: unknown }) =>
    `must be an integer from ${min} to ${max}${unit}, got ${String(issue.input)}`;
  return z.number({ error }).int({ error }).min(min, { error }).max(max, { error });
}

/**
 * An origin as the user (or a policy file) wrote it, reduced to its canonical form, or refused
 * with why: the settings and the headless policy read origins with this one schema.
 */
export const webOriginSchema = nonEmptyString.transform((value, context) => {
  const checked = checkWebOrigin(value);
  if (checked.ok) return checked.origin;
  context.issues.push({ code: 'custom', message: checked.reason, input: value });
  return z.NEVER;
});

/** A list of origins, each canonical, each once. */
const originList = z
  .array(webOriginSchema)
  .transform((origins) => [...new Set(origins)])
  .default([]);

const base64url = z.string().regex(/^[A-Za-z0-9_-]{1,200}$/, 'must be base64url');

/** One pinned ticket key (fields a JWKS adds beside these are dropped). */
export const ticketKeySchema = z.object({
  kty: z.literal('EC'),
  crv: z.literal('P-256'),
  x: base64url,
  y: base64url,
  kid: z.string().min(1).max(200),
});

/**
 * The settings file's shape for the platform the agent runs on: every field the file lacks
 * takes its default; fields it does not know are dropped (an older agent reading a newer file).
 * A file that lists `pkcs11Modules` replaces the default list (so the user's edits and removals
 * stay).
 */
function settingsSchema(host: AgentHostInfo) {
  const modulePath = nonEmptyString.refine((value) => isAbsoluteFor(host.platform, value), {
    error: (issue) => `must be an absolute path, got "${String(issue.input)}"`,
  });
  const moduleSetting = z.object({
    label: nonEmptyString,
    path: modulePath,
    enabled: z.boolean().default(true),
    builtIn: z.boolean().default(false),
    avoidMechanisms: z
      .array(
        z.enum(AGENT_MECHANISMS, {
          error: (issue) =>
            `must be one of ${AGENT_MECHANISMS.join(', ')}, got ${JSON.stringify(issue.input)}`,
        }),
      )
      .transform((names) => [...new Set(names)])
      .default([]),
  });
  return z.object({
    port: integerFrom(1024, 65535).default(AGENT_DEFAULT_PORT),
    allowedOrigins: originList,
    pkcs11Modules: z.array(moduleSetting).default(() => defaultPkcs11Modules(host)),
    tokenPollIntervalMs: integerFrom(100, 60_000, ' (ms)').default(DEFAULT_TOKEN_POLL_INTERVAL_MS),
    tsaUrl: nonEmptyString
      .refine(
        (value) => URL.canParse(value) && /^https?:$/.test(new URL(value).protocol),
        'must be an http(s) URL',
      )
      .nullable()
      .default(null),
    fetchIssuers: z.boolean().default(true),
    ticketServers: originList,
    requireTicket: z.boolean().default(false),
    pinnedTicketKeys: z.record(webOriginSchema, z.array(ticketKeySchema).min(1)).default({}),
    language: z.enum(['vi', 'en']).default('vi'),
    startAtLogin: z.boolean().default(true),
  }) satisfies z.ZodType<AgentSettings>;
}

/** Settings checked, or the first reason they are not (`allowedOrigins[1] "http://b.vn" must use https ...`). */
export type SettingsCheck = { ok: true; settings: AgentSettings } | { ok: false; reason: string };

/** Checks settings read from a file or changed on the settings page, filling what is missing. */
export function checkSettings(raw: unknown, host: AgentHostInfo): SettingsCheck {
  const result = settingsSchema(host).safeParse(raw, { error: plainIssues });
  return result.success
    ? { ok: true, settings: result.data }
    : { ok: false, reason: firstIssue(result.error, (where) => where || 'settings') };
}

// --- Storage -------------------------------------------------------------------------------

/** The settings file, in the folder Electron uses for this product's user data. */
export function settingsFilePath(host: AgentHostInfo): string {
  const { env, homeDir } = host;
  if (host.platform === 'win32') {
    const appData = env.APPDATA ?? path.win32.join(homeDir, 'AppData', 'Roaming');
    return path.win32.join(appData, AGENT_PRODUCT_NAME, 'settings.json');
  }
  const configDir =
    host.platform === 'darwin'
      ? path.posix.join(homeDir, 'Library', 'Application Support')
      : (env.XDG_CONFIG_HOME ?? path.posix.join(homeDir, '.config'));
  return path.posix.join(configDir, AGENT_PRODUCT_NAME, 'settings.json');
}

/**
 * The user's folder of intermediate CA certificates (DER or PEM, one per file) beside the
 * settings file: added to the bundled ones when a signer's chain is built.
 */
export function intermediatesDirectory(settingsFile: string): string {
  return besideSettings(settingsFile, 'intermediates');
}

/**
 * The signing-ticket nonces spent on this computer, beside the settings file: kept across
 * restarts so that a used ticket stays used.
 */
export function spentTicketsFile(settingsFile: string): string {
  return besideSettings(settingsFile, 'spent-tickets.json');
}

function besideSettings(settingsFile: string, name: string): string {
  const paths = settingsFile.includes('\\') ? path.win32 : path.posix;
  return paths.join(paths.dirname(settingsFile), name);
}

/** Reads the settings file; a missing file means the defaults. */
export async function loadSettings(file: string, host: AgentHostInfo): Promise<AgentSettings> {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return defaultSettings(host);
    throw error;
  }
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch {
    throw new ConfigurationError(`${file} is not valid JSON`);
  }
  const checked = checkSettings(raw, host);
  if (!checked.ok) throw new ConfigurationError(`${file}: ${checked.reason}`);
  return checked.settings;
}

/**
 * Writes one of the agent's files whole, readable by the user only: a temporary file, then a
 * rename, so that a crash leaves the old content or the new, never half of it.
 */
export async function writePrivateFile(file: string, text: string): Promise<void> {
  await mkdir(path.dirname(file), { recursive: true });
  const temporary = `${file}.${randomUUID()}.tmp`;
  await writeFile(temporary, text, { mode: 0o600 });
  await rename(temporary, file);
}

/** Writes the settings file whole, readable by the user only. */
export async function saveSettings(file: string, settings: AgentSettings): Promise<void> {
  await writePrivateFile(file, `${JSON.stringify(settings, null, 2)}\n`);
}
