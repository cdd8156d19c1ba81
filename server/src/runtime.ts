import fs from 'node:fs';
import path from 'node:path';
import { CodedError } from '@esign/shared';
import type { AppDeps } from './context';
import { type OpenedDatabase, openConfiguredDatabase } from './db/database';
import { developmentTimestampAuthority } from './dev/developmentTsa';
import { ConfigError } from './errors/configError';
import type { Allowlist } from './outbound/addressPolicy';
import { outboundCodes, type Resolver, safeHttpsRequest } from './outbound/safeFetch';
import { type Clock, systemClock } from './platform/clock';
import type { Config } from './platform/config';
import { CredentialCache, credentialTables } from './platform/credentialCache';
import { createLogger, type Logger } from './platform/logger';
import { deriveSecrets, loadMasterSecret } from './platform/secrets';
import type { Fetcher, FetchRequest, FetchResult } from './signing/fetcher';
import { httpTimestampAuthority } from './signing/timestamps/client';
import type { TimestampAuthority } from './signing/trustPolicy';
import { openFileStore } from './storage/openFileStore';
import { trustPolicies } from './trust/policies';

export interface Runtime {
  deps: AppDeps;
  database: OpenedDatabase;
}

/** Opens what the server and the operator CLI share: the SQLite file, the file store and the derived secrets. */
export function openRuntime(
  config: Config,
  options: { logger?: Logger; clock?: Clock } = {},
): Runtime {
  assertWritableDirectory(config.dataDir);
  const database = openConfiguredDatabase(config);
  const secrets = deriveSecrets(
    loadMasterSecret(config.dataDir, config.secretKey),
    config.jwtSecret,
  );
  const clock = options.clock ?? systemClock;
  const files = openFileStore(config, clock);
  fs.mkdirSync(files.tempDir, { recursive: true, mode: 0o700 });
  const fetcher = engineFetcher({ allowlist: config.outboundAllowlist });
  const base = { db: database.db, config, clock, secrets, fetcher };
  const deps: AppDeps = {
    ...base,
    logger: options.logger ?? createLogger(config.logLevel),
    credentials: new CredentialCache({ version: database.watch(credentialTables) }),
    files,
    trust: trustPolicies(base),
    timestamps: timestampAuthority(base),
  };
  if (config.environment !== 'production') {
    // The development CA's certificates name /api/dev/ocsp; asking it over HTTP would loop
    // back through the SSRF guard, so the checks ask it here. Loaded on first use.
    deps.localOcsp = async (issuer, request) => {
      const { localDevelopmentOcsp } = await import('./dev/ocspResponder');
      return localDevelopmentOcsp(deps, issuer, request);
    };
  }
  return { database, deps };
}

/**
 * DATA_DIR exists (made if missing) and takes files: a probe written, fsynced and removed.
 * Otherwise a ConfigError in one line, before the database or anything else is opened there.
 */
export function assertWritableDirectory(dir: string): void {
  const probe = path.join(dir, `.write-probe-${process.pid}`);
  try {
    fs.mkdirSync(dir, { recursive: true });
    const fd = fs.openSync(probe, 'w', 0o600);
    try {
      fs.fsyncSync(fd);
    } finally {
      fs.closeSync(fd);
      fs.rmSync(probe, { force: true });
    }
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === undefined) throw error;
    throw new ConfigError(
      `DATA_DIR ${dir} is not a writable directory (${code}: ${reasons[code] ?? (error as Error).message})`,
    );
  }
}

const reasons: Record<string, string> = {
  ENOTDIR: 'a part of the path is a file',
  EACCES: 'permission denied',
  EPERM: 'operation not permitted',
  EROFS: 'read-only file system',
  ENOSPC: 'no space left on the device',
  EEXIST: 'it exists and is not a directory',
  EISDIR: 'the probe file is a directory',
};

/**
 * The TSA signatures ask: TSA_URL through the engine's fetcher (the SSRF-safe outbound client), or without it (never in
 * production: the configuration refuses that) the development TSA, answered in-process. The
 * settings are read at each request, as the configuration is the one place they live.
 */
export function timestampAuthority(
  deps: Pick<AppDeps, 'db' | 'config' | 'secrets' | 'clock' | 'fetcher'>,
): TimestampAuthority {
  const development = developmentTimestampAuthority(deps);
  return {
    exchange: (request) => {
      const { url, username, password } = deps.config.tsa;
      if (url === undefined) return development.exchange(request);
      return httpTimestampAuthority({ url, username, password, fetcher: deps.fetcher }).exchange(
        request,
      );
    },
  };
}

export interface EngineFetcherOptions {
  allowlist: Allowlist;
  /** Tests only: how host names resolve. */
  resolver?: Resolver;
}

/**
 * The signing engine's fetcher (OCSP, CRL, an HTTP TSA) over the SSRF-safe client: the
 * address policy and allow-list, one deadline, a capped body, no redirects. Plain `http:` is
 * allowed, as everything the engine fetches is signed and judged before it is used. Refusals of
 * the outbound client come back as `failed`; anything else thrown is a fault and propagates.
 */
export function engineFetcher(options: EngineFetcherOptions): Fetcher {
  return { fetch: (request) => fetchOnce(options, request) };
}

async function fetchOnce(
  options: EngineFetcherOptions,
  request: FetchRequest,
): Promise<FetchResult> {
  try {
    const response = await safeHttpsRequest(request.url, {
      method: request.method,
      ...(request.headers ? { headers: request.headers } : {}),
      ...(request.body ? { body: request.body } : {}),
      ...(request.authorization !== undefined ? { authorization: request.authorization } : {}),
      allowlist: options.allowlist,
      ...(options.resolver ? { resolver: options.resolver } : {}),
      allowPlainHttp: true,
      timeoutMs: request.timeoutMs,
      maxResponseBytes: request.maxResponseBytes,
    });
    if (response.status !== 200) {
      response.discard();
      return { kind: 'status', status: response.status };
    }
    const contentType = response.headers['content-type'] ?? '';
    return { kind: 'ok', contentType, body: await response.readAll() };
  } catch (error) {
    if (!(error instanceof CodedError)) throw error;
    return {
      kind: 'failed',
      timeout: error.code === outboundCodes.timeout,
      code: error.code,
      message: error.message,
    };
  }
}
