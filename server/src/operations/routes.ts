import crypto from 'node:crypto';
import { Hono } from 'hono';
import type { AppDeps, AppEnv } from '../context';
import { DomainError } from '../errors/domainError';
import { errorAnswer } from '../http/errorStatuses';
import { jobCountsByKind } from '../jobs/queries';
import { metrics, metricsContentType, metricsText } from '../metrics';
import { readiness } from './readiness';

/**
 * What an operator's probes and Prometheus ask (docs/operations.md), outside /api and not in the
 * OpenAPI document (they are not the partner API):
 * - GET /healthz: liveness, the process answers; nothing else is looked at. /health is the same.
 * - GET /readyz: 200 when every check holds, 503 naming the ones that failed.
 * - GET /metrics: the Prometheus text format, with `Authorization: Bearer <METRICS_TOKEN>`;
 *   404 while METRICS_TOKEN is unset, as if there were no such route.
 */
export function operationsRoutes(): Hono<AppEnv> {
  const routes = new Hono<AppEnv>();
  const alive = { status: 'ok' } as const;
  routes.get('/healthz', (c) => c.json(alive));
  routes.get('/health', (c) => c.json(alive));

  routes.get('/readyz', async (c) => {
    const { ready, checks } = await readiness(c.get('deps'));
    c.header('Cache-Control', 'no-store');
    return ready
      ? c.json({ status: 'ready', checks }, 200)
      : c.json({ status: 'not_ready', checks }, 503);
  });

  routes.get('/metrics', async (c) => {
    const deps = c.get('deps');
    const expected = deps.config.metricsToken;
    if (expected === undefined) {
      throw new DomainError('NOT_FOUND', `No route for ${c.req.method} ${c.req.path}`);
    }
    const presented = /^Bearer +(\S+) *$/i.exec(c.req.header('authorization') ?? '')?.[1];
    if (presented === undefined || !sameToken(presented, expected)) {
      const answer = errorAnswer(
        new DomainError('UNAUTHORIZED', 'Send the metrics token: Authorization: Bearer <token>'),
      );
      c.header('WWW-Authenticate', 'Bearer realm="metrics"');
      return c.json(answer.body, answer.status);
    }
    await readJobCounts(deps);
    c.header('Cache-Control', 'no-store');
    return c.body(await metricsText(), 200, { 'Content-Type': metricsContentType });
  });
  return routes;
}

/** Compared as SHA-256 digests: equal lengths, constant time, nothing learnt from the length. */
function sameToken(presented: string, expected: string): boolean {
  const digest = (value: string) => crypto.createHash('sha256').update(value, 'utf8').digest();
  return crypto.timingSafeEqual(digest(presented), digest(expected));
}

/** The queue's gauges, read from the jobs table at each scrape. */
async function readJobCounts(deps: AppDeps): Promise<void> {
  const counts = await jobCountsByKind(deps.db);
  metrics.jobsPending.reset();
  metrics.jobsFailed.reset();
  for (const { kind, pending, failed } of counts) {
    metrics.jobsPending.set({ kind }, Number(pending));
    metrics.jobsFailed.set({ kind }, Number(failed));
  }
}
