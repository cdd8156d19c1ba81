import { DomainError, Unauthenticated } from '../errors/domainError';

/**
 * The refusals of the signing sessions, one code per cause, so that a partner or the signing
 * page can tell what to do: wait for the turn, initiate again, ask another code, stop.
 */
/**
 * Another signer's revision got in first: the session's preparation is no longer the newest
 * version. A server-key confirm prepares again and retries on it; the caller sees 409.
 */
export class DocumentChanged extends DomainError {
  constructor() {
    super(
      'DOCUMENT_CHANGED',
      'Another signer signed the contract since this session was prepared; initiate again to sign the newest version',
    );
  }
}

export const sessionErrors = {
  sessionNotFound: () => new DomainError('SESSION_NOT_FOUND', 'No such signing session'),
  /** Another confirmation (or prepare) of the session moved it to its preparation first. */
  confirmationUnderWay: () =>
    new DomainError(
      'PREPARATION_NOT_OPEN',
      'Another confirmation of this signing session is under way; its outcome decides',
      { detailCode: 'SUPERSEDED' },
    ),
  signerNotFound: (email: string) =>
    new DomainError('SIGNER_NOT_FOUND', `${email} is not a signer of this contract`, {
      field: 'signerEmail',
    }),
  notASigner: () =>
    new DomainError('SIGNER_IS_VIEWER', 'A viewer does not sign', { field: 'signerEmail' }),
  alreadySigned: () =>
    new DomainError('SIGNER_ALREADY_SIGNED', 'This signer has already signed the contract', {
      field: 'signerEmail',
    }),
  notYourTurn: (waitingFor: number) =>
    new DomainError(
      'NOT_SIGNER_TURN',
      `It is not this signer's turn: the signers of order ${waitingFor} have not all signed`,
      { field: 'signerEmail' },
    ),
  expired: (at: string) =>
    new DomainError('SESSION_EXPIRED', `The signing session expired at ${at}; initiate again`),
  used: (state: string) =>
    new DomainError('SESSION_ALREADY_USED', `The signing session is over (${state})`, {
      detailCode: state.toUpperCase(),
    }),
  superseded: () =>
    new DomainError(
      'SESSION_SUPERSEDED',
      'A newer signing session of this signer replaced this one; use the newer session',
    ),
  locked: () =>
    new DomainError(
      'SESSION_LOCKED',
      'Too many wrong codes: the session is locked; initiate a new session',
    ),
  methodMismatch: (method: string, step: string) =>
    new DomainError('SIGNING_METHOD_MISMATCH', `A ${method} session has no ${step} step`, {
      detailCode: method.toUpperCase(),
    }),
  otpNotSent: () =>
    new DomainError('OTP_NOT_SENT', 'No code was sent for this session; call send-otp first', {
      field: 'otp',
    }),
  otpRequired: () =>
    new DomainError('VALIDATION_ERROR', 'otp: is required (6 digits)', {
      field: 'otp',
      detailCode: 'REQUIRED',
    }),
  imageRequired: () =>
    new DomainError('VALIDATION_ERROR', 'signatureImage: is required (a PNG or JPEG data URL)', {
      field: 'signatureImage',
      detailCode: 'REQUIRED',
    }),
  otpExpired: (at: string) =>
    new DomainError('OTP_EXPIRED', `The code expired at ${at}; ask for a new one`, {
      field: 'otp',
    }),
  otpInvalid: (remaining: number, then: 'session' | 'signer') =>
    new DomainError(
      'OTP_INVALID',
      `Wrong code; ${remaining} more wrong ${remaining === 1 ? 'try' : 'tries'} ${
        then === 'session' ? 'lock the session' : 'and no code is taken for a while'
      }`,
      { field: 'otp', triesLeft: remaining },
    ),
  otpFailureLimit: (seconds: number, count: number) =>
    new DomainError(
      'OTP_FAILURE_LIMIT_REACHED',
      `${count} wrong codes for this signer in 24 hours, whatever the session; try again in ${seconds} s`,
      { retryAfterSeconds: seconds },
    ),
  otpSendLimit: (seconds: number, count: number) =>
    new DomainError(
      'OTP_SEND_LIMIT_REACHED',
      `${count} codes were sent to this signer in the last hour, whatever the session; ask again in ${seconds} s`,
      { retryAfterSeconds: seconds },
    ),
  otpTooSoon: (seconds: number) =>
    new DomainError(
      'OTP_RESEND_TOO_SOON',
      `A code was sent less than a minute ago; ask again in ${seconds} s`,
      { retryAfterSeconds: seconds },
    ),
  documentChanged: () => new DocumentChanged(),
  keyNotEnrolled: (email: string) =>
    new DomainError(
      'SIGNER_KEY_NOT_ENROLLED',
      `${email} has no cloud signing key with a certificate yet; the operator enrols it (admin signer-key create, then import-certificate)`,
    ),
  imageTooLarge: (limit: number) =>
    new DomainError('IMAGE_TOO_LARGE', `The signature image is larger than ${limit} bytes`, {
      field: 'signatureImage',
    }),
  imageNotDataUrl: () =>
    new DomainError(
      'VALIDATION_ERROR',
      'signatureImage: must be a data URL, data:image/png;base64,… or data:image/jpeg;base64,…',
      { field: 'signatureImage', detailCode: 'INVALID_DATA_URL' },
    ),
  noOtpChannel: (name: string) =>
    new DomainError(
      'SIGNER_UNREACHABLE',
      `${name} has neither a phone nor an e-mail address to receive the code`,
    ),
  linkNotFound: () => new DomainError('SIGNING_LINK_NOT_FOUND', 'Unknown signing link'),
  linkUsed: () =>
    new DomainError('SIGNING_LINK_USED', 'The signing link has been opened already; it works once'),
  linkExpired: (at: string) =>
    new DomainError('SIGNING_LINK_EXPIRED', `The signing link expired at ${at}`),
  pageCredentialInvalid: () =>
    new Unauthenticated('The signing page credential is not valid for this session'),
};
