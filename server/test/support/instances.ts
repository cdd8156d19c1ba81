import { type App, buildApp } from '../../src/app';
import type { AppDeps } from '../../src/context';
import { openRuntime } from '../../src/runtime';
import { type Harness, requestVia } from './harness';
import { recordAnswers } from './issuedSecrets';
import { testLogger } from './testLogger';

/** Another server instance behind the same address: its own runtime and app, one database. */
export interface Instance {
  app: App;
  deps: AppDeps;
  request: Harness['request'];
  close(): Promise<void>;
}

/**
 * A second instance of the harness's server: a runtime opened anew from the same settings (so
 * the same database and data directory), its own process state (caches, limiter objects),
 * on the harness's clock. Closing it leaves the harness open.
 */
export function anotherInstance(h: Harness): Instance {
  const runtime = openRuntime(h.deps.config, { logger: testLogger(), clock: h.clock });
  const app = recordAnswers(buildApp(runtime.deps));
  return {
    app,
    deps: runtime.deps,
    request: requestVia(app),
    close: () => runtime.database.close(),
  };
}
