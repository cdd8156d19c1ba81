/**
 * The server's own sentences in API answers, and the names it gives the files people download.
 * In the service's language (NOTIFY_LOCALE).
 */
export const server = {
  otpSent: {
    sms: (to: string) => `Mã OTP đã được gửi tới số điện thoại ${to}`,
    email: (to: string) => `Mã OTP đã được gửi tới địa chỉ e-mail ${to}`,
  },
  downloadName: {
    signedContract: (title: string) => `${title} (đã ký)`,
    contractAuditTrail: (title: string) => `${title} - nhật ký ký số`,
    dossierAuditTrail: (title: string) => `${title} - nhật ký hồ sơ`,
  },
};
