import { z } from 'zod';
import { firstIssue, issuePath, plainIssues } from '../src/zodIssues';

describe('zod issues in plain words', () => {
  it('write paths as a reader names fields', () => {
    expect(issuePath([])).toBe('');
    expect(issuePath(['port'])).toBe('port');
    expect(issuePath(['certificates', 0, 'notAfter'])).toBe('certificates[0].notAfter');
    expect(issuePath([0, 'label'])).toBe('[0].label');
  });

  it('name the first problem, with the wrong type said plainly', () => {
    const schema = z.object({ a: z.object({ b: z.array(z.string()) }), c: z.boolean() });
    const result = schema.safeParse({ a: { b: ['x', 5] }, c: 'no' }, { error: plainIssues });
    expect(result.success).toBe(false);
    if (result.success) return;
    expect(firstIssue(result.error)).toBe('a.b[1] must be a string');
    expect(result.error.issues[1]?.message).toBe('must be true or false');
    expect(firstIssue(result.error, (path) => `--${path}`)).toBe('--a.b[1] must be a string');
  });

  it('keep the schema’s own message where it gives one', () => {
    const result = z
      .string()
      .min(2, 'must be at least 2 characters')
      .safeParse('x', { error: plainIssues });
    expect(result.success || firstIssue(result.error)).toBe('must be at least 2 characters');
  });
});
