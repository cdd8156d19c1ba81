import type { signingPage as vi } from '../vi/signingPage';

export const signingPage: typeof vi = {
  client: {
    opening: 'Opening the signing session…',
    working: 'Working, please wait…',
    signing: 'Signing the document…',
    otpSentSms: (to: string, time: string) =>
      `The code was sent to the phone number ${to}. It is valid until ${time}.`,
    otpSentEmail: (to: string, time: string) =>
      `The code was sent to the e-mail address ${to}. It is valid until ${time}.`,
    otpWaiting: 'Enter the code that was sent to you.',
    resendIn: (seconds: number) => `New code in ${seconds} s`,
    triesLeft: (count: number) => `Wrong code. You have ${count} tries left.`,
    otpFormat: 'The code has 6 digits.',
    imageEmpty: 'Please draw or upload your signature before signing.',
    imageType: 'Only PNG or JPEG pictures are accepted.',
    imageTooLarge: 'The picture is larger than 512 KB. Please choose a smaller one.',
    imageUnreadable: 'This picture cannot be read. Please choose another one.',
    imageLoaded: 'Signature picture loaded. Press Clear to choose again.',
    rejectConfirm: 'Do you really want to decline to sign? This cannot be undone.',
    reasonRequired: 'Please give a reason for declining.',
    generic: 'This could not be done. Please try again.',
    network: 'The server cannot be reached. Please check your connection and try again.',
    reload: 'The signing session is no longer valid on this page. Please reload the page.',
  },
  errors: {
    SIGNING_LINK_USED: 'This signing link has been used. Please ask the sender for a new link.',
    SIGNING_LINK_EXPIRED: 'The signing link has expired. Please ask the sender for a new link.',
    SIGNING_LINK_NOT_FOUND: 'The signing link is not valid.',
    SESSION_EXPIRED: 'The signing session has expired. Please reload the page to start again.',
    SESSION_SUPERSEDED: 'This signing session was replaced by a newer one.',
    SESSION_ALREADY_USED: 'This signing session has ended.',
    SESSION_LOCKED:
      'The session is locked after too many wrong codes. Please reload the page to start a new session.',
    OTP_EXPIRED: 'The code has expired. Please send a new code.',
    OTP_NOT_SENT: 'Please send the code first.',
    OTP_RESEND_TOO_SOON: 'Please wait before asking for a new code.',
    OTP_SEND_LIMIT_REACHED: 'Too many codes were asked for within an hour. Please try again later.',
    OTP_FAILURE_LIMIT_REACHED: 'Too many wrong codes. Please try again later.',
    SIGNER_UNREACHABLE:
      'There is no phone number or e-mail address to send the code to. Please contact the sender.',
    CONTRACT_CANCELLED: 'The contract was cancelled.',
    CONTRACT_EXPIRED: 'The signing deadline of the contract has passed.',
    CONTRACT_REJECTED: 'The contract was declined.',
    CONTRACT_COMPLETED: 'The contract is fully signed.',
    NOT_SIGNER_TURN: 'It is not your turn to sign yet.',
    NOT_YOUR_TURN: 'It is not your turn to sign yet.',
    SIGNER_ALREADY_SIGNED: 'You have signed this document already.',
    TASK_ALREADY_HANDLED: 'This task has already been handled.',
    TASK_EXPIRED: 'The task’s deadline has passed.',
    DOSSIER_ENDED: 'The dossier has ended.',
    SIGNER_KEY_NOT_ENROLLED:
      'You have no remote signing certificate yet. Please choose another way to sign or contact your administrator.',
    SIGNER_IDENTITY_MISMATCH: 'The certificate does not name the signer.',
    DOCUMENT_CHANGED:
      'Someone else has just signed the document. Please reload the page to sign the newest version.',
    IMAGE_TOO_LARGE: 'The signature picture is too large.',
    IMAGE_TYPE_UNSUPPORTED: 'Only PNG or JPEG pictures are accepted.',
    IMAGE_UNREADABLE: 'The signature picture cannot be read. Please draw again or choose another.',
    TIMESTAMP_FAILED:
      'The timestamp service is not answering at the moment. Please try again in a few minutes.',
    RATE_LIMITED: 'Too many attempts in a short time. Please wait a moment and try again.',
    CSRF_REFUSED: 'The page has expired. Please reload it and try again.',
    UNAUTHORIZED: 'The signing session is no longer valid on this page. Please reload the page.',
    VALIDATION_ERROR: 'Some information is not valid. Please check it.',
  },
};
