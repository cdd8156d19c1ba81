import BetterSqlite3 from 'better-sqlite3';
import pg from 'pg';
import { revokeApiKey } from '../../src/auth/apiKeys';
import { createHarness, type Harness, type SeededTenant, seedTenant } from '../support/harness';
import { expectUnauthorized, orgKey, roleWith, spec401, tenantUser } from './fixtures';

/**
 * An API key's row, its user and the user's permissions are kept between requests
 * (platform/credentialCache.ts). Each way an operator takes access away must hold on the very next
 * request, whatever the cache saw before: a key revoked, the key's user locked, the user's role
 * changed to one without the permission, and any of these done by another process on the same
 * file (the operator CLI), which the server only learns of through SQLite's data_version.
 *
 * The probe is endpoint 3 for a documentId that does not exist: 404 DOCUMENT_NOT_FOUND means
 * "authenticated and holds document:view", 403 "authenticated without it", 401 "not accepted".
 */

let h: Harness;
let acme: SeededTenant;
let viewerRole: number;
let service: { key: string; id: number; userId: number };

const lookup = (key: string) =>
  h.request('GET', '/api/integration/documents/NO-SUCH-DOCUMENT', {
    headers: { 'X-API-Key': key },
  });

/**
 * Commits `text` on a connection of its own: on SQLite another handle on the file (the operator
 * CLI), on PostgreSQL another session (another instance).
 */
async function commitElsewhere(text: string, values: unknown[]): Promise<void> {
  const url = h.deps.config.databaseUrl;
  if (url === undefined) {
    const other = new BetterSqlite3(h.deps.config.databaseFile);
    try {
      other.pragma('busy_timeout = 10000');
      other.prepare(text).run(...values);
    } finally {
      other.close();
    }
    return;
  }
  let n = 0;
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    await client.query(
      text.replace(/\?/g, () => `$${++n}`),
      values,
    );
  } finally {
    await client.end();
  }
}

/**
 * The lookup once the other commit is seen: at once on SQLite (data_version is read by the
 * request); on PostgreSQL when the commit's notification has arrived (milliseconds; up to 5 s
 * allowed on a loaded machine), never a stale acceptance after that.
 */
async function lookupOnceSeen(key: string): Promise<Response> {
  const deadline = Date.now() + 5000;
  for (;;) {
    const response = await lookup(key);
    if (response.status !== 404 || h.deps.config.databaseUrl === undefined) return response;
    if (Date.now() > deadline) return response;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

async function expectAccepted(key: string): Promise<void> {
  const response = await lookup(key);
  expect(response.status).toBe(404);
  expect(((await response.json()) as { code: string }).code).toBe('DOCUMENT_NOT_FOUND');
}

/** A user's status or roles written through the directory API with the tenant's admin key. */
const directory = (method: string, path: string, json: unknown) =>
  h.request(method, `/api/integration/directory${path}`, {
    headers: { 'X-API-Key': acme.orgKey },
    json,
  });

beforeEach(async () => {
  h = createHarness();
  acme = await seedTenant(h, 'ACME');
  viewerRole = await roleWith(h, acme, 'Viewer', ['document:view']);
  await roleWith(h, acme, 'Nobody', ['task:view']);
  const user = await tenantUser(h, acme, { username: 'service.acme', code: 'SVC' }, viewerRole);
  const issued = await orgKey(h, acme, { userId: user.id });
  service = { ...issued, userId: user.id };
  // Twice, so the second answer came from what the first one kept.
  await expectAccepted(service.key);
  await expectAccepted(service.key);
  expect(h.deps.credentials.size).toBeGreaterThan(0);
});

afterEach(() => h.close());

describe('the credential cache never serves a principal whose access was taken away', () => {
  it('a key revoked by the operator service is refused on the next request', async () => {
    await revokeApiKey(h.deps, service.id);
    await expectUnauthorized(await lookup(service.key), spec401.invalidKey);
  });

  it('a key whose user is locked through the directory API is refused, and unlocking brings it back', async () => {
    expect((await directory('PUT', '/users/SVC/status', { status: 3 })).status).toBe(200);
    await expectUnauthorized(await lookup(service.key), spec401.inactiveServiceAccount);
    expect((await directory('PUT', '/users/SVC/status', { status: 2 })).status).toBe(200);
    await expectAccepted(service.key);
  });

  it('a user moved to a role without the permission gets 403 on the next request', async () => {
    const moved = await directory('PUT', '/users/SVC', {
      members: [{ organizationCode: 'ACME', roleName: 'Nobody' }],
    });
    expect(moved.status).toBe(200);
    const refused = await lookup(service.key);
    expect(refused.status).toBe(403);
    expect(((await refused.json()) as { code: string }).code).toBe('FORBIDDEN');
    await directory('PUT', '/users/SVC', {
      members: [{ organizationCode: 'ACME', roleName: 'Viewer' }],
    });
    await expectAccepted(service.key);
  });

  it('a revocation committed by another process on the same file is seen on the next request', async () => {
    await commitElsewhere('UPDATE api_keys SET revoked_at = ? WHERE id = ?', [h.now(), service.id]);
    await expectUnauthorized(await lookupOnceSeen(service.key), spec401.invalidKey);
  });

  it('a user locked by another process is refused on the next request', async () => {
    await commitElsewhere('UPDATE users SET status = 3 WHERE id = ?', [service.userId]);
    await expectUnauthorized(await lookupOnceSeen(service.key), spec401.inactiveServiceAccount);
  });
});
