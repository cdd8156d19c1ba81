import path from 'node:path';
import { type Allowlist, parseAllowlist } from '../outbound/addressPolicy';
import { ConfigError } from './configError';

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
  };
}
