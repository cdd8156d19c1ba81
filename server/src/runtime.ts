import fs from 'node:fs';
import path from 'node:path';
import type { AppDeps } from './context';
import { type OpenedDatabase, openDatabase } from './db/database';
import { developmentTimestampAuthority } from './dev/developmentTsa';
import { type Clock, systemClock } from './platform/clock';
import type { Config } from './platform/config';
import { createLogger, type Logger } from './platform/logger';
import { deriveSecrets, loadMasterSecret } from './platform/secrets';
import { httpTimestampAuthority } from './signing/timestamps/client';
import type { TimestampAuthority } from './signing/trustPolicy';
import { FileStore } from './storage/fileStore';
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
  const database = openDatabase(config.databaseFile);
  const secrets = deriveSecrets(
    loadMasterSecret(config.dataDir, config.secretKey),
    config.jwtSecret,
  );
  const clock = options.clock ?? systemClock;
  const files = new FileStore(path.join(config.dataDir, 'files'), clock);
  fs.mkdirSync(files.tempDir, { recursive: true, mode: 0o700 });
  const base = { db: database.db, config, clock, secrets };
  const deps: AppDeps = {
    ...base,
    logger: options.logger ?? createLogger(config.logLevel),
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
 * The TSA signatures ask: TSA_URL through the SSRF-safe outbound client, or without it (never in
 * production: the configuration refuses that) the development TSA, answered in-process. The
 * settings are read at each request, as the configuration is the one place they live.
 */
export function timestampAuthority(
  deps: Pick<AppDeps, 'config' | 'secrets' | 'clock'>,
): TimestampAuthority {
  const development = developmentTimestampAuthority(deps);
  return {
    exchange: (request) => {
      const { url, username, password } = deps.config.tsa;
      if (url === undefined) return development.exchange(request);
      const allowlist = deps.config.outboundAllowlist;
      return httpTimestampAuthority({ url, username, password, allowlist }).exchange(request);
    },
  };
}
