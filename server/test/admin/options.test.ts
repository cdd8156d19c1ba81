import { z } from 'zod';
import {
  checked,
  command,
  forbiddenWith,
  option,
  requiredWhen,
  UsageError,
} from '../../src/admin/command';
import { commands } from '../../src/admin/commands';
import { roleCodeFromName } from '../../src/admin/commands/role';
import { DomainError } from '../../src/errors/domainError';

/** The one option parser of the operator CLI, without a child process or a database. */
const sample = command({
  name: 'sample run',
  options: z
    .object({
      tenant: option.text.optional(),
      code: option.code,
      limit: option.limit(100, 20),
      kind: option.oneOf(['internal', 'external']).optional(),
      tags: option.list.optional(),
      member: option.repeated,
      expires: checked(option.text.optional(), (value) => {
        if (value === 'never') throw new DomainError('VALIDATION_ERROR', 'expires is in the past');
        return value;
      }),
      global: option.flag,
    })
    .superRefine(forbiddenWith('global', ['tenant', 'member'], '--global (no tenant)'))
    .superRefine(requiredWhen('global', false, ['tenant'])),
  prepare: (options) => async () => ({ json: { ...options }, lines: [] }),
});

async function accepted(values: Record<string, unknown>) {
  const action = sample.accept(values, new Date());
  if (typeof action !== 'function') throw new Error('an offline action');
  return (await action({} as never)).json;
}

function refusal(values: Record<string, unknown>): string {
  try {
    sample.accept(values, new Date());
  } catch (error) {
    if (error instanceof UsageError) return error.message;
    throw error;
  }
  throw new Error('accepted');
}

describe('admin CLI options', () => {
  it('tell parseArgs which options are flags, repeated or take a value', () => {
    expect(sample.argumentOptions).toEqual({
      tenant: { type: 'string' },
      code: { type: 'string' },
      limit: { type: 'string' },
      kind: { type: 'string' },
      tags: { type: 'string' },
      member: { type: 'string', multiple: true },
      expires: { type: 'string' },
      global: { type: 'boolean' },
    });
    expect(commands.get('user create')?.argumentOptions).toMatchObject({
      member: { type: 'string', multiple: true },
      'super-admin': { type: 'boolean' },
      password: { type: 'string' },
    });
  });

  it('trim values, split lists, apply defaults and convert numbers', async () => {
    expect(
      await accepted({
        tenant: ' ACME ',
        code: 'K1',
        tags: 'a, b,,c',
        limit: '7',
        member: [' x '],
      }),
    ).toEqual({
      tenant: 'ACME',
      code: 'K1',
      tags: ['a', 'b', 'c'],
      limit: 7,
      member: ['x'],
      global: false,
    });
    expect(await accepted({ tenant: 'T', code: 'K' })).toMatchObject({ limit: 20, member: [] });
  });

  it.each([
    [{ tenant: 'T' }, 'sample run: --code is required'],
    [{ tenant: 'T', code: '  ' }, 'sample run: --code must not be empty'],
    [{ tenant: 'T', code: 'A B' }, '--code must be 1 to 64 characters without spaces'],
    [{ tenant: 'T', code: 'K', limit: '0' }, '--limit must be a positive integer, got "0"'],
    [{ tenant: 'T', code: 'K', limit: '101' }, '--limit must be at most 100'],
    [{ tenant: 'T', code: 'K', kind: 'robot' }, '--kind must be internal or external, got "robot"'],
    [{ tenant: 'T', code: 'K', expires: 'never' }, 'sample run: expires is in the past'],
    [{ code: 'K' }, 'sample run: --tenant is required'],
    [
      { code: 'K', global: true, tenant: 'T', member: ['x'] },
      'sample run: --tenant, --member cannot be used with --global (no tenant)',
    ],
  ])('refuse %j', (values, message) => {
    expect(refusal(values)).toContain(message);
  });

  it('drop the options every command has (--json, --help)', async () => {
    expect(await accepted({ code: 'K', global: true, json: true, help: false })).not.toHaveProperty(
      'json',
    );
  });
});

describe('role codes derived from names', () => {
  it.each([
    ['Nhân viên', 'NHAN_VIEN'],
    ['Trưởng phòng kinh doanh', 'TRUONG_PHONG_KINH_DOANH'],
    ['Đại diện pháp luật', 'DAI_DIEN_PHAP_LUAT'],
    ['  Kế toán (HN) #2 ', 'KE_TOAN_HN_2'],
    ['—', 'ROLE'],
  ])('%s → %s', (name, code) => {
    expect(roleCodeFromName(name)).toBe(code);
  });

  it('leave room for a suffix within 64 characters', () => {
    const code = roleCodeFromName('Giám đốc '.repeat(20));
    expect(code.length).toBeLessThanOrEqual(60);
    expect(code).toMatch(/^GIAM_DOC_.*[A-Z]$/);
  });
});
