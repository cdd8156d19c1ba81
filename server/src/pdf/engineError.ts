import { CodedError, validationFailure } from '@esign/shared';
import type { ZodError } from 'zod';

/**
 * The error the signing engine (`pdf/` and `signing/`) throws: a code (NOT_A_PDF,
 * CERTIFICATE_REVOKED, TIMESTAMP_FAILED, ...) and a message, never an HTTP status. It lives in
 * `pdf/`, the engine's lowest layer, so that both halves throw it without an import cycle. The
 * server's HTTP edge maps its code to a status like any other coded error.
 */
export class EngineError extends CodedError {}

/** A failed parse of an engine input, as 400 VALIDATION_ERROR naming the input at fault. */
export function engineValidationError(error: ZodError): EngineError {
  const { message, ...options } = validationFailure(error);
  return new EngineError('VALIDATION_ERROR', message, options);
}
