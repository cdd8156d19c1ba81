import { CodedError } from '@esign/shared';
import { DomainError } from '../errors/domainError';
import { countErrorAnswer } from '../metrics';

/**
 * The HTTP edge's one table from error codes (the domain's and the signing engine's) to HTTP
 * statuses. Domain and engine code throw codes; the app's error handler, the web app's pages
 * and the OpenAPI document (`errorResponses`) all read the status here, so what an operation
 * documents is what it answers.
 */

/** The HTTP statuses the service answers errors with, and their reason phrases. */
export const statusText = {
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

export const errorStatuses = {
  // admin
  AUDIT_CHAIN_BROKEN: 422,
  BACKUP_FILE_UNREADABLE: 500,
  BACKUP_SOURCE_MISSING: 404,
  BACKUP_TARGET_REFUSED: 409,
  MIGRATE_SCHEMA_MISMATCH: 409,
  MIGRATE_SOURCE_CHANGED: 409,
  MIGRATE_SOURCE_MISSING: 404,
  MIGRATE_SOURCE_NOT_SQLITE: 409,
  MIGRATE_TARGET_NOT_EMPTY: 409,
  MIGRATE_VERIFY_FAILED: 422,
  RESTORE_BACKUP_DAMAGED: 422,
  RESTORE_MANIFEST_INVALID: 422,
  RESTORE_SCHEMA_NEWER: 409,
  RESTORE_TARGET_NOT_EMPTY: 409,
  INVALID_JSON: 400,
  USER_NOT_FOUND: 404,
  // auth
  ACCOUNT_INACTIVE: 403,
  ACCOUNT_LOCKED: 403,
  API_KEY_ALREADY_EXISTS: 409,
  API_KEY_LEGACY_NOT_SUPPORTED: 401,
  API_KEY_NOT_FOUND: 404,
  API_KEY_SUPER_ADMIN_NOT_ALLOWED: 422,
  FORBIDDEN: 403,
  SUPER_ADMIN_NOT_ALLOWED: 403,
  UNAUTHORIZED: 401,
  USER_AMBIGUOUS: 400,
  // contracts
  CONTRACT_DEADLINE_PASSED: 409,
  CONTRACT_NOT_CANCELLABLE: 409,
  CONTRACT_NOT_DRAFT: 409,
  CONTRACT_NOT_FOUND: 404,
  CONTRACT_TYPE_EXISTS: 409,
  CONTRACT_TYPE_NOT_FOUND: 404,
  DOCX_CONVERSION_FAILED: 422,
  DOCX_CONVERSION_UNAVAILABLE: 415,
  DOCX_TOO_LARGE: 422,
  EXISTING_SIGNATURE_INVALID: 422,
  INVITATION_EXPIRED: 410,
  INVITATION_NOT_FOUND: 404,
  INVITATION_RESENT_RECENTLY: 429,
  NOT_A_DOCX: 415,
  SIGNED_FILE_NOT_AVAILABLE: 404,
  SIGNER_NOT_INVITED: 409,
  // directory
  EMAIL_ALREADY_EXISTS: 409,
  IDENTITY_IMMUTABLE: 409,
  MEMBER_ORGANIZATION_DUPLICATED: 409,
  MEMBER_ROLE_MISMATCH: 400,
  MEMBER_ROLE_REQUIRED: 400,
  USERNAME_ALREADY_EXISTS: 409,
  USER_CODE_ALREADY_EXISTS: 409,
  USER_CODE_AMBIGUOUS: 400,
  USER_CODE_DUPLICATED_IN_PAYLOAD: 400,
  USER_CODE_NOT_FOUND: 404,
  // dossiers
  DOCUMENT_NOT_FOUND: 404,
  DOSSIER_NOT_PENDING: 400,
  DUPLICATE_DOCUMENT_ID: 409,
  MISSING_ECM_CLASS_CODE: 422,
  PDF_ACTIVE_CONTENT: 422,
  PRESIGNED_URL_EXPIRED: 410,
  PRESIGNED_URL_INVALID: 403,
  PROCESS_HAS_NO_STEPS: 422,
  PROCESS_NOT_FOUND: 404,
  SIGNER_ACCOUNT_CONFLICT: 409,
  SIGNER_REQUIRED: 400,
  STEP_CODE_NOT_FOUND: 400,
  TEMPLATE_DATA_INVALID: 400,
  TEMPLATE_FIELD_UNKNOWN: 400,
  TEMPLATE_NOT_FOUND: 400,
  USERNAME_NOT_FOUND: 400,
  USER_LOCKED: 400,
  // http
  BAD_REQUEST_TARGET: 400,
  HEADERS_TOO_LARGE: 431,
  REQUEST_TIMEOUT: 408,
  // notify
  NOTIFY_MESSAGE_NOT_FOUND: 404,
  // outbound
  FILE_NOT_PDF: 415,
  FILE_URL_FORBIDDEN_ADDRESS: 400,
  FILE_URL_HTTP_STATUS: 502,
  FILE_URL_INVALID: 400,
  FILE_URL_REDIRECT: 502,
  FILE_URL_TIMEOUT: 502,
  FILE_URL_TLS: 502,
  FILE_URL_UNREACHABLE: 502,
  OUTBOUND_ADDRESS_FORBIDDEN: 400,
  OUTBOUND_RESPONSE_TOO_LARGE: 502,
  OUTBOUND_TIMEOUT: 502,
  OUTBOUND_TLS: 502,
  OUTBOUND_UNREACHABLE: 502,
  OUTBOUND_URL_INVALID: 400,
  // pdf
  IMAGE_TYPE_UNSUPPORTED: 415,
  IMAGE_UNREADABLE: 422,
  NOT_A_PDF: 415,
  PDF_CHANGES_NOT_ALLOWED: 422,
  PDF_ENCRYPTED: 422,
  PDF_FIELD_EXISTS: 409,
  PDF_PAGE_NOT_FOUND: 422,
  PDF_PLACEHOLDER_NOT_FOUND: 422,
  PDF_READER_BUSY: 503,
  PDF_SIGNATURE_TOO_LARGE: 422,
  PDF_TOO_COMPLEX: 422,
  PDF_UNREADABLE: 422,
  // platform
  DOCX_CONVERSION_BUSY: 503,
  DOCX_CONVERSION_TIMEOUT: 422,
  // processes
  PROCESS_IN_USE: 409,
  ROLE_AMBIGUOUS_IN_ORGANIZATION: 400,
  ROLE_NOT_FOUND_IN_ORGANIZATION: 404,
  USER_NOT_INTERNAL: 400,
  // serve
  BAD_REQUEST: 400,
  INTERNAL: 500,
  DATABASE_BUSY: 503,
  // sessions
  CONTRACT_NOT_SENT: 409,
  CONTRACT_NOT_SIGNED: 404,
  DOCUMENT_CHANGED: 409,
  IMAGE_TOO_LARGE: 413,
  MAIN_FILE_NOT_SINGLE: 409,
  NOT_SIGNER_TURN: 409,
  ORIGIN_NOT_REGISTERED: 400,
  OTP_EXPIRED: 410,
  OTP_FAILURE_LIMIT_REACHED: 429,
  OTP_INVALID: 422,
  OTP_NOT_SENT: 409,
  OTP_RESEND_TOO_SOON: 429,
  OTP_SEND_LIMIT_REACHED: 429,
  SESSION_ALREADY_USED: 409,
  SESSION_EXPIRED: 410,
  SESSION_LOCKED: 409,
  SESSION_NOT_FOUND: 404,
  SESSION_SUPERSEDED: 409,
  SIGNATURE_NOT_EXPECTED: 422,
  SIGNER_ALREADY_SIGNED: 409,
  SIGNER_IS_VIEWER: 409,
  SIGNER_KEY_NOT_ENROLLED: 409,
  SIGNER_NOT_FOUND: 404,
  SIGNER_UNREACHABLE: 409,
  SIGNING_LINK_EXPIRED: 410,
  SIGNING_LINK_NOT_FOUND: 404,
  SIGNING_LINK_USED: 409,
  SIGNING_METHOD_MISMATCH: 409,
  SIGNING_METHOD_NOT_ALLOWED: 422,
  // signing
  CERTIFICATE_CHAIN_EMPTY: 422,
  CERTIFICATE_CHAIN_INVALID: 422,
  CERTIFICATE_EXPIRED: 422,
  CERTIFICATE_INVALID: 422,
  CERTIFICATE_KEY_MISMATCH: 422,
  CERTIFICATE_KEY_UNSUPPORTED: 422,
  CERTIFICATE_KEY_USAGE: 422,
  CERTIFICATE_MALFORMED: 400,
  CERTIFICATE_NAME_NOT_PREPARED: 422,
  CERTIFICATE_NOT_PREPARED: 422,
  CERTIFICATE_NOT_YET_VALID: 422,
  CERTIFICATE_REVOKED: 422,
  CERTIFICATE_UNTRUSTED: 422,
  DEVELOPMENT_CA_DISABLED: 409,
  DOCUMENT_DIGEST_INVALID: 400,
  DOCUMENT_DIGEST_MISMATCH: 422,
  INVALID_BASE64: 400,
  KEYSTORE_UNAVAILABLE: 503,
  KEYSTORE_UNEXPECTED: 500,
  NOT_FOUND: 404,
  PAYLOAD_TOO_LARGE: 413,
  PREPARATION_EXPIRED: 410,
  PREPARATION_NOT_FOUND: 404,
  PREPARATION_NOT_OPEN: 409,
  PREPARATION_STALE: 409,
  RATE_LIMITED: 429,
  SEAL_CERTIFICATE_MISSING: 409,
  SIGNATURE_HASH_MISMATCH: 422,
  SIGNATURE_INVALID: 422,
  SIGNATURE_MALFORMED: 400,
  SIGNATURE_SCHEME_MISMATCH: 422,
  SIGNED_ATTRIBUTES_ABSENT: 422,
  SIGNED_ATTRIBUTES_EXTRA: 422,
  SIGNED_ATTRIBUTES_MALFORMED: 400,
  SIGNED_ATTRIBUTES_MISMATCH: 422,
  SIGNED_ATTRIBUTES_MISSING: 422,
  SIGNED_ATTRIBUTES_UNSORTED: 422,
  SIGNED_ATTRIBUTES_WRONG_TAG: 422,
  SIGNED_DATA_MALFORMED: 400,
  SIGNER_CERTIFICATE_MISSING: 409,
  SIGNER_CERTIFICATE_NOT_FIRST: 422,
  SIGNER_IDENTITY_MISMATCH: 422,
  SIGNER_KEY_EXISTS: 409,
  SIGNING_CERTIFICATE_MISMATCH: 422,
  SIGNING_KEY_IN_OTHER_STORE: 409,
  SIGNING_KEY_NOT_FOUND: 404,
  SIGNING_KEY_NOT_ON_TOKEN: 409,
  SIGNING_KEY_ON_OTHER_TOKEN: 409,
  SIGNING_KEY_UNREADABLE: 500,
  SOURCE_FILE_NOT_FOUND: 404,
  TIMESTAMP_FAILED: 502,
  TIMESTAMP_IMPRINT_MISMATCH: 422,
  TIMESTAMP_INVALID: 422,
  TIMESTAMP_REQUEST_INVALID: 400,
  TIMESTAMP_TOKEN_MALFORMED: 400,
  TRUST_ANCHOR_INVALID: 400,
  TRUST_ANCHOR_NOT_FOUND: 404,
  UNSUPPORTED_MEDIA_TYPE: 415,
  VALIDATION_ERROR: 400,
  // storage
  FILE_CONTENT_MISSING: 500,
  // tasks
  TASK_NOT_FOUND: 404,
  // templates
  TEMPLATE_FILE_UNREADABLE: 400,
  TEMPLATE_NOT_PDF: 400,
  TEMPLATE_PDF_ENCRYPTED: 400,
  TEMPLATE_TOO_LARGE: 413,
  TEMPLATE_WITHOUT_FORM_FIELDS: 400,
  // tenancy
  ORGANIZATION_CODE_ALREADY_EXISTS: 409,
  ORGANIZATION_CODE_AMBIGUOUS: 400,
  ORGANIZATION_CODE_NOT_FOUND: 404,
  ROLE_NAME_ALREADY_EXISTS: 409,
  TENANT_CODE_ALREADY_EXISTS: 409,
  TENANT_CODE_AMBIGUOUS: 400,
  TENANT_CODE_MISMATCH: 403,
  TENANT_CODE_NOT_FOUND: 404,
  TENANT_CODE_REQUIRED: 400,
  UNKNOWN_PERMISSION: 400,
  // web
  CONTRACT_CANCELLED: 409,
  CONTRACT_COMPLETED: 409,
  CONTRACT_EXPIRED: 409,
  CONTRACT_REJECTED: 409,
  CSRF_REFUSED: 403,
  FILE_NOT_FOUND: 404,
  FILE_TOO_LARGE: 413,
  INVALID_MULTIPART: 400,
  UNSUPPORTED_FILE_TYPE: 415,
  // webhooks
  ORGANIZATION_KEY_REQUIRED: 400,
  WEBHOOK_DELIVERY_IN_FLIGHT: 409,
  WEBHOOK_DELIVERY_NOT_FOUND: 404,
  WEBHOOK_SUBSCRIPTION_DISABLED: 409,
  WEBHOOK_SUBSCRIPTION_NOT_FOUND: 404,
  WEBHOOK_TEST_NOT_REDELIVERABLE: 409,
  // workflow
  ACKNOWLEDGE_REQUIRED: 422,
  DELEGATION_INTERNAL_ONLY: 422,
  DELEGATION_NOT_FOUND: 404,
  DELEGATION_TO_SELF: 422,
  DOSSIER_ENDED: 409,
  FILE_NOT_IN_DOSSIER: 400,
  NOT_A_NOTIFICATION_STEP: 422,
  NOT_YOUR_TURN: 409,
  SIGNATURE_REQUIRED: 422,
  TASK_ALREADY_HANDLED: 409,
  TASK_EXPIRED: 409,
} as const satisfies Record<string, ErrorStatus>;

export type ErrorCode = keyof typeof errorStatuses;

export function isErrorCode(code: string): code is ErrorCode {
  return Object.hasOwn(errorStatuses, code);
}

/** The status of a code; a code missing from the table is a bug of ours, answered as a 500. */
export function statusOfCode(code: string): ErrorStatus {
  return isErrorCode(code) ? errorStatuses[code] : 500;
}

export interface ErrorBody {
  statusCode: number;
  message: string;
  error: string;
  code: string;
  details?: { field?: string; code?: string; triesLeft?: number };
}

export interface ErrorAnswer {
  status: ErrorStatus;
  body: ErrorBody;
  headers: Record<string, string>;
}

const internal: ErrorAnswer = {
  status: 500,
  body: {
    statusCode: 500,
    message: 'Internal server error',
    error: statusText[500],
    code: 'INTERNAL',
  },
  headers: {},
};

/**
 * The spec's error body for a coded error, with its status and headers (Retry-After for a
 * refusal about pace). An unknown code is a bug and answers as any unexpected error: 500.
 * Every coded error answered goes through here once, so the refusal metrics count it here.
 */
export function errorAnswer(error: CodedError): ErrorAnswer {
  countErrorAnswer(error.code);
  if (!isErrorCode(error.code)) return internal;
  const status = errorStatuses[error.code];
  const body: ErrorBody = {
    statusCode: status,
    message: error.message,
    error: statusText[status],
    code: error.code,
  };
  const triesLeft = error instanceof DomainError ? error.triesLeft : undefined;
  if (error.field !== undefined || error.detailCode !== undefined) {
    body.details = {};
    if (error.field !== undefined) body.details.field = error.field;
    body.details.code = error.detailCode ?? error.code;
    if (triesLeft !== undefined) body.details.triesLeft = triesLeft;
  }
  const retryAfter = error.retryAfterSeconds;
  const headers: Record<string, string> =
    retryAfter === undefined ? {} : { 'Retry-After': String(retryAfter) };
  return { status, body, headers };
}

/** The answer for anything thrown: a coded error as the table says, anything else a 500. */
export function answerFor(error: unknown): ErrorAnswer {
  return error instanceof CodedError ? errorAnswer(error) : internal;
}
