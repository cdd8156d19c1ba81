import type { ZodError } from 'zod';

/** The HTTP statuses the service answers errors with, and their reason phrases. */
const statusText = {
  400: 'Bad Request',
  401: 'Unauthorized',
  403: 'Forbidden',
  404: 'Not Found',
  408: 'Request Timeout',
  409: 'Conflict',
  410: 'Gone',
  413: 'Payload Too Large',
  415: 'Unsupported Media Type',
  422: 'Unprocessable Entity',
  429: 'Too Many Requests',
  431: 'Request Header Fields Too Large',
  500: 'Internal Server Error',
  502: 'Bad Gateway',
  503: 'Service Unavailable',
} as const;

export type ErrorStatus = keyof typeof statusText;

export interface ErrorBody {
  statusCode: number;
  message: string;
  error: string;
  code: string;
  details?: { field?: string; code?: string; triesLeft?: number };
}

/**
 * The one error type of the service, kept out of the HTTP layer so that every domain and
 * infrastructure module can throw it. The app's error handler only turns it into the spec's
 * error body. `code` is the spec's code (UNAUTHORIZED, USER_CODE_NOT_FOUND, ...).
 */
export class ApiError extends Error {
  readonly status: ErrorStatus;
  readonly code: string;
  readonly field: string | undefined;
  readonly detailCode: string | undefined;
  /** How many more tries the caller has (a wrong one-time code), when it matters. */
  readonly triesLeft: number | undefined;
  readonly headers: Record<string, string>;

  constructor(
    status: ErrorStatus,
    code: string,
    message: string,
    options: {
      field?: string;
      detailCode?: string;
      triesLeft?: number;
      headers?: Record<string, string>;
    } = {},
  ) {
    super(message);
    this.name = 'ApiError';
    this.status = status;
    this.code = code;
    this.field = options.field;
    this.detailCode = options.detailCode;
    this.triesLeft = options.triesLeft;
    this.headers = options.headers ?? {};
  }

  toBody(): ErrorBody {
    const body: ErrorBody = {
      statusCode: this.status,
      message: this.message,
      error: statusText[this.status],
      code: this.code,
    };
    if (this.field !== undefined || this.detailCode !== undefined) {
      body.details = {};
      if (this.field !== undefined) body.details.field = this.field;
      body.details.code = this.detailCode ?? this.code;
      if (this.triesLeft !== undefined) body.details.triesLeft = this.triesLeft;
    }
    return body;
  }
}

/** Messages of the spec's 401 table, exactly as written there. */
export const unauthorizedMessages = {
  invalidKey: 'API key không hợp lệ',
  keyWithoutUser: 'API key chưa gắn người dùng',
  inactiveServiceAccount: 'Tài khoản dịch vụ không hoạt động',
} as const;

export const errors = {
  unauthorized: (message = 'Unauthorized') => new ApiError(401, 'UNAUTHORIZED', message),
  forbidden: () => new ApiError(403, 'FORBIDDEN', 'Forbidden: insufficient permissions'),
  notFound: (code: string, message: string) => new ApiError(404, code, message),
  validation: (field: string, message: string, detailCode = 'INVALID') =>
    new ApiError(400, 'VALIDATION_ERROR', message, { field, detailCode }),
};

/**
 * The codes of these errors by HTTP status, as an operation documents its answers
 * (`errorResponses` in http/openapi.ts): taken from the errors themselves, so the documented
 * status is the one answered.
 */
export function codesByStatus(...answers: ApiError[]): { [S in ErrorStatus]?: string[] } {
  const codes: { [S in ErrorStatus]?: string[] } = {};
  for (const { status, code } of answers) {
    const known = codes[status] ?? [];
    if (!known.includes(code)) codes[status] = [...known, code];
  }
  return codes;
}

/** First problem of a failed zod parse, as the spec's 400: `details.field` names the input. */
export function validationError(error: ZodError): ApiError {
  const issue = error.issues[0];
  const field = issue && issue.path.length > 0 ? issue.path.map(String).join('.') : undefined;
  const message = issue ? (field ? `${field}: ${issue.message}` : issue.message) : 'Invalid input';
  return new ApiError(400, 'VALIDATION_ERROR', message, {
    ...(field !== undefined ? { field } : {}),
    detailCode: issue?.code.toUpperCase() ?? 'INVALID',
  });
}
