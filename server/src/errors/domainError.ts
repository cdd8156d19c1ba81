import { CodedError, type CodedErrorOptions, validationFailure } from '@esign/shared';
import type { ZodError } from 'zod';

export interface DomainErrorOptions extends CodedErrorOptions {
  /** How many more tries the caller has (a wrong one-time code), when it matters. */
  triesLeft?: number;
}

/**
 * The error every domain and infrastructure module throws: a code from the spec
 * (USER_CODE_NOT_FOUND, CONTRACT_EXPIRED, ...) and a message, never an HTTP status. The HTTP
 * edge (http/errorStatuses.ts) maps the code to a status and writes the spec's error body; the
 * web app maps the same codes to pages.
 */
export class DomainError extends CodedError {
  readonly triesLeft: number | undefined;

  constructor(code: string, message: string, options: DomainErrorOptions = {}) {
    super(code, message, options);
    this.triesLeft = options.triesLeft;
  }
}

/** Messages of the spec's 401 table, exactly as written there. */
export const unauthorizedMessages = {
  invalidKey: 'API key không hợp lệ',
  keyWithoutUser: 'API key chưa gắn người dùng',
  inactiveServiceAccount: 'Tài khoản dịch vụ không hoạt động',
} as const;

/**
 * A credential that does not hold (unknown key, wrong password, expired token): the one refusal
 * that spends the caller's failed-check budget.
 */
export class Unauthenticated extends DomainError {
  constructor(message = 'Unauthorized', code = 'UNAUTHORIZED') {
    super(code, message);
  }
}

export const errors = {
  unauthorized: (message = 'Unauthorized') => new Unauthenticated(message),
  forbidden: () => new DomainError('FORBIDDEN', 'Forbidden: insufficient permissions'),
  notFound: (code: string, message: string) => new DomainError(code, message),
  validation: (field: string, message: string, detailCode = 'INVALID') =>
    new DomainError('VALIDATION_ERROR', message, { field, detailCode }),
};

/** First problem of a failed zod parse, as the spec's 400: `details.field` names the input. */
export function validationError(error: ZodError): DomainError {
  const { message, ...options } = validationFailure(error);
  return new DomainError('VALIDATION_ERROR', message, options);
}
