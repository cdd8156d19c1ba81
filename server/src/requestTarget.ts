import { DomainError } from './errors/domainError';

/**
 * Request targets the service cannot route: a backslash in the path, an absolute URL that does
 * not parse, a missing Host, a path whose percent-encoding is not UTF-8 (`%zz`, `%FF`). They get
 * the same JSON error body as every other refusal, whichever layer spots them.
 */
export function badRequestTarget(reason: string): DomainError {
  return new DomainError('BAD_REQUEST_TARGET', `Malformed request target: ${reason}`);
}

/** Why `pathname` (still percent-encoded) cannot be decoded, or null when it can. */
export function undecodablePath(pathname: string): string | null {
  try {
    decodeURIComponent(pathname);
    return null;
  } catch {
    return 'the path has an invalid percent-encoding';
  }
}
