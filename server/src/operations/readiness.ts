import type { AppDeps } from '../context';
import { assertDatabaseWritable } from '../db/readiness';
import { assertKeyStoreUsable } from '../keys/startupState';

/** What GET /readyz checks; `tsa` only when TSA_URL is set (always so in production). */
export type CheckName = 'database' | 'fileStore' | 'keyStore' | 'tsa';
export type CheckResult = 'ok' | 'failed';

export interface Readiness {
  ready: boolean;
  checks: Partial<Record<CheckName, CheckResult>>;
}

/** One check may take this long; past it, it counts as failed (the answer never hangs). */
const checkTimeoutMs = 5000;
/** How long the TSA has to answer its probe. */
const tsaTimeoutMs = 3000;

/**
 * Whether this process can do its work now: the database takes a write (rolled back), the file
 * store takes a file (removed), the key store signs, and the configured TSA answers HTTP. The
 * answer names each check and its result, never why (a path, a host, an error): the reason goes
 * to the log.
 */
export async function readiness(deps: AppDeps): Promise<Readiness> {
  const probes: [CheckName, () => Promise<void>][] = [
    ['database', () => assertDatabaseWritable(deps.db)],
    ['fileStore', () => deps.files.assertWritable()],
    ['keyStore', () => assertKeyStoreUsable(deps)],
  ];
  const tsaUrl = deps.config.tsa.url;
  if (tsaUrl !== undefined) probes.push(['tsa', () => tsaReachable(deps, tsaUrl)]);
  const results = await Promise.all(
    probes.map(async ([name, probe]): Promise<[CheckName, CheckResult]> => {
      try {
        await withTimeout(probe(), checkTimeoutMs);
        return [name, 'ok'];
      } catch (error) {
        deps.logger.warn({ check: name, err: error }, 'readiness check failed');
        return [name, 'failed'];
      }
    }),
  );
  return {
    ready: results.every(([, result]) => result === 'ok'),
    checks: Object.fromEntries(results),
  };
}

/**
 * The TSA answers HTTP at its URL: any status counts (a TSA refuses a GET), so no timestamp is
 * asked for, and none is billed. Through the SSRF-safe client, as timestamps are.
 */
async function tsaReachable(deps: AppDeps, url: string): Promise<void> {
  const result = await deps.fetcher.fetch({
    url,
    method: 'GET',
    timeoutMs: tsaTimeoutMs,
    maxResponseBytes: 1024 * 1024,
  });
  if (result.kind === 'failed') throw new Error(`${result.code}: ${result.message}`);
}

function withTimeout<T>(work: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`no answer in ${ms} ms`)), ms);
  });
  return Promise.race([work, timeout]).finally(() => clearTimeout(timer));
}
