import fs from 'node:fs';
import path from 'node:path';
import { DomainError } from '../../src/errors/domainError';
import { statusOfCode } from '../../src/http/errorStatuses';
import type { TenantRow } from '../../src/tenancy/resolveTenant';
import { createOrganization, createRole } from '../../src/tenancy/service';
import { runCli } from '../admin/runCli';
import { addUser, type Harness, seedTenant } from '../support/harness';

export const repoRoot = path.resolve(__dirname, '../../..');
export const exampleProcessFile = path.join(repoRoot, 'examples/process.json');

/** examples/process.json, parsed: a role step, a guest step and an internal step. */
export function exampleDefinition(): {
  code: string;
  name: string;
  documentClasses: string[];
  steps: Record<string, unknown>[];
} {
  return JSON.parse(fs.readFileSync(exampleProcessFile, 'utf8'));
}

/** The example with `change` applied to a copy of step `index`. */
export function withStep(index: number, change: Record<string, unknown>) {
  const definition = exampleDefinition();
  definition.steps[index] = { ...definition.steps[index], ...change };
  return definition;
}

/** The error a call throws, as the spec's error shape. */
export async function refusal(work: () => unknown): Promise<{
  status: number;
  code: string;
  field: string | undefined;
  message: string;
}> {
  try {
    await work();
  } catch (error) {
    const apiError = error as DomainError;
    if (!(apiError instanceof DomainError)) throw error;
    return {
      status: statusOfCode(apiError.code),
      code: apiError.code,
      field: apiError.field,
      message: apiError.message,
    };
  }
  throw new Error('expected the call to be refused');
}

export interface ProcessWorld {
  tenant: TenantRow;
  /** Another tenant, with the same organization, role and user names. */
  other: TenantRow;
  legalRoleId: number;
  directorId: number;
}

/**
 * What examples/process.json names, in tenant DEMO: organization PHAP_CHE with the role
 * "Chuyên viên pháp chế", the internal user `giamdoc` and the outside signer `khach`.
 */
export async function seedProcessWorld(h: Harness): Promise<ProcessWorld> {
  const tenants: TenantRow[] = [];
  let legalRoleId = 0;
  let directorId = 0;
  for (const code of ['DEMO', 'OTHER']) {
    const seeded = await seedTenant(h, code);
    const tenant = await h.deps.db
      .selectFrom('tenants')
      .selectAll()
      .where('id', '=', seeded.tenantId)
      .executeTakeFirstOrThrow();
    tenants.push(tenant);
    if (code !== 'DEMO') continue;
    await createOrganization(h.deps.db, tenant, h.now(), { code: 'PHAP_CHE', name: 'Pháp chế' });
    const role = await createRole(h.deps.db, tenant, h.now(), {
      organizationCode: 'PHAP_CHE',
      name: 'Chuyên viên pháp chế',
    });
    legalRoleId = role.id;
    const director = await addUser(h, {
      tenantId: tenant.id,
      organizationId: seeded.rootOrganizationId,
      code: 'GD01',
      username: 'giamdoc',
      email: 'giamdoc@demo.example',
      name: 'Trần Thị Bình',
      status: 2,
      type: 'internal',
    });
    directorId = director.id;
    await addUser(h, {
      tenantId: tenant.id,
      organizationId: null,
      code: 'EXT01',
      username: '001099012345',
      email: 'khach@example.com',
      status: 2,
      type: 'external',
    });
  }
  return { tenant: tenants[0]!, other: tenants[1]!, legalRoleId, directorId };
}

/** The id of an organization of the world's tenant. */
export async function organizationId(h: Harness, world: ProcessWorld, code: string) {
  const row = await h.deps.db
    .selectFrom('organizations')
    .select('id')
    .where('tenant_id', '=', world.tenant.id)
    .where('code', '=', code)
    .executeTakeFirstOrThrow();
  return row.id;
}

/** The steps of examples/process.json as createProcess and `admin process create` show them. */
export const exampleSteps = [
  {
    stepCode: 'PHAP_CHE_DUYET',
    name: 'Phòng Pháp chế duyệt',
    kind: 'role',
    signType: 'app_submit',
    deadlineSeconds: 172_800,
  },
  {
    stepCode: 'KHACH_HANG_KY',
    name: 'Khách hàng ký',
    kind: 'guest',
    signType: 'digital_signature',
    deadlineSeconds: 604_800,
  },
  {
    stepCode: 'GIAM_DOC_KY',
    name: 'Giám đốc ký',
    kind: 'internal',
    signType: 'digital_signature',
    deadlineSeconds: 172_800,
  },
];

/**
 * Runs each command line on a data directory that does not exist and expects exit 2 with the
 * message on stderr, and the directory still absent: refused before the database is opened.
 */
export async function expectBadArguments(parent: string, cases: [string, RegExp][]) {
  const fresh = path.join(parent, 'never-created');
  const results = await Promise.all(cases.map(([args]) => runCli(fresh, args)));
  cases.forEach(([args, message], index) => {
    const result = results[index]!;
    expect({ args, code: result.code }).toEqual({ args, code: 2 });
    expect(result.stderr).toMatch(message);
  });
  expect(fs.existsSync(fresh)).toBe(false);
}
