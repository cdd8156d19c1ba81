import { DomainError, type DomainErrorOptions } from './domainError';

/** Interim: the signing engine's old error with a status, until the engine has its own. */
type ErrorStatus =
  | 400
  | 401
  | 403
  | 404
  | 408
  | 409
  | 410
  | 413
  | 415
  | 422
  | 429
  | 431
  | 500
  | 502
  | 503;

export class ApiError extends DomainError {
  readonly status: ErrorStatus;

  constructor(
    status: ErrorStatus,
    code: string,
    message: string,
    options: DomainErrorOptions & { headers?: Record<string, string> } = {},
  ) {
    const { headers, ...rest } = options;
    const retryAfter = headers?.['Retry-After'];
    super(code, message, {
      ...rest,
      ...(retryAfter === undefined ? {} : { retryAfterSeconds: Number(retryAfter) }),
    });
    this.status = status;
  }
}

export { errors, unauthorizedMessages, validationError } from './domainError';
export type { ErrorStatus };
