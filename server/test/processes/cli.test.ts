import fs from 'node:fs';
import path from 'node:path';
import { runCli } from '../admin/runCli';
import { createHarness, type Harness } from '../support/harness';
import { exampleProcessFile, exampleSteps, expectBadArguments, withStep } from './fixtures';

jest.setTimeout(120_000);

describe('admin process create / list: loading examples/process.json end to end', () => {
  let h: Harness;
  const cli = (command: string) => runCli(h.dataDir, command);
  /** A definition written to a file of the test's data directory. */
  const file = (name: string, content: unknown) => {
    const target = path.join(h.dataDir, name);
    fs.writeFileSync(target, typeof content === 'string' ? content : JSON.stringify(content));
    return target;
  };

  beforeAll(async () => {
    h = createHarness();
    for (const command of [
      'tenant create --code DEMO --name "Công ty Demo"',
      'org create --tenant DEMO --code PHAP_CHE --name "Phòng Pháp chế"',
      'role create --tenant DEMO --org PHAP_CHE --name "Chuyên viên pháp chế"',
      'user create --tenant DEMO --username giamdoc --email giamdoc@demo.example --name "Trần Thị Bình"',
    ]) {
      expect((await cli(command)).code).toBe(0);
    }
  });
  afterAll(() => h.close());

  it('creates the process with --json: exactly {id, code, name, documentClasses, steps}, exit 0', async () => {
    const result = await cli(
      `process create --tenant DEMO --org DEMO --file ${exampleProcessFile} --json`,
    );
    expect(result.code).toBe(0);
    expect(result.json()).toEqual({
      id: 1,
      code: 'HD_DICH_VU',
      name: 'Ký hợp đồng dịch vụ',
      documentClasses: ['HOP_DONG_DICH_VU'],
      steps: exampleSteps,
    });
    // What the CLI wrote is what the server reads.
    const steps = await h.deps.db
      .selectFrom('process_steps')
      .select(['step_code', 'role_id', 'default_user_id'])
      .orderBy('position')
      .execute();
    expect(steps.map((s) => [s.step_code, s.role_id !== null, s.default_user_id !== null])).toEqual(
      [
        ['PHAP_CHE_DUYET', true, false],
        ['KHACH_HANG_KY', false, false],
        ['GIAM_DOC_KY', false, true],
      ],
    );
  });

  it('loading it again replaces the definition (no dossier uses it) and says so, with the steps as a table', async () => {
    const relative = path.relative(path.resolve(__dirname, '../../..'), exampleProcessFile);
    const result = await cli(`process create --tenant DEMO --org DEMO --file ${relative}`);
    expect(result.code).toBe(0);
    expect(result.stdout.split('\n')).toEqual([
      'Replaced the definition (no dossier used it yet) of process HD_DICH_VU "Ký hợp đồng dịch vụ" in DEMO of tenant DEMO, id 1.',
      'Document class: HOP_DONG_DICH_VU (files inherit it).',
      '#  STEP            KIND      SIGN TYPE          DEADLINE  NAME',
      '1  PHAP_CHE_DUYET  role      app_submit         2d        Phòng Pháp chế duyệt',
      '2  KHACH_HANG_KY   guest     digital_signature  7d        Khách hàng ký',
      '3  GIAM_DOC_KY     internal  digital_signature  2d        Giám đốc ký',
      '',
    ]);
  });

  it('lists processes of the tenant or of one organization', async () => {
    const definition = { ...withStep(2, { deadline: 'PT90M' }), code: 'HD_PHAP_CHE' };
    expect(
      (
        await cli(
          `process create --tenant DEMO --org PHAP_CHE --file ${file('p2.json', definition)}`,
        )
      ).code,
    ).toBe(0);
    const all = await cli('process list --tenant DEMO --json');
    expect(all.code).toBe(0);
    const listed = all.json<{ processes: Record<string, unknown>[] }>().processes;
    expect(listed.map((p) => [p.organizationCode, p.code])).toEqual([
      ['DEMO', 'HD_DICH_VU'],
      ['PHAP_CHE', 'HD_PHAP_CHE'],
    ]);
    expect(listed[1]).toMatchObject({
      tenantCode: 'DEMO',
      name: 'Ký hợp đồng dịch vụ',
      documentClasses: ['HOP_DONG_DICH_VU'],
    });
    const one = await cli('process list --tenant DEMO --org PHAP_CHE');
    expect(one.code).toBe(0);
    expect(one.stdout).toContain('PHAP_CHE      HD_PHAP_CHE');
    expect(one.stdout).not.toContain('HD_DICH_VU ');
  });

  it('bad arguments exit 2 before the database is touched', async () => {
    const cases: [string, RegExp][] = [
      ['process create --tenant DEMO --org DEMO', /process create: --file is required/],
      [
        'process create --tenant DEMO --org DEMO --file /no/such/process.json',
        /--file \/no\/such\/process.json: no such file/,
      ],
      [`process create --tenant DEMO --org DEMO --file ${h.dataDir}`, /not a regular file/],
      ['process create --org DEMO --file x.json', /--tenant is required/],
      ['process list', /process list: --tenant is required/],
      ['process list --tenant DEMO --bogus', /Unknown option '--bogus'/],
    ];
    await expectBadArguments(h.dataDir, cases);
  });

  it('a file that is not JSON exits 1 with INVALID_JSON', async () => {
    const result = await cli(
      `process create --tenant DEMO --org DEMO --file ${file('broken.json', '{"code": ')} --json`,
    );
    expect(result.code).toBe(1);
    expect(result.json<{ error: { code: string } }>().error.code).toBe('INVALID_JSON');
  });

  it('an invalid definition exits 1 with VALIDATION_ERROR naming the field', async () => {
    const bad = withStep(1, { deadline: '7 ngày' });
    const result = await cli(
      `process create --tenant DEMO --org DEMO --file ${file('bad.json', bad)} --json`,
    );
    expect(result.code).toBe(1);
    const { error } = result.json<{ error: { code: string; message: string } }>();
    expect(error.code).toBe('VALIDATION_ERROR');
    expect(error.message).toMatch(/^steps\.1\.deadline: must be an ISO 8601 duration/);
    expect(result.stderr).toMatch(/admin: VALIDATION_ERROR: steps\.1\.deadline/);
  });

  it('a role that does not exist exits 1 with ROLE_NOT_FOUND_IN_ORGANIZATION', async () => {
    const bad = withStep(0, { roleName: 'Kế toán trưởng' });
    const result = await cli(
      `process create --tenant DEMO --org DEMO --file ${file('role.json', bad)} --json`,
    );
    expect(result.code).toBe(1);
    expect(result.json()).toEqual({
      error: {
        code: 'ROLE_NOT_FOUND_IN_ORGANIZATION',
        message: 'No role Kế toán trưởng in organization PHAP_CHE',
      },
    });
  });

  it('an unknown tenant or organization exits 1 with its code', async () => {
    const tenant = await cli(
      `process create --tenant NOPE --org DEMO --file ${exampleProcessFile}`,
    );
    expect([tenant.code, tenant.stderr]).toEqual([
      1,
      'admin: TENANT_CODE_NOT_FOUND: No tenant with code NOPE\n',
    ]);
    const organization = await cli('process list --tenant DEMO --org NOPE --json');
    expect(organization.code).toBe(1);
    expect(organization.json<{ error: { code: string } }>().error.code).toBe(
      'ORGANIZATION_CODE_NOT_FOUND',
    );
  });
});
