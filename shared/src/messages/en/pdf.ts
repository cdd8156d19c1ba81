import type { pdf as vi } from '../vi/pdf';

export const pdf: typeof vi = {
  signedBy: (name: string, at: string) => `Signed by: ${name} — ${at}`,
  reason: {
    contract: {
      usb_token: 'Contract signed with a USB token',
      cloud_hsm: 'Contract signed with a remote signing key',
      otp_sms: 'Contract signed, confirmed by OTP',
      image_signature: 'Contract signed with a signature image',
    },
    dossier: {
      usb_token: 'Dossier signed with a USB token',
      cloud_hsm: 'Dossier signed with a remote signing key',
      otp_sms: 'Dossier signed, confirmed by OTP',
      image_signature: 'Dossier signed with a signature image',
    },
  },
  auditTrail: {
    document: 'Document',
    hash: 'Document hash',
    generatedAt: 'Generated at',
    timeZone: 'Vietnam time, UTC+07:00',
    number: 'No.',
    time: 'Time',
    actor: 'Actor',
    action: 'Action',
    details: 'Details',
    noEvents: 'No events',
    continued: 'cont.',
    page: (page: number, total: number) => `Page ${page}/${total}`,
  },
  auditActions: {
    created: 'Created',
    sent: 'Sent for signing',
    viewed: 'Viewed',
    downloaded: 'Downloaded',
    cancelled: 'Cancelled',
    expired: 'Expired',
    session_initiated: 'Signing session started',
    otp_sent: 'OTP sent',
    otp_failed: 'Wrong OTP',
    signed: 'Signed',
    rejected: 'Rejected',
    completed: 'Completed',
    invitation_resent: 'Invitation sent again',
  },
  dossierActions: {
    created: 'Created',
  },
  contractTrail: {
    title: (title: string) => `Audit trail: ${title}`,
    reason: 'Audit trail',
  },
  dossierTrail: {
    title: (title: string) => `Dossier audit trail: ${title}`,
    reason: 'Audit trail',
  },
};
