import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { routes, startHttpsServer, type TestHttpsServer } from '../../../test/support/httpsServer';
import { localStoreOf } from '../../src/storage/localFileStore';
import type { TenantRow } from '../../src/tenancy/resolveTenant';
import { createOrganization, createRole } from '../../src/tenancy/service';
import { createProcess, type StepSpec, tinyPdf } from '../support/dossiers';
import {
  addUser,
  createHarness,
  type Harness,
  type SeededTenant,
  seedTenant,
} from '../support/harness';

export { type ErrorReply, reply } from '../directory/fixtures';

export const documentsPath = '/api/integration/documents';

/** A process written straight into SQLite; steps sign digitally unless they say otherwise. */
export async function addProcess(
  h: Harness,
  owner: { tenantId: number; organizationId: number },
  code: string,
  documentClasses: string[],
  steps: StepSpec[],
): Promise<number> {
  const signed = steps.map((step) => ({ signType: 'digital_signature' as const, ...step }));
  return (await createProcess(h, { ...owner, code, documentClasses, steps: signed })).id;
}

/** A PDF whose bytes (and so whose SHA-256) no other test uses. */
export function uniquePdf(label: string = crypto.randomUUID(), size = 2048): Buffer {
  return tinyPdf(label, size);
}

export function sha256(bytes: Buffer): string {
  return crypto.createHash('sha256').update(bytes).digest('hex');
}

/**
 * One tenant (ACME) with: the legal department role "Phòng Pháp chế" held by two users, a
 * director (internal), a sub-organization SALES with its own key, and a second tenant (BETA).
 * Processes:
 * - HDLD (one class `HD_LAO_DONG`): APPROVE role → GUEST guest (3 days) → PHONE phone_guest →
 *   DIRECTOR internal (default: the director);
 * - MULTI (classes `HD`, `PL`): SIGN guest;
 * - NODEFAULT (one class): STAFF internal without a default user.
 * BETA's root has its own HDLD (one class `HD`): GUEST guest.
 */
export interface World {
  h: Harness;
  server: TestHttpsServer;
  acme: SeededTenant;
  acmeTenant: TenantRow;
  beta: SeededTenant;
  legalRole: { id: number; code: string; name: string };
  directorId: number;
  lawyerIds: [number, number];
  /** Organization key of ACME's root, bound to the administrator (every permission). */
  key: string;
  /** Serves `bytes` at a fresh path of the test HTTPS server; returns its URL. */
  serve(bytes: Buffer, name?: string): string;
  create(body: unknown, key?: string): Promise<Response>;
  close(): Promise<void>;
}

export async function openWorld(env: Record<string, string> = {}): Promise<World> {
  const h = createHarness({ OUTBOUND_ALLOWLIST: '127.0.0.1', ...env });
  const server = await startHttpsServer();
  const acme = await seedTenant(h, 'ACME');
  const beta = await seedTenant(h, 'BETA');
  const acmeTenant = await h.deps.db
    .selectFrom('tenants')
    .selectAll()
    .where('id', '=', acme.tenantId)
    .executeTakeFirstOrThrow();
  const legal = await createRole(h.deps.db, acmeTenant, h.now(), {
    organizationCode: 'ACME',
    name: 'Phòng Pháp chế',
    code: 'PHAP_CHE',
  });
  await createOrganization(h.deps.db, acmeTenant, h.now(), { code: 'SALES', name: 'Kinh doanh' });
  const member = (username: string, name: string, roleId?: number) =>
    addUser(
      h,
      {
        tenantId: acme.tenantId,
        organizationId: acme.rootOrganizationId,
        code: username.toUpperCase(),
        username,
        email: `${username}@acme.example`,
        name,
        phone: '0901000000',
        status: 2,
        type: 'internal',
      },
      roleId === undefined ? [] : [{ organizationId: acme.rootOrganizationId, roleId }],
    );
  const director = await member('giam.doc', 'Trần Văn Giám');
  const lawyer1 = await member('phap.che1', 'Lê Thị Luật', legal.id);
  const lawyer2 = await member('phap.che2', 'Phạm Văn Lý', legal.id);
  const org = { tenantId: acme.tenantId, organizationId: acme.rootOrganizationId };
  await addProcess(
    h,
    org,
    'HDLD',
    ['HD_LAO_DONG'],
    [
      {
        stepCode: 'APPROVE',
        name: 'Phòng Pháp chế duyệt',
        kind: 'role',
        roleId: legal.id,
        signType: 'app_submit',
      },
      { stepCode: 'GUEST', name: 'Người lao động ký', kind: 'guest', deadlineSeconds: 3 * 86400 },
      {
        stepCode: 'PHONE',
        name: 'Người bảo lãnh ký',
        kind: 'phone_guest',
        signType: 'image_signature',
      },
      { stepCode: 'DIRECTOR', name: 'Giám đốc ký', kind: 'internal', defaultUserId: director.id },
    ],
  );
  await addProcess(
    h,
    org,
    'MULTI',
    ['HD', 'PL'],
    [{ stepCode: 'SIGN', name: 'Khách hàng ký', kind: 'guest' }],
  );
  await addProcess(
    h,
    org,
    'NODEFAULT',
    ['HD'],
    [{ stepCode: 'STAFF', name: 'Nhân viên ký', kind: 'internal' }],
  );
  const betaOrg = { tenantId: beta.tenantId, organizationId: beta.rootOrganizationId };
  await addProcess(
    h,
    betaOrg,
    'HDLD',
    ['HD'],
    [{ stepCode: 'GUEST', name: 'Khách ký', kind: 'guest' }],
  );
  let served = 0;
  const world: World = {
    h,
    server,
    acme,
    acmeTenant,
    beta,
    legalRole: { id: legal.id, code: legal.code, name: legal.name },
    directorId: director.id,
    lawyerIds: [lawyer1.id, lawyer2.id],
    key: acme.orgKey,
    serve: (bytes, name = 'hop-dong.pdf') => {
      served += 1;
      const pathname = `/files/${served}/${name}`;
      server.route(pathname, routes.bytes(bytes));
      return server.url(pathname);
    },
    create: (body, key = acme.orgKey) =>
      h.request('POST', documentsPath, { headers: { 'X-API-Key': key }, json: body }),
    close: async () => {
      await server.close();
      await h.close();
    },
  };
  return world;
}

/** A valid body for HDLD with one signer per outside step; override what a test needs. */
export function hdldBody(world: World, overrides: Record<string, unknown> = {}) {
  return {
    documentId: `HD-${crypto.randomUUID()}`,
    documentTitle: 'Hợp đồng lao động Nguyễn Văn Ánh',
    processDefCode: 'HDLD',
    files: [{ source: 'url', fileUrl: world.serve(uniquePdf()), title: 'Hợp đồng lao động' }],
    signers: [
      {
        stepCode: 'GUEST',
        fullName: 'Nguyễn Văn Ánh',
        email: 'anh.nguyen@example.com',
        identityNumber: '001099012345',
      },
      { stepCode: 'PHONE', fullName: 'Trần Thị Bảo', phone: '+84 912-345-678' },
    ],
    ...overrides,
  };
}

/** A partner token (x-access-token) of a tenant user, from ACME's organization key. */
export async function partnerToken(world: World, username: string): Promise<string> {
  const response = await world.h.request('POST', '/api/auth/partner-login', {
    headers: { 'x-api-key': world.key },
    json: { username },
  });
  const body = (await response.json()) as { data?: { accessToken?: string } };
  if (response.status !== 201 || !body.data?.accessToken) {
    throw new Error(`partner login of ${username} failed: ${JSON.stringify(body)}`);
  }
  return body.data.accessToken;
}

/** Every stored content file under the file store (temp files excluded). */
export function storedFiles(h: Harness): string[] {
  const root = localStoreOf(h.deps.files).root;
  if (!fs.existsSync(root)) return [];
  const found: string[] = [];
  const walk = (directory: string) => {
    for (const entry of fs.readdirSync(directory, { withFileTypes: true })) {
      const full = path.join(directory, entry.name);
      if (entry.isDirectory()) {
        if (full !== h.deps.files.tempDir) walk(full);
      } else found.push(entry.name);
    }
  };
  walk(root);
  return found;
}

/** Row counts of every table a creation writes. */
export async function rowCounts(h: Harness) {
  const count = async (
    table: 'dossiers' | 'dossier_files' | 'file_versions' | 'turns' | 'tasks' | 'users',
  ) => {
    const row = await h.deps.db
      .selectFrom(table)
      .select(({ fn }) => fn.countAll<number>().as('n'))
      .executeTakeFirstOrThrow();
    return Number(row.n);
  };
  return {
    dossiers: await count('dossiers'),
    files: await count('dossier_files'),
    versions: await count('file_versions'),
    turns: await count('turns'),
    tasks: await count('tasks'),
    users: await count('users'),
  };
}
