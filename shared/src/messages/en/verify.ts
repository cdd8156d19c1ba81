import type { verify as vi } from '../vi/verify';

export const verify: typeof vi = {
  title: 'Verify digital signatures',
  intro:
    'Upload a signed PDF to check each digital signature in it: who signed, when, whether the signature is still valid and whether the document was changed after signing.',
  privacy:
    'The file is used for this check only and deleted at once: nothing of it is stored or recorded.',
  fileLabel: 'Signed PDF file',
  fileHint: (megabytes: number) => `.pdf files only, up to ${megabytes} MB.`,
  submit: 'Check the signatures',
  again: 'Check another file',
  resultTitle: 'Verification result',
  fileName: 'File',
  signatureCount: 'Signatures',
  checkedAt: 'Checked at',
  verdict: {
    valid: 'Every signature in the file is valid and the document was not changed after signing.',
    invalid:
      'A signature is not valid or the document was changed. See each signature below for why.',
    none: 'This file has no digital signature.',
  },
  badge: { valid: 'Valid', invalid: 'Not valid', none: 'No signature' },
  signatureHeading: (index: number) => `Signature ${index}`,
  timestampHeading: (index: number) => `Document timestamp ${index}`,
  field: 'Signature field',
  signer: 'Signed by',
  subject: 'Certificate subject',
  issuer: 'Certificate issued by',
  validity: 'Certificate validity',
  signedAt: 'Signed at',
  unknown: 'Unknown',
  level: 'Signature level (PAdES)',
  levels: {
    'B-B': 'B-B: a basic signature, without a trusted timestamp.',
    'B-T': 'B-T: a trusted timestamp proves when it was signed.',
    'B-LT':
      'B-LT: timestamped, and the file carries the validation data (certificates, revocation status), so it can be checked even when the issuer no longer answers.',
    'B-LTA':
      'B-LTA: as B-LT, plus an archive timestamp protecting all the validation data: checkable for the long term.',
  },
  mark: { success: 'Passed', danger: 'Failed', warning: 'Note', info: 'Note' },
  checks: 'What was checked',
  integrity: {
    passed: 'The signed content is intact: the signature matches the document.',
    failed:
      'The signature does not match the content: the signed part was altered after signing, or the signature is damaged.',
  },
  certificate: {
    valid:
      'The certificate was issued by a trusted certification authority and was valid when signing.',
    untrusted:
      'The certificate does not come from a trusted certification authority (or its chain to one cannot be built).',
    expired: 'The certificate had expired, or was not yet valid, when signing.',
    revoked: 'The certificate was revoked before the signing time.',
    unknown: 'The certificate of this signature could not be checked.',
  },
  timestamp: {
    verified: 'The signing time is confirmed by a timestamp from a trusted timestamp authority.',
    missing:
      "No valid trusted timestamp: the signing time is only what the signer's computer wrote.",
  },
  coverage: {
    whole: 'The signature covers the whole file.',
    partial:
      'The signature does not cover the whole file: something was added after signing (see the changes).',
  },
  modified: {
    none: 'Nothing was changed after signing.',
    allowed:
      'Additions after signing are all allowed ones: other signatures, validation data, timestamps.',
    disallowed: 'The document was changed after signing in a way this signature does not allow.',
  },
  identity: {
    label: "Signer's identity",
    bound: (kinds: string) => `The certificate names the signer by: ${kinds}.`,
    none: 'The certificate carries no identity number (ID card, tax code, e-mail): a name only.',
    note: 'The service does not know who was expected to sign this file: compare the name and the numbers with the person you expect.',
    kinds: {
      CCCD: 'citizen ID number (CCCD)',
      CMND: 'ID card number (CMND)',
      PID: 'personal ID number',
      HC: 'passport number',
      UID: 'identity number',
      MST: 'tax code',
      MNS: 'budget unit code',
      BHXH: 'social insurance number',
      email: 'e-mail',
    },
  },
  changes: 'Changes after signing',
  changeLine: (revision: number, what: string) => `Update ${revision}: ${what}`,
  technical: 'Technical details',
  errors: {
    missing: 'Please choose a PDF file to check.',
    notPdf: 'The file you chose is not a PDF. Please choose a .pdf file.',
    unreadable:
      'This PDF cannot be read: it is damaged, encrypted, or its structure is beyond what the check reads.',
    tooLarge: (megabytes: number) =>
      `The file is larger than ${megabytes} MB, more than the check accepts.`,
    malformed: 'No file was received. Please choose the file and send it again.',
    rateLimited: (seconds: number) =>
      `You sent too many files in a short time. Please try again in ${seconds} seconds.`,
    busy: 'The service is busy checking many files. Please try again in a few minutes.',
  },
};
