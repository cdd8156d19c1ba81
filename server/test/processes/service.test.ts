import crypto from 'node:crypto';
import { loadProcess } from '../../src/processes/queries';
import { createProcess, listProcesses } from '../../src/processes/service';
import { createOrganization } from '../../src/tenancy/service';
import { addUser, createHarness, type Harness } from '../support/harness';
import {
  exampleDefinition,
  exampleSteps,
  organizationId,
  type ProcessWorld,
  refusal,
  seedProcessWorld,
  withStep,
} from './fixtures';

describe('createProcess: roles and users resolved with the directory errors', () => {
  let h: Harness;
  let world: ProcessWorld;
  const countProcesses = async () =>
    Number(
      (
        await h.deps.db
          .selectFrom('processes')
          .select((eb) => eb.fn.countAll().as('n'))
          .executeTakeFirstOrThrow()
      ).n,
    );

  /** The refusal of the example with `change` applied to step `index`. */
  const refusedStep = (index: number, change: Record<string, unknown>) =>
    refusal(() => createProcess(h.deps, world.tenant, 'DEMO', withStep(index, change)));

  beforeAll(async () => {
    h = createHarness();
    world = await seedProcessWorld(h);
  });
  afterAll(() => h.close());

  it('writes the process and its steps: role step → role_id, internal step → default_user_id', async () => {
    const { process, outcome } = await createProcess(h.deps, world.tenant, 'DEMO', {
      ...exampleDefinition(),
      code: 'RESOLVED',
    });
    expect(outcome).toBe('created');
    expect(process).toEqual({
      id: expect.any(Number),
      code: 'RESOLVED',
      name: 'Ký hợp đồng dịch vụ',
      documentClasses: ['HOP_DONG_DICH_VU'],
      steps: exampleSteps,
    });
    const loaded = await loadProcess(h.deps.db, await rootId(), 'RESOLVED');
    expect(loaded!.documentClasses).toEqual(['HOP_DONG_DICH_VU']);
    expect(loaded!.process).toMatchObject({ tenant_id: world.tenant.id, code: 'RESOLVED' });
    expect(
      loaded!.steps.map((s) => [
        s.position,
        s.step_code,
        s.role_id,
        s.default_user_id,
        s.approve_label,
        s.reject_label,
      ]),
    ).toEqual([
      [1, 'PHAP_CHE_DUYET', world.legalRoleId, null, 'Duyệt', 'Trả lại'],
      [2, 'KHACH_HANG_KY', null, null, 'Ký', 'Từ chối'],
      [3, 'GIAM_DOC_KY', null, world.directorId, 'Ký', 'Từ chối'],
    ]);
  });

  const rootId = () => organizationId(h, world, 'DEMO');

  it('the organization of the process must exist in the tenant: 404 ORGANIZATION_CODE_NOT_FOUND', async () => {
    expect(
      await refusal(() => createProcess(h.deps, world.tenant, 'NOPE', exampleDefinition())),
    ).toMatchObject({
      status: 404,
      code: 'ORGANIZATION_CODE_NOT_FOUND',
      field: 'organizationCode',
    });
    // Another tenant's organization is not in this tenant.
    expect(
      await refusal(() => createProcess(h.deps, world.other, 'PHAP_CHE', exampleDefinition())),
    ).toMatchObject({ status: 404, code: 'ORGANIZATION_CODE_NOT_FOUND' });
  });

  it('a role step names an organization of the tenant: 404 ORGANIZATION_CODE_NOT_FOUND at the step', async () => {
    const before = await countProcesses();
    expect(await refusedStep(0, { organizationCode: 'KETOAN' })).toMatchObject({
      status: 404,
      code: 'ORGANIZATION_CODE_NOT_FOUND',
      field: 'steps.0.organizationCode',
    });
    expect(
      await refusal(() => createProcess(h.deps, world.other, 'OTHER', exampleDefinition())),
    ).toMatchObject({ code: 'ORGANIZATION_CODE_NOT_FOUND', field: 'steps.0.organizationCode' });
    expect(await countProcesses()).toBe(before);
  });

  it('an organization code shared by several records: 400 ORGANIZATION_CODE_AMBIGUOUS at the step', async () => {
    await createOrganization(h.deps.db, world.tenant, h.now(), { code: 'KHO', name: 'Kho 1' });
    // Legacy data repeats codes; the CLI refuses new duplicates, so write the row directly.
    await h.deps.db
      .insertInto('organizations')
      .values({
        tenant_id: world.tenant.id,
        parent_id: null,
        code: 'KHO',
        name: 'Kho 2',
        type: 1,
        status: 1,
        address: null,
        phone: null,
        deleted_at: null,
        created_at: h.now(),
        updated_at: h.now(),
      })
      .execute();
    expect(await refusedStep(0, { organizationCode: 'KHO' })).toMatchObject({
      status: 400,
      code: 'ORGANIZATION_CODE_AMBIGUOUS',
      field: 'steps.0.organizationCode',
    });
  });

  it('the role name must exist in that organization: 404 ROLE_NOT_FOUND_IN_ORGANIZATION', async () => {
    expect(await refusedStep(0, { roleName: 'Kế toán' })).toMatchObject({
      status: 404,
      code: 'ROLE_NOT_FOUND_IN_ORGANIZATION',
      field: 'steps.0.roleName',
    });
    // The role exists, but in another organization.
    expect(await refusedStep(0, { organizationCode: 'DEMO' })).toMatchObject({
      code: 'ROLE_NOT_FOUND_IN_ORGANIZATION',
      field: 'steps.0.roleName',
    });
  });

  it('several roles with that name in the organization: 400 ROLE_AMBIGUOUS_IN_ORGANIZATION', async () => {
    const role = {
      tenant_id: world.tenant.id,
      organization_id: await organizationId(h, world, 'PHAP_CHE'),
      code: 'DEFAULT',
      name: 'Trưởng phòng',
      is_department_head: 1,
      status: 1,
      created_at: h.now(),
      updated_at: h.now(),
    };
    await h.deps.db.insertInto('roles').values([role, role]).execute();
    expect(await refusedStep(0, { roleName: 'Trưởng phòng' })).toMatchObject({
      status: 400,
      code: 'ROLE_AMBIGUOUS_IN_ORGANIZATION',
      field: 'steps.0.roleName',
    });
  });

  it('defaultUsername names a user of the tenant (login names compare case-insensitively): else 400 USERNAME_NOT_FOUND', async () => {
    expect(await refusedStep(2, { defaultUsername: 'nobody' })).toMatchObject({
      status: 400,
      code: 'USERNAME_NOT_FOUND',
      field: 'steps.2.defaultUsername',
    });
    await addUser(h, {
      tenantId: world.other.id,
      organizationId: null,
      code: 'O-1',
      username: 'other.director',
      email: 'other.director@example.com',
      status: 2,
      type: 'internal',
    });
    expect(
      await refusal(() =>
        createProcess(
          h.deps,
          world.tenant,
          'DEMO',
          withStep(2, { defaultUsername: 'other.director' }),
        ),
      ),
    ).toMatchObject({ status: 400, code: 'USERNAME_NOT_FOUND' });
    const { process } = await createProcess(h.deps, world.tenant, 'DEMO', {
      ...withStep(2, { defaultUsername: 'GiamDoc' }),
      code: 'CASE',
    });
    const loaded = await loadProcess(h.deps.db, await rootId(), process.code);
    expect(loaded!.steps[2]!.default_user_id).toBe(world.directorId);
  });

  it('defaultUsername must be an internal user: an outside signer account gives 400 USER_NOT_INTERNAL', async () => {
    expect(
      await refusal(() =>
        createProcess(
          h.deps,
          world.tenant,
          'DEMO',
          withStep(2, { defaultUsername: '001099012345' }),
        ),
      ),
    ).toMatchObject({ status: 400, code: 'USER_NOT_INTERNAL', field: 'steps.2.defaultUsername' });
  });

  it('an invalid definition is refused before anything is read or written', async () => {
    const before = await countProcesses();
    expect(
      await refusal(() => createProcess(h.deps, world.tenant, 'NOPE', withStep(1, { kind: 'x' }))),
    ).toMatchObject({ status: 400, code: 'VALIDATION_ERROR', field: 'steps.1.kind' });
    expect(await countProcesses()).toBe(before);
  });
});

describe('createProcess: the same code again (replace, update in place, PROCESS_IN_USE)', () => {
  let h: Harness;
  let world: ProcessWorld;
  let rootOrganizationId: number;

  async function stepRows(processId: number) {
    return h.deps.db
      .selectFrom('process_steps')
      .select(['id', 'step_code', 'name', 'deadline_seconds', 'approve_label'])
      .where('process_id', '=', processId)
      .orderBy('position')
      .execute();
  }

  /** A dossier made from the process: its step rows are referenced from now on. */
  async function useProcess(processId: number): Promise<void> {
    await h.deps.db
      .insertInto('dossiers')
      .values({
        uuid: crypto.randomUUID(),
        tenant_id: world.tenant.id,
        organization_id: rootOrganizationId,
        document_id: `DOC-${processId}`,
        title: 'Hợp đồng',
        process_id: processId,
        ecm_class_code: null,
        status: 'PENDING',
        transaction_id: null,
        metadata: '{}',
        created_by_user_id: null,
        required_count: 3,
        created_at: h.now(),
        updated_at: h.now(),
        started_at: null,
        completed_at: null,
        rejected_at: null,
        expired_at: null,
      })
      .execute();
  }

  beforeEach(async () => {
    h = createHarness();
    world = await seedProcessWorld(h);
    rootOrganizationId = await organizationId(h, world, 'DEMO');
  });
  afterEach(() => h.close());

  it('while no dossier uses it, the definition is replaced: same id, new steps, new classes', async () => {
    const first = await createProcess(h.deps, world.tenant, 'DEMO', exampleDefinition());
    const createdAt = (await loadProcess(h.deps.db, rootOrganizationId, 'HD_DICH_VU'))!.process
      .created_at;
    h.clock.advance(60_000);
    const definition = exampleDefinition();
    const second = await createProcess(h.deps, world.tenant, 'DEMO', {
      ...definition,
      name: 'Ký hợp đồng (2 bước)',
      documentClasses: ['HOP_DONG', 'PHU_LUC'],
      steps: [definition.steps[2], definition.steps[1]],
    });
    expect(second.outcome).toBe('replaced');
    expect(second.process.id).toBe(first.process.id);
    expect(second.process.steps.map((s) => s.stepCode)).toEqual(['GIAM_DOC_KY', 'KHACH_HANG_KY']);
    const loaded = await loadProcess(h.deps.db, rootOrganizationId, 'HD_DICH_VU');
    expect(loaded!.process).toMatchObject({
      name: 'Ký hợp đồng (2 bước)',
      created_at: createdAt,
      updated_at: h.now(),
    });
    expect(loaded!.documentClasses).toEqual(['HOP_DONG', 'PHU_LUC']);
    expect(loaded!.steps.map((s) => [s.position, s.step_code])).toEqual([
      [1, 'GIAM_DOC_KY'],
      [2, 'KHACH_HANG_KY'],
    ]);
  });

  it('the same code in another organization is another process', async () => {
    const inDemo = await createProcess(h.deps, world.tenant, 'DEMO', exampleDefinition());
    const inLegal = await createProcess(h.deps, world.tenant, 'PHAP_CHE', exampleDefinition());
    expect(inLegal.outcome).toBe('created');
    expect(inLegal.process.id).not.toBe(inDemo.process.id);
  });

  it('once a dossier uses it, changing its steps is 409 PROCESS_IN_USE and nothing changes', async () => {
    const { process } = await createProcess(h.deps, world.tenant, 'DEMO', exampleDefinition());
    await useProcess(process.id);
    const before = await stepRows(process.id);
    const definition = exampleDefinition();
    const changes = [
      { ...definition, steps: definition.steps.slice(0, 2) },
      withStep(1, { stepCode: 'KHACH_KY' }),
      withStep(1, { kind: 'phone_guest' }),
      withStep(1, { signType: 'image_signature' }),
    ];
    for (const changed of changes) {
      expect(
        await refusal(() => createProcess(h.deps, world.tenant, 'DEMO', changed)),
      ).toMatchObject({ status: 409, code: 'PROCESS_IN_USE', field: 'code' });
    }
    expect(await stepRows(process.id)).toEqual(before);
  });

  it('once a dossier uses it, the same steps update in place: names, labels, deadlines, classes; step ids kept', async () => {
    const { process } = await createProcess(h.deps, world.tenant, 'DEMO', exampleDefinition());
    await useProcess(process.id);
    const before = await stepRows(process.id);
    const updated = await createProcess(h.deps, world.tenant, 'DEMO', {
      ...withStep(1, {
        name: 'Khách hàng ký số',
        deadline: 'P10D',
        actionLabels: { approve: 'Ký số' },
      }),
      documentClasses: ['HOP_DONG_DICH_VU', 'PHU_LUC'],
    });
    expect(updated.outcome).toBe('updated');
    const after = await stepRows(process.id);
    expect(after.map((s) => s.id)).toEqual(before.map((s) => s.id));
    expect(after[1]).toEqual({
      id: before[1]!.id,
      step_code: 'KHACH_HANG_KY',
      name: 'Khách hàng ký số',
      deadline_seconds: 864_000,
      approve_label: 'Ký số',
    });
    expect(
      (await loadProcess(h.deps.db, rootOrganizationId, 'HD_DICH_VU'))!.documentClasses,
    ).toEqual(['HOP_DONG_DICH_VU', 'PHU_LUC']);
  });
});

describe('listProcesses', () => {
  let h: Harness;
  let world: ProcessWorld;
  beforeAll(async () => {
    h = createHarness();
    world = await seedProcessWorld(h);
    await createProcess(h.deps, world.tenant, 'PHAP_CHE', { ...exampleDefinition(), code: 'B' });
    await createProcess(h.deps, world.tenant, 'DEMO', { ...exampleDefinition(), code: 'A' });
  });
  afterAll(() => h.close());

  it('lists the processes of the tenant by organization code and code, with their steps', async () => {
    const listed = await listProcesses(h.deps.db, world.tenant);
    expect(listed.map((p) => [p.tenantCode, p.organizationCode, p.code])).toEqual([
      ['DEMO', 'DEMO', 'A'],
      ['DEMO', 'PHAP_CHE', 'B'],
    ]);
    expect(listed[0]!.steps.map((s) => s.stepCode)).toEqual([
      'PHAP_CHE_DUYET',
      'KHACH_HANG_KY',
      'GIAM_DOC_KY',
    ]);
    expect(listed[0]).toMatchObject({
      documentClasses: ['HOP_DONG_DICH_VU'],
      createdAt: h.now(),
      updatedAt: h.now(),
    });
  });

  it('lists one organization with its code; never another tenant', async () => {
    expect((await listProcesses(h.deps.db, world.tenant, 'PHAP_CHE')).map((p) => p.code)).toEqual([
      'B',
    ]);
    expect(await listProcesses(h.deps.db, world.other)).toEqual([]);
    expect(await refusal(() => listProcesses(h.deps.db, world.tenant, 'NOPE'))).toMatchObject({
      status: 404,
      code: 'ORGANIZATION_CODE_NOT_FOUND',
    });
  });
});
