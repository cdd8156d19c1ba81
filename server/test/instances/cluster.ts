import { execFileSync } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import {
  type PostgresCluster,
  postgresUrlVariable,
  startPostgresCluster,
} from '../../../test/support/postgres';
import { recordIssuedSecret, recordSecretsOfBody } from '../../../test/support/runLog';
import { loadConfig } from '../../src/platform/config';
import { openRuntime, type Runtime } from '../../src/runtime';
import {
  type BuiltServer,
  ensureBuilt,
  startBuiltServer,
  tempDataDir,
} from '../startup/builtServer';
import { recordOutboxSecrets } from '../support/issuedSecrets';
import { type S3Peer, startS3Peer } from '../support/s3Peer';
import { testLogger } from '../support/testLogger';

/**
 * Several built servers (`node server/dist/main.js`) on one PostgreSQL database and one S3
 * bucket (s3rver), with one SECRET_KEY and each its own DATA_DIR, as docs/scale-out.md lays
 * them out. The database is a new one on the run's PostgreSQL cluster (ESIGN_TEST_PG_URL, which
 * jest's global setup starts for the postgres project), or on a cluster started here when the run
 * has none. `runtime` is this process's own view of the same database and bucket, to read what
 * the instances wrote and to write what a test cannot reach through the API cheaply.
 */
export interface Cluster {
  servers: BuiltServer[];
  databaseUrl: string;
  secretKey: string;
  /** The environment every instance was started with (plus its DATA_DIR). */
  env: Record<string, string>;
  dataDirs: string[];
  s3: S3Peer;
  runtime: Runtime;
  /** SIGKILL: the process dies at once, whatever it was doing. */
  kill(server: BuiltServer): Promise<void>;
  stop(): Promise<void>;
}

export async function startCluster(
  count: number,
  extraEnv: Record<string, string>,
): Promise<Cluster> {
  ensureBuilt();
  let ownCluster: PostgresCluster | undefined;
  let base = process.env[postgresUrlVariable];
  if (!base) {
    ownCluster = await startPostgresCluster();
    base = ownCluster.baseUrl;
  }
  const name = `multi_${process.pid}_${crypto.randomBytes(3).toString('hex')}`;
  execFileSync('psql', [`${base}/postgres`, '-qXc', `CREATE DATABASE ${name}`]);
  const databaseUrl = `${base}/${name}`;
  const secretKey = crypto.randomBytes(32).toString('base64');
  const s3 = await startS3Peer();
  const env: Record<string, string> = {
    APP_ENV: 'development',
    LOG_LEVEL: 'info',
    DATABASE_URL: databaseUrl,
    SECRET_KEY: secretKey,
    FILE_STORE: 's3',
    ...s3.env,
    ...extraEnv,
  };
  for (const variable of ['TMPDIR', 'NODE_EXTRA_CA_CERTS']) {
    const value = process.env[variable];
    if (value !== undefined) env[variable] = value;
  }
  const dataDirs: string[] = [];
  const servers: BuiltServer[] = [];
  const start = async () => {
    const dataDir = tempDataDir();
    dataDirs.push(dataDir);
    const server = await startBuiltServer({ ...env, DATA_DIR: dataDir });
    servers.push(server);
    return server;
  };
  const runtimeDir = tempDataDir();
  dataDirs.push(runtimeDir);
  let runtime: Runtime | undefined;
  const stop = async () => {
    await Promise.all(servers.map((server) => server.stop()));
    await runtime?.database.close();
    await s3.close();
    for (const dir of dataDirs) {
      recordOutboxSecrets(dir, 'multi-instance outbox');
      fs.rmSync(dir, { recursive: true, force: true });
    }
    ownCluster?.stop();
  };
  try {
    // The first instance alone: it migrates the new database, seeds the demo tenant and makes
    // the development CA and the seal; the others start on what it made, at the same time.
    const first = await start();
    await waitForLog(first, 'signing keys ready', 90_000);
    await Promise.all(Array.from({ length: count - 1 }, start));
    runtime = openRuntime(loadConfig({ ...env, DATA_DIR: runtimeDir }), { logger: testLogger() });
    await runtime.database.ready();
  } catch (error) {
    await stop();
    throw error;
  }
  return {
    servers,
    databaseUrl,
    secretKey,
    env,
    dataDirs,
    s3,
    runtime,
    kill: async (server) => {
      process.kill(server.pid, 'SIGKILL');
      await server.stop();
    },
    stop,
  };
}

export async function waitForLog(server: BuiltServer, text: string, timeoutMs: number) {
  for (let waited = 0; !server.stdout().includes(text); waited += 200) {
    if (waited > timeoutMs) throw new Error(`no "${text}" in ${timeoutMs} ms:\n${server.stdout()}`);
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}

export interface Answer<T = unknown> {
  status: number;
  body: T;
  /** The port of the instance that answered. */
  port: number;
}

/**
 * The client side of a load balancer, without a proxy: request i goes to instance i mod N of
 * those still up (a balancer takes a dead instance out of its pool; `drop` does that here).
 * Every answer's credentials are noted for the run's check of the logs.
 */
export class RoundRobin {
  private next = 0;
  private readonly up: BuiltServer[];

  constructor(servers: readonly BuiltServer[]) {
    this.up = [...servers];
  }

  /** The instance the next request goes to (and advances). */
  pick(): BuiltServer {
    const server = this.up[this.next % this.up.length]!;
    this.next += 1;
    return server;
  }

  drop(server: BuiltServer): void {
    this.up.splice(this.up.indexOf(server), 1);
  }

  isUp(server: BuiltServer): boolean {
    return this.up.includes(server);
  }

  /** One request to the next instance; JSON answers parsed, others as bytes. */
  async request<T = Record<string, unknown>>(
    method: string,
    path: string,
    options: {
      key?: string;
      json?: unknown;
      form?: FormData;
      headers?: Record<string, string>;
    } = {},
  ): Promise<Answer<T>> {
    const server = this.pick();
    return send<T>(server, method, path, options);
  }
}

export async function send<T>(
  server: BuiltServer,
  method: string,
  path: string,
  options: { key?: string; json?: unknown; form?: FormData; headers?: Record<string, string> },
): Promise<Answer<T>> {
  const headers: Record<string, string> = { ...options.headers };
  if (options.key) headers['X-API-Key'] = options.key;
  let body: string | FormData | undefined = options.form;
  if (options.json !== undefined) {
    headers['Content-Type'] = 'application/json';
    body = JSON.stringify(options.json);
  }
  const response = await fetch(`http://127.0.0.1:${server.port}${path}`, {
    method,
    headers,
    ...(body === undefined ? {} : { body }),
  });
  const bytes = Buffer.from(await response.arrayBuffer());
  const type = response.headers.get('content-type') ?? '';
  if (/json/.test(type)) {
    const text = bytes.toString('utf8');
    recordSecretsOfBody(text, `${method} ${path.replace(/[A-Za-z0-9_-]{16,}/g, '…')}`);
    return { status: response.status, body: JSON.parse(text) as T, port: server.port };
  }
  return { status: response.status, body: bytes as T, port: server.port };
}

/** Notes a credential handed to the test outside an HTTP answer (the CLI's API key). */
export const noteSecret = recordIssuedSecret;
