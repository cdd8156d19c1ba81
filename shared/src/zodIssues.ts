/**
 * Plain-language messages for zod issues, shared by every place that shows a refusal to a
 * person (agent protocol, agent settings, server configuration, operator CLI): `<where> <what>`,
 * e.g. `certificates[0].notAfter must be a string`.
 */
import type { z } from 'zod';

/** `certificates[0].notAfter`: an issue's path as a message names it. */
export function issuePath(path: readonly PropertyKey[]): string {
  return path
    .map((key, index) =>
      typeof key === 'number' ? `[${key}]` : index === 0 ? String(key) : `.${String(key)}`,
    )
    .join('');
}

const typeNames: Record<string, string> = {
  string: 'a string',
  number: 'a number',
  int: 'an integer',
  boolean: 'true or false',
  object: 'an object',
  array: 'an array',
};

/**
 * The error map for parses whose schemas give their own messages only where the rule is
 * particular: a wrong type reads `must be a string`, without zod's "Invalid input" preamble.
 */
export const plainIssues: z.core.$ZodErrorMap = (issue) =>
  issue.code === 'invalid_type'
    ? `must be ${typeNames[issue.expected] ?? issue.expected}`
    : undefined;

/** The first issue of a failed parse as one sentence, e.g. `versions[0] must be an integer`. */
export function firstIssue(error: z.ZodError, where: (path: string) => string = (p) => p): string {
  const [issue] = error.issues;
  if (!issue) return 'is not valid';
  const path = where(issuePath(issue.path));
  return path === '' ? issue.message : `${path} ${issue.message}`;
}
