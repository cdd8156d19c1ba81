import { EngineError } from '../../pdf/engineError';

/** Why a timestamp token was refused: `details.code` of the 422 TIMESTAMP_INVALID. */
export type TimestampInvalidReason =
  | 'MALFORMED'
  | 'NOT_TST_INFO'
  | 'IMPRINT_ALGORITHM'
  | 'IMPRINT_MISMATCH'
  | 'UNSUPPORTED_ALGORITHM'
  | 'TSA_CERTIFICATE_MISSING'
  | 'SIGNED_ATTRIBUTES_INVALID'
  | 'MESSAGE_DIGEST_MISMATCH'
  | 'SIGNING_CERTIFICATE_MISMATCH'
  | 'SIGNATURE_INVALID'
  | 'TSA_EKU_INVALID'
  | 'TSA_UNTRUSTED'
  | 'TSA_CERTIFICATE_NOT_VALID'
  | 'TSA_ISSUER_NOT_CA'
  | 'GEN_TIME_OUTSIDE_WINDOW';

/**
 * A timestamp token that does not prove what it must (a client's bad input, or a TSA's bad
 * answer): 422 TIMESTAMP_INVALID, `reason` as `details.code`. Callers that say it another way
 * (an imprint mismatch as TIMESTAMP_IMPRINT_MISMATCH, an untrusted TSA as a verification
 * finding) switch on `reason`.
 */
export class TimestampInvalid extends EngineError {
  constructor(
    readonly reason: TimestampInvalidReason,
    message: string,
  ) {
    super('TIMESTAMP_INVALID', `Timestamp token refused: ${message}`, { detailCode: reason });
  }
}

export function timestampInvalid(reason: TimestampInvalidReason, message: string): EngineError {
  return new TimestampInvalid(reason, message);
}

/** Why getting a timestamp from the TSA failed: `details.code` of the 502 TIMESTAMP_FAILED. */
export type TimestampFailedReason =
  | 'TSA_UNREACHABLE'
  | 'TSA_TIMEOUT'
  | 'TSA_HTTP_STATUS'
  | 'TSA_CONTENT_TYPE'
  | 'TSA_RESPONSE_MALFORMED'
  | 'TSA_REJECTED'
  | 'NONCE_MISMATCH'
  | TimestampInvalidReason;

/** The TSA did not give a valid timestamp: the signature fails, never with a local time. */
export class TimestampFailed extends EngineError {
  constructor(
    readonly reason: TimestampFailedReason,
    message: string,
  ) {
    super('TIMESTAMP_FAILED', `The timestamp authority failed: ${message}`, { detailCode: reason });
  }
}

export function timestampFailed(reason: TimestampFailedReason, message: string): EngineError {
  return new TimestampFailed(reason, message);
}
