/** Texts written into PDFs: the visible signature, its /Reason, and the audit-trail PDF. */
export const pdf = {
  /** The visible signature's line: who signed and when. */
  signedBy: (name: string, at: string) => `Ký bởi: ${name} — ${at}`,
  /** The signature dictionary's /Reason, per signing method. */
  reason: {
    contract: {
      usb_token: 'Ký hợp đồng bằng USB token',
      cloud_hsm: 'Ký hợp đồng bằng chữ ký số từ xa',
      otp_sms: 'Ký hợp đồng, xác nhận bằng OTP',
      image_signature: 'Ký hợp đồng bằng chữ ký hình ảnh',
    },
    dossier: {
      usb_token: 'Ký hồ sơ bằng USB token',
      cloud_hsm: 'Ký hồ sơ bằng chữ ký số từ xa',
      otp_sms: 'Ký hồ sơ, xác nhận bằng OTP',
      image_signature: 'Ký hồ sơ bằng chữ ký hình ảnh',
    },
  },
  /** The audit-trail PDF's labels (Vietnamese first, English beneath). */
  auditTrail: {
    document: 'Tài liệu',
    hash: 'Mã băm tài liệu',
    generatedAt: 'Thời điểm lập',
    timeZone: 'giờ Việt Nam, UTC+07:00',
    number: 'STT',
    time: 'Thời gian',
    actor: 'Người thực hiện',
    action: 'Hành động',
    details: 'Chi tiết',
    noEvents: 'Chưa có sự kiện nào',
    continued: 'tiếp',
    page: (page: number, total: number) => `Trang ${page}/${total}`,
  },
  /** The audit trail's actions; `dossierActions` where a dossier's wording differs. */
  auditActions: {
    created: 'Tạo hợp đồng',
    sent: 'Gửi ký',
    viewed: 'Xem',
    downloaded: 'Tải xuống',
    cancelled: 'Huỷ',
    expired: 'Hết hạn',
    session_initiated: 'Bắt đầu phiên ký',
    otp_sent: 'Gửi OTP',
    otp_failed: 'OTP sai',
    signed: 'Đã ký',
    rejected: 'Từ chối',
    completed: 'Hoàn tất',
    invitation_resent: 'Gửi lại lời mời ký',
  },
  dossierActions: {
    created: 'Tạo hồ sơ',
  },
  /** The heading and the seal's reason of a contract's and of a dossier's audit-trail PDF. */
  contractTrail: {
    title: (title: string) => `Nhật ký ký số: ${title}`,
    reason: 'Nhật ký ký số',
  },
  dossierTrail: {
    title: (title: string) => `Nhật ký hồ sơ: ${title}`,
    reason: 'Nhật ký hồ sơ',
  },
};
