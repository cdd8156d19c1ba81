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

/**
 * A failed parse as the spec's 400 VALIDATION_ERROR says it: the first issue's message, the
 * input it names (`details.field`, dotted) and zod's issue code (`details.code`). The server's
 * domain errors and the signing engine's errors are both built from it.
 */
export function validationFailure(error: z.ZodError): {
  message: string;
  field?: string;
  detailCode: string;
} {
  const issue = error.issues[0];
  const field = issue && issue.path.length > 0 ? issue.path.map(String).join('.') : undefined;
  const message = issue ? (field ? `${field}: ${issue.message}` : issue.message) : 'Invalid input';
  return {
    message,
    ...(field !== undefined ? { field } : {}),
    detailCode: issue?.code.toUpperCase() ?? 'INVALID',
  };
}
