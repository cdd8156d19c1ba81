import type { signing as vi } from '../vi/signing';

export const signing: typeof vi = {
  eyebrow: { contract: 'Electronic contract', task: 'Dossier to sign' },
  pageTitle: { contract: 'Sign the contract', task: 'Sign the dossier' },
  step: (name: string) => `Step: ${name}`,
  facts: {
    label: 'Signing details',
    signer: 'Signer',
    deadline: 'Sign by',
    noDeadline: 'No deadline',
    reference: { contract: 'Contract ID', task: 'Dossier ID' },
    state: 'Status',
  },
  badge: {
    yours: 'Awaiting your signature',
    waiting: 'Not your turn yet',
    signed: 'Signed',
    declined: 'Declined',
    viewer: 'View only',
    closed: {
      completed: 'Completed',
      cancelled: 'Cancelled',
      expired: 'Expired',
      rejected: 'Declined by a signer',
      notSent: 'Not sent yet',
      handled: 'Handled',
      notSigned: 'Not signed here',
    },
  },
  document: {
    heading: 'Document',
    intro: 'Please read the whole document carefully before you sign.',
    download: 'Download the document (PDF)',
    downloadSigned: 'Download the signed copy (PDF)',
    signedName: (title: string) => `${title} (signed)`,
    hidden: 'The document is no longer shown through this link.',
  },
  turn: {
    yours: 'It is your turn to sign. Choose how to sign below.',
    waiting: (names: string) => `It is not your turn yet: waiting for ${names} to sign first.`,
    waitingAnyone: 'It is not your turn yet. Please wait for the previous signers.',
    signed: 'You have signed this document.',
    signedAt: 'Signed at',
    declined: 'You declined to sign this document.',
    viewer: 'You are invited to view this contract. You do not need to sign.',
    closed: {
      completed: 'The document is fully signed. No further signature is needed.',
      cancelled: 'The contract was cancelled. It can no longer be signed.',
      expired:
        'The signing deadline has passed. Please contact the sender if you still need to sign.',
      rejected: 'The document was declined, so signing cannot continue.',
      notSent: 'The contract has not been sent for signing yet.',
      handled: 'This task has already been handled.',
      notSigned: 'This step is not signed on the signing page. Please handle it on the Tasks page.',
    },
    tasksLink: 'Go to Tasks',
  },
  link: {
    invalid: {
      title: 'This signing link is not valid',
      text: 'The link you opened is wrong or no longer exists. Please check it, or ask the sender for a new link.',
    },
    used: {
      title: 'This signing link has been used',
      text: 'Each signing link works once. If you have not finished signing, please ask the sender for a new link.',
    },
    expired: {
      title: 'This signing link has expired',
      text: 'A signing link is valid for 30 minutes. Please ask the sender for a new link.',
    },
    superseded: {
      title: 'This signing link was replaced',
      text: 'A newer signing link was made for you. Please use the newest link.',
    },
    locked: {
      title: 'The signing session is locked',
      text: 'The one-time code was entered wrongly too many times. Please ask the sender for a new link.',
    },
    ended: {
      title: 'The signing session has ended',
      text: 'The signing session of this link has ended. Please contact the sender if you need help.',
    },
  },
  sign: {
    heading: 'Sign the document',
    choose: 'Choose how to sign',
    methods: {
      usb_token: 'USB token',
      cloud_hsm: 'Remote signature',
      otp_sms: 'One-time code',
      image_signature: 'Signature image',
    },
    hints: {
      usb_token:
        'Sign with the certificate on your USB token, through the signing app on your computer.',
      cloud_hsm:
        'Sign with your certificate kept in the service’s HSM. A one-time code confirms that you agree to sign.',
      otp_sms:
        'Confirm with a one-time code sent to your phone; the document is signed with the service’s electronic seal.',
      image_signature:
        'Draw your signature with a mouse or a finger, or upload a picture of it; the document is signed with the service’s electronic seal.',
    },
    consent: 'By signing you confirm that you have read and agree to the whole document.',
  },
  otp: {
    send: 'Send the code',
    label: 'One-time code (6 digits)',
    confirm: 'Confirm and sign',
    resend: 'Send a new code',
  },
  image: {
    padLabel: 'Signature pad: sign with a mouse or a finger',
    padHint: 'Sign inside the box below.',
    clear: 'Clear',
    upload: 'Or upload a picture of your signature (PNG, JPEG, up to 512 KB)',
    confirm: 'Confirm and sign',
  },
  usb: {
    intro: 'Plug your USB token into this computer and open the signing app to continue.',
  },
  reject: {
    summary: 'Decline to sign',
    label: 'Reason for declining',
    hint: 'The reason is sent to the sender of the document.',
    submit: 'Decline to sign',
  },
  result: {
    signed: 'You have signed successfully.',
    rejected: 'You declined to sign. The sender has been told.',
    certificate: 'Certificate',
  },
  verification: {
    heading: 'Signature verification',
    allValid: 'Every signature in the document is valid.',
    notValid: 'A signature is not valid, or the document was changed after signing.',
    valid: 'Valid',
    invalid: 'Not valid',
    signature: (index: number) => `Signature ${index}`,
    documentTimestamp: 'Archive timestamp',
    unknownSigner: 'Unknown signer',
    signedBy: 'Signed by',
    signedAt: 'Time',
    integrity: {
      passed: 'The content has not changed since signing',
      failed: 'The content was changed after signing',
    },
    certificate: {
      valid: 'The certificate is valid',
      expired: 'The certificate has expired',
      revoked: 'The certificate was revoked',
      untrusted: 'The certificate was not issued by a trusted authority',
      unknown: 'The certificate’s status could not be established',
    },
    timestamp: {
      yes: 'Trusted timestamp present',
      no: 'No valid timestamp',
    },
    level: (level: string) => `Signature standard: PAdES ${level}`,
    failed: 'The signatures cannot be verified right now. Please reload the page later.',
  },
  secure:
    'Your connection is encrypted. The document is shown only to the people invited to sign, and every action is recorded.',
};
