import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { databaseEnv } from '../../../test/support/postgres';
import { recordIssuedSecret } from '../../../test/support/runLog';
import { type App, buildApp } from '../../src/app';
import { createApiKey, type IssuedKey, type NewKey } from '../../src/auth/apiKeys';
import type { AppDeps } from '../../src/context';
import { inTransaction } from '../../src/db/database';
import { insertUser, replaceMemberships, type UserFields } from '../../src/directory/userRecords';
import { ManualClock } from '../../src/platform/clock';
import { loadConfig } from '../../src/platform/config';
import { hashPassword } from '../../src/platform/passwords';
import { openRuntime, type Runtime } from '../../src/runtime';
import { createTenant } from '../../src/tenancy/service';
import { recordAnswers, recordOutboxSecrets } from './issuedSecrets';
import { testLogger } from './testLogger';

export interface Harness {
  app: App;
  deps: AppDeps;
  clock: ManualClock;
  runtime: Runtime;
  dataDir: string;
  now(): string;
  /** Sends a request to the app without a socket; `json` bodies get their content type. */
  request(
    method: string,
    url: string,
    options?: { headers?: Record<string, string>; json?: unknown; body?: string },
  ): Promise<Response>;
  close(): Promise<void>;
}

/**
 * A real app on a real SQLite file in a fresh temp directory, with a manual clock. Rate limits
 * are lifted unless a test passes its own environment. It logs at trace into the jest run's log
 * directory, and the credentials it hands out (answers, outboxes) are noted there, so that the
 * run's teardown can prove no log holds one (test/support/runLog.ts).
 */
export function createHarness(
  env: Record<string, string> = {},
  options: {
    /**
     * Another instance: its own DATA_DIR, the database of `sameDatabaseAs` (give both the same
     * SECRET_KEY). Close it before the harness whose database it shares.
     */
    sameDatabaseAs?: Harness;
  } = {},
): Harness {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'esign-test-'));
  const loaded = loadConfig({
    DATA_DIR: dataDir,
    APP_ENV: 'development',
    PUBLIC_URL: 'http://127.0.0.1:3000',
    RATE_LIMIT_AUTH: '100000',
    RATE_LIMIT_API: '100000',
    RATE_LIMIT_UPLOAD: '100000',
    // The PostgreSQL project runs every harness on a database of its own (jest.config.js).
    ...databaseEnv(env.DATA_DIR ?? dataDir),
    ...env,
  });
  const shared = options.sameDatabaseAs?.deps.config;
  const config = shared
    ? {
        ...loaded,
        databaseFile: shared.databaseFile,
        ...(shared.databaseUrl !== undefined ? { databaseUrl: shared.databaseUrl } : {}),
      }
    : loaded;
  const clock = new ManualClock('2026-11-25T08:00:00.000Z');
  const runtime = openRuntime(config, { logger: testLogger(), clock });
  const app = recordAnswers(buildApp(runtime.deps));
  return {
    app,
    deps: runtime.deps,
    clock,
    runtime,
    dataDir,
    now: () => clock.now().toISOString(),
    request: requestVia(app),
    close: async () => {
      await runtime.database.close();
      recordOutboxSecrets(dataDir, 'development outbox');
      fs.rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

/** `Harness.request` on `app`: JSON bodies get their content type. */
export function requestVia(app: App): Harness['request'] {
  return async (method, url, options = {}) => {
    const headers: Record<string, string> = { ...(options.headers ?? {}) };
    let body = options.body;
    if (options.json !== undefined) {
      headers['content-type'] ??= 'application/json';
      body = JSON.stringify(options.json);
    }
    return app.request(url, { method, headers, ...(body !== undefined ? { body } : {}) });
  };
}

export interface SeededTenant {
  tenantId: number;
  code: string;
  rootOrganizationId: number;
  adminRoleId: number;
  adminUserId: number;
  adminUsername: string;
  /** Organization key of the root organization, bound to the administrator. */
  orgKey: string;
}

/** A tenant with its root organization, the "Quản trị" role, one active admin and an org key. */
export async function seedTenant(
  h: Harness,
  code: string,
  options: { adminPassword?: string } = {},
): Promise<SeededTenant> {
  const now = h.now();
  const { tenant, root, adminRole } = await createTenant(h.deps.db, now, {
    code,
    name: `Tenant ${code}`,
  });
  const adminUsername = `admin.${code.toLowerCase()}`;
  const passwordHash = options.adminPassword ? await hashPassword(options.adminPassword) : null;
  const admin = await addUser(
    h,
    {
      tenantId: tenant.id,
      organizationId: root.id,
      code: `${code}-ADMIN`,
      username: adminUsername,
      email: `${adminUsername}@example.com`,
      name: `Admin ${code}`,
      status: 2,
      type: 'internal',
      passwordHash,
    },
    [{ organizationId: root.id, roleId: adminRole.id }],
  );
  const { key } = await issueApiKey(h, {
    kind: 'organization',
    tenantId: tenant.id,
    organizationId: root.id,
    userId: admin.id,
    expiresAt: null,
  });
  return {
    tenantId: tenant.id,
    code,
    rootOrganizationId: root.id,
    adminRoleId: adminRole.id,
    adminUserId: admin.id,
    adminUsername,
    orgKey: key,
  };
}

/** Inserts a user row (and memberships) directly, as fixtures and legacy data need. */
export async function addUser(
  h: Harness,
  fields: UserFields,
  members: { organizationId: number; roleId: number }[] = [],
) {
  return inTransaction(h.deps.db, async (trx) => {
    const user = await insertUser(trx, fields, h.now());
    await replaceMemberships(trx, user.id, members, h.now());
    return user;
  });
}

/** An API key made directly (as the operator CLI does), noted among the run's issued secrets. */
export async function issueApiKey(h: Harness, key: NewKey): Promise<IssuedKey> {
  const issued = await createApiKey(h.deps.db, h.deps.secrets, h.now(), key);
  recordIssuedSecret(issued.key, `API key (${key.kind})`);
  return issued;
}

export async function globalKey(h: Harness, userId: number | null = null): Promise<string> {
  const issued = await issueApiKey(h, {
    kind: 'global',
    tenantId: null,
    organizationId: null,
    userId,
    expiresAt: null,
  });
  return issued.key;
}

export async function readJson<T = Record<string, unknown>>(response: Response): Promise<T> {
  return (await response.json()) as T;
}
