import { durationSeconds, maxSteps, parseProcessDefinition } from '../../src/processes/definition';
import { exampleDefinition, refusal, withStep } from './fixtures';

/** The 400 a definition gets: status, code and details.field. */
async function fieldOf(definition: unknown) {
  const refused = await refusal(() => parseProcessDefinition(definition));
  expect(refused.status).toBe(400);
  expect(refused.code).toBe('VALIDATION_ERROR');
  expect(refused.message.startsWith(`${refused.field}: `)).toBe(true);
  return refused.field;
}

describe('Process definition: the process fields', () => {
  it('accepts examples/process.json: steps in order, deadlines in seconds, labels set', () => {
    const parsed = parseProcessDefinition(exampleDefinition());
    expect(parsed).toEqual({
      code: 'HD_DICH_VU',
      name: 'Ký hợp đồng dịch vụ',
      documentClasses: ['HOP_DONG_DICH_VU'],
      steps: [
        {
          stepCode: 'PHAP_CHE_DUYET',
          name: 'Phòng Pháp chế duyệt',
          kind: 'role',
          signType: 'app_submit',
          deadlineSeconds: 2 * 86400,
          approveLabel: 'Duyệt',
          rejectLabel: 'Trả lại',
          organizationCode: 'PHAP_CHE',
          roleName: 'Chuyên viên pháp chế',
          defaultUsername: null,
        },
        {
          stepCode: 'KHACH_HANG_KY',
          name: 'Khách hàng ký',
          kind: 'guest',
          signType: 'digital_signature',
          deadlineSeconds: 7 * 86400,
          approveLabel: 'Ký',
          rejectLabel: 'Từ chối',
          organizationCode: null,
          roleName: null,
          defaultUsername: null,
        },
        {
          stepCode: 'GIAM_DOC_KY',
          name: 'Giám đốc ký',
          kind: 'internal',
          signType: 'digital_signature',
          deadlineSeconds: 48 * 3600,
          approveLabel: 'Ký',
          rejectLabel: 'Từ chối',
          organizationCode: null,
          roleName: null,
          defaultUsername: 'giamdoc',
        },
      ],
    });
  });

  it('the definition is a JSON object', async () => {
    for (const input of [[], 'HD', null, 42]) {
      const refused = await refusal(() => parseProcessDefinition(input));
      expect([refused.status, refused.code, refused.field]).toEqual([
        400,
        'VALIDATION_ERROR',
        undefined,
      ]);
    }
  });

  it('code is required, not blank, at most 255 characters', async () => {
    const { code: _code, ...withoutCode } = exampleDefinition();
    expect(await fieldOf(withoutCode)).toBe('code');
    expect(await fieldOf({ ...exampleDefinition(), code: '  ' })).toBe('code');
    expect(await fieldOf({ ...exampleDefinition(), code: 'C'.repeat(256) })).toBe('code');
    expect(parseProcessDefinition({ ...exampleDefinition(), code: 'C'.repeat(255) }).code).toBe(
      'C'.repeat(255),
    );
  });

  it('name is required and not blank', async () => {
    expect(await fieldOf({ ...exampleDefinition(), name: undefined })).toBe('name');
    expect(await fieldOf({ ...exampleDefinition(), name: '' })).toBe('name');
  });

  it('documentClasses lists at least one ecmClassCode, each at most 255 characters, none twice', async () => {
    expect(await fieldOf({ ...exampleDefinition(), documentClasses: [] })).toBe('documentClasses');
    expect(await fieldOf({ ...exampleDefinition(), documentClasses: 'HOP_DONG' })).toBe(
      'documentClasses',
    );
    expect(await fieldOf({ ...exampleDefinition(), documentClasses: ['A', 'B'.repeat(256)] })).toBe(
      'documentClasses.1',
    );
    expect(await fieldOf({ ...exampleDefinition(), documentClasses: ['A', 'B', 'A'] })).toBe(
      'documentClasses.2',
    );
    expect(
      parseProcessDefinition({ ...exampleDefinition(), documentClasses: ['A', 'B'] })
        .documentClasses,
    ).toEqual(['A', 'B']);
  });

  it(`steps lists at least one and at most ${maxSteps} steps`, async () => {
    const step = exampleDefinition().steps[1]!;
    expect(await fieldOf({ ...exampleDefinition(), steps: [] })).toBe('steps');
    const many = Array.from({ length: maxSteps + 1 }, (_, index) => ({
      ...step,
      stepCode: `S${index}`,
    }));
    expect(await fieldOf({ ...exampleDefinition(), steps: many })).toBe('steps');
    expect(
      parseProcessDefinition({ ...exampleDefinition(), steps: many.slice(0, maxSteps) }).steps,
    ).toHaveLength(maxSteps);
  });

  it('a key the format does not know is refused at that key (a typo must not pass silently)', async () => {
    expect(await fieldOf({ ...exampleDefinition(), documentClass: ['A'] })).toBe('documentClass');
    expect(await fieldOf(withStep(1, { deadLine: 'P1D' }))).toBe('steps.1.deadLine');
    expect(await fieldOf(withStep(0, { actionLabels: { approve: 'Duyệt', ok: 'x' } }))).toBe(
      'steps.0.actionLabels.ok',
    );
  });

  it('texts are trimmed and stored in Unicode NFC', () => {
    const decomposed = ' Ký hợp đồng '.normalize('NFD');
    const parsed = parseProcessDefinition({
      ...withStep(1, { name: 'Khách hàng ký'.normalize('NFD') }),
      name: decomposed,
    });
    expect(parsed.name).toBe('Ký hợp đồng');
    expect(parsed.steps[1]!.name).toBe('Khách hàng ký'.normalize('NFC'));
  });
});

describe('Process definition: the step fields', () => {
  it('stepCode is required, at most 64 characters', async () => {
    expect(await fieldOf(withStep(1, { stepCode: undefined }))).toBe('steps.1.stepCode');
    expect(await fieldOf(withStep(1, { stepCode: 'S'.repeat(65) }))).toBe('steps.1.stepCode');
    expect(
      parseProcessDefinition(withStep(1, { stepCode: 'S'.repeat(64) })).steps[1]!.stepCode,
    ).toBe('S'.repeat(64));
  });

  it('stepCode is unique in the process', async () => {
    expect(await fieldOf(withStep(2, { stepCode: 'KHACH_HANG_KY' }))).toBe('steps.2.stepCode');
  });

  it('name is required', async () => {
    expect(await fieldOf(withStep(2, { name: ' ' }))).toBe('steps.2.name');
  });

  it('kind is guest, phone_guest, internal or role', async () => {
    expect(await fieldOf(withStep(1, { kind: 'email_guest' }))).toBe('steps.1.kind');
    expect(parseProcessDefinition(withStep(1, { kind: 'phone_guest' })).steps[1]!.kind).toBe(
      'phone_guest',
    );
  });

  it('signType is digital_signature, image_signature, app_submit or notification', async () => {
    expect(await fieldOf(withStep(1, { signType: 'otp_sms' }))).toBe('steps.1.signType');
    for (const signType of ['digital_signature', 'image_signature', 'app_submit', 'notification']) {
      expect(parseProcessDefinition(withStep(1, { signType })).steps[1]!.signType).toBe(signType);
    }
  });

  it('deadline is an ISO 8601 duration in weeks, days, hours, minutes, seconds; absent or null means none', async () => {
    const seconds = (deadline: unknown) =>
      parseProcessDefinition(withStep(1, { deadline })).steps[1]!.deadlineSeconds;
    expect(seconds('P3D')).toBe(259_200);
    expect(seconds('PT48H')).toBe(172_800);
    expect(seconds('P1W')).toBe(604_800);
    expect(seconds('P1DT12H30M')).toBe(131_400);
    expect(seconds('PT90S')).toBe(90);
    expect(seconds(null)).toBeNull();
    expect(seconds(undefined)).toBeNull();
    for (const bad of ['3 days', 'P', 'PT', 'P1M', 'P1Y', 'p3d', 'P1.5D', '-P1D', 72]) {
      expect(await fieldOf(withStep(1, { deadline: bad }))).toBe('steps.1.deadline');
    }
  });

  it('deadline is longer than zero and at most P366D', async () => {
    expect(await fieldOf(withStep(1, { deadline: 'PT0S' }))).toBe('steps.1.deadline');
    expect(await fieldOf(withStep(1, { deadline: 'P367D' }))).toBe('steps.1.deadline');
    expect(
      parseProcessDefinition(withStep(1, { deadline: 'P366D' })).steps[1]!.deadlineSeconds,
    ).toBe(366 * 86400);
    expect(durationSeconds('P52W')).toBe(364 * 86400);
  });

  it('actionLabels default to Vietnamese labels by signType; reject defaults to "Từ chối"', () => {
    const labels = (signType: string) => {
      const step = parseProcessDefinition(withStep(1, { signType })).steps[1]!;
      return [step.approveLabel, step.rejectLabel];
    };
    expect(labels('digital_signature')).toEqual(['Ký', 'Từ chối']);
    expect(labels('image_signature')).toEqual(['Ký', 'Từ chối']);
    expect(labels('app_submit')).toEqual(['Phê duyệt', 'Từ chối']);
    expect(labels('notification')).toEqual(['Đã xem', 'Từ chối']);
    const own = parseProcessDefinition(withStep(1, { actionLabels: { reject: 'Không đồng ý' } }));
    expect([own.steps[1]!.approveLabel, own.steps[1]!.rejectLabel]).toEqual(['Ký', 'Không đồng ý']);
  });

  it('a role step needs organizationCode and roleName', async () => {
    expect(await fieldOf(withStep(0, { organizationCode: undefined }))).toBe(
      'steps.0.organizationCode',
    );
    expect(await fieldOf(withStep(0, { roleName: undefined }))).toBe('steps.0.roleName');
  });

  it('organizationCode and roleName belong to role steps only', async () => {
    expect(await fieldOf(withStep(1, { organizationCode: 'PHAP_CHE' }))).toBe(
      'steps.1.organizationCode',
    );
    expect(await fieldOf(withStep(2, { roleName: 'Giám đốc' }))).toBe('steps.2.roleName');
  });

  it('defaultUsername belongs to internal steps only and is optional there', async () => {
    expect(await fieldOf(withStep(1, { defaultUsername: 'giamdoc' }))).toBe(
      'steps.1.defaultUsername',
    );
    expect(await fieldOf(withStep(0, { defaultUsername: 'giamdoc' }))).toBe(
      'steps.0.defaultUsername',
    );
    expect(
      parseProcessDefinition(withStep(2, { defaultUsername: undefined })).steps[2]!.defaultUsername,
    ).toBeNull();
  });
});
