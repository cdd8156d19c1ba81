import { ContractListQuery } from '../../src/contracts/schemas';
import { DossierListQuery } from '../../src/dossiers/schemas';
import { TaskListQuery } from '../../src/tasks/schemas';

/** The three lists bound by a date range share one schema helper: same bounds, same refusal. */
describe.each([
  ['tasks', TaskListQuery],
  ['dossiers', DossierListQuery],
  ['contracts', ContractListQuery],
] as const)('%s list query date range', (_name, schema) => {
  it('takes a bare date as a whole day and normalises date-times to UTC', () => {
    const parsed = schema.parse({ fromDate: '2026-11-25', toDate: '2026-11-25' });
    expect(parsed.fromDate).toBe('2026-11-25T00:00:00.000Z');
    expect(parsed.toDate).toBe('2026-11-25T23:59:59.999Z');
    expect(schema.parse({ fromDate: '2026-11-25T16:45:00+07:00' }).fromDate).toBe(
      '2026-11-25T09:45:00.000Z',
    );
  });

  it('refuses a toDate before fromDate on toDate, and a date without offset', () => {
    const backwards = schema.safeParse({
      fromDate: '2026-11-25T10:00:00Z',
      toDate: '2026-11-25T09:00:00Z',
    });
    expect(backwards.success).toBe(false);
    expect(backwards.error?.issues.map(({ path, message }) => ({ path, message }))).toEqual([
      { path: ['toDate'], message: 'must not be before fromDate' },
    ]);
    const local = schema.safeParse({ toDate: '2026-11-25T10:00:00' });
    expect(local.error?.issues.map(({ path, message }) => ({ path, message }))).toEqual([
      { path: ['toDate'], message: 'must be an ISO 8601 date or date-time' },
    ]);
  });
});
