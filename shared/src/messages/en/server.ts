import type { server as vi } from '../vi/server';

export const server: typeof vi = {
  otpSent: {
    sms: (to: string) => `The OTP has been sent to the phone number ${to}`,
    email: (to: string) => `The OTP has been sent to the e-mail address ${to}`,
  },
  downloadName: {
    signedContract: (title: string) => `${title} (signed)`,
    contractAuditTrail: (title: string) => `${title} - signing audit trail`,
    dossierAuditTrail: (title: string) => `${title} - dossier audit trail`,
  },
};
