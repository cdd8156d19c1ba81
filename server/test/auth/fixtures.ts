import { Hono } from 'hono';
import { buildApp } from '../../src/app';
import { importLegacyKey } from '../../src/auth/apiKeys';
import { type CredentialArea, credentialAreas } from '../../src/auth/areas';
import { authenticate } from '../../src/auth/authenticate';
import { requirePermission } from '../../src/auth/permissions';
import { RateLimiter, rateLimit } from '../../src/auth/rateLimit';
import type { AppDeps, AppEnv, Principal } from '../../src/context';
import { toUserRow, type UserFields } from '../../src/directory/userRecords';
import type { Logger } from '../../src/platform/logger';
import { createRole } from '../../src/tenancy/service';
import {
  addUser,
  createHarness,
  type Harness,
  issueApiKey,
  type SeededTenant,
  seedTenant,
} from '../support/harness';

/** The three 401 messages of the spec's table, typed out again so a changed constant is caught. */
export const spec401 = {
  invalidKey: 'API key không hợp lệ',
  keyWithoutUser: 'API key chưa gắn người dùng',
  inactiveServiceAccount: 'Tài khoản dịch vụ không hoạt động',
};

/** Well formed, unknown to the service. */
export const wrongKey = 'esk_0000000000000000_wrongwrongwrongwrongwrongwrongwrongwrongwro';

/**
 * The spec's 401: code UNAUTHORIZED, the cause in `message`. Without a message it is the token
 * layer's 401 "without description", which carries none of the API-key messages.
 */
export async function expectUnauthorized(response: Response, message = 'Unauthorized') {
  expect(response.status).toBe(401);
  expect(await response.json()).toEqual({
    statusCode: 401,
    message,
    error: 'Unauthorized',
    code: 'UNAUTHORIZED',
  });
}

export const oneMinute = 60_000;
export const oneHour = 60 * oneMinute;
export const oneDay = 24 * oneHour;

/** What a probe route answers: who the credential turned out to be (never the secret). */
export interface ProbeAnswer {
  kind: Principal['kind'];
  keyKind: string | null;
  tenantId: number | null;
  username: string | null;
}

function describePrincipal(principal: Principal): ProbeAnswer {
  return {
    kind: principal.kind,
    keyKind: principal.kind === 'apiKey' ? principal.keyKind : null,
    tenantId: principal.kind === 'apiKey' ? principal.tenantId : principal.actor.tenantId,
    username: principal.actor?.username ?? null,
  };
}

/**
 * The real app (same deps, same error handler) plus probe routes that exist nowhere else yet:
 * `GET /probe/<area>` authenticates with that entry of `credentialAreas`;
 * `GET /probe/guarded` also requires `user:manage`; `GET /probe/rate/api|upload` is rate limited
 * per credential with that class after authenticating as the contract API does.
 */
export function probeApp(deps: AppDeps, limiter = new RateLimiter(deps.config.rateLimits)) {
  const app = buildApp(deps, { limiter });
  const answer = (c: { get(key: 'principal'): Principal; json(body: unknown): Response }) =>
    c.json(describePrincipal(c.get('principal')));
  for (const area of Object.keys(credentialAreas) as CredentialArea[]) {
    const probe = new Hono<AppEnv>();
    probe.get('/', authenticate(credentialAreas[area]), answer);
    app.route(`/probe/${area}`, probe);
  }
  const guarded = new Hono<AppEnv>();
  guarded.get(
    '/',
    authenticate(credentialAreas.directory),
    requirePermission('user:manage'),
    answer,
  );
  app.route('/probe/guarded', guarded);
  for (const rateClass of ['api', 'upload'] as const) {
    const limited = new Hono<AppEnv>();
    limited.get(
      '/',
      authenticate(credentialAreas.contracts),
      rateLimit(limiter, rateClass),
      answer,
    );
    app.route(`/probe/rate/${rateClass}`, limited);
  }
  return app;
}

export type ProbeApp = ReturnType<typeof probeApp>;

export interface TwoTenants {
  h: Harness;
  app: ProbeApp;
  acme: SeededTenant;
  beta: SeededTenant;
}

/**
 * A harness with tenants ACME and BETA (each an admin and an organization key) and the probe app
 * on its deps; `logger` replaces the silent one for the app.
 */
export async function twoTenants(
  options: { env?: Record<string, string>; adminPassword?: string; logger?: Logger } = {},
): Promise<TwoTenants> {
  const h = createHarness(options.env);
  const acme = await seedTenant(
    h,
    'ACME',
    options.adminPassword ? { adminPassword: options.adminPassword } : {},
  );
  const beta = await seedTenant(h, 'BETA');
  const app = probeApp(options.logger ? { ...h.deps, logger: options.logger } : h.deps);
  return { h, app, acme, beta };
}

/** A request as it arrives from `address` (the socket's remote address). */
export function send(
  app: { request: ProbeApp['request'] },
  method: string,
  url: string,
  options: {
    headers?: Record<string, string>;
    json?: unknown;
    body?: string;
    address?: string;
  } = {},
): Promise<Response> {
  const headers: Record<string, string> = { ...(options.headers ?? {}) };
  const init: RequestInit = { method, headers };
  if (options.json !== undefined) {
    headers['content-type'] ??= 'application/json';
    init.body = JSON.stringify(options.json);
  } else if (options.body !== undefined) init.body = options.body;
  const env = { incoming: { socket: { remoteAddress: options.address ?? '192.0.2.1' } } };
  return Promise.resolve(app.request(url, init, env));
}

export async function errorOf(response: Response) {
  return (await response.json()) as {
    statusCode: number;
    message: string;
    error: string;
    code: string;
    details?: { field?: string; code?: string };
  };
}

/** A user of `tenant` (root organization) with no role unless one is given. */
export function tenantUser(
  h: Harness,
  tenant: SeededTenant,
  fields: Partial<UserFields> & { username: string },
  roleId?: number,
) {
  return addUser(
    h,
    {
      tenantId: tenant.tenantId,
      organizationId: tenant.rootOrganizationId,
      code: null,
      email: `${fields.username}@example.com`,
      name: fields.username,
      status: 2,
      type: 'internal',
      ...fields,
    },
    roleId === undefined ? [] : [{ organizationId: tenant.rootOrganizationId, roleId }],
  );
}

/** A system super-administrator: no tenant, every permission. */
export function superAdmin(h: Harness, username = 'root', identityNumber?: string) {
  return addUser(h, {
    tenantId: null,
    organizationId: null,
    code: null,
    username,
    email: `${username}@operator.example`,
    name: 'System administrator',
    identityNumber: identityNumber ?? null,
    status: 2,
    type: 'internal',
    isSuperAdmin: true,
  });
}

export async function orgKey(
  h: Harness,
  tenant: SeededTenant,
  options: { userId?: number | null; expiresAt?: string | null } = {},
) {
  return issueApiKey(h, {
    kind: 'organization',
    tenantId: tenant.tenantId,
    organizationId: tenant.rootOrganizationId,
    userId: options.userId === undefined ? tenant.adminUserId : options.userId,
    expiresAt: options.expiresAt ?? null,
  });
}

export async function revokeKey(h: Harness, id: number): Promise<void> {
  await h.deps.db
    .updateTable('api_keys')
    .set({ revoked_at: h.now() })
    .where('id', '=', id)
    .execute();
}

export async function legacyKey(h: Harness, tenant: SeededTenant, plaintext: string) {
  await importLegacyKey(h.deps.db, h.deps.secrets, h.now(), {
    tenantId: tenant.tenantId,
    organizationId: tenant.rootOrganizationId,
    userId: tenant.adminUserId,
    plaintext,
  });
  return plaintext;
}

export async function setUserStatus(h: Harness, userId: number, status: number): Promise<void> {
  await h.deps.db.updateTable('users').set({ status }).where('id', '=', userId).execute();
}

/** A role of the tenant root holding exactly `permissions`. */
export async function roleWith(
  h: Harness,
  tenant: SeededTenant,
  name: string,
  permissions: string[],
) {
  const row = await h.deps.db
    .selectFrom('tenants')
    .selectAll()
    .where('id', '=', tenant.tenantId)
    .executeTakeFirstOrThrow();
  const role = await createRole(h.deps.db, row, h.now(), {
    organizationCode: tenant.code,
    name,
    code: name.toUpperCase(),
    permissions,
  });
  return role.id;
}

/** A user row written as legacy data: straight into the table, past today's identity checks. */
export async function legacyUser(h: Harness, fields: UserFields) {
  return h.deps.db
    .insertInto('users')
    .values(toUserRow(fields, h.now()))
    .returningAll()
    .executeTakeFirstOrThrow();
}
