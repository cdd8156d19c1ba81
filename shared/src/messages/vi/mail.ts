/** The e-mails and SMS the service sends itself (server/src/notify lays them out). */
export const mail = {
  greeting: (name: string) => `Kính gửi ${name || 'Quý khách'},`,
  regards: 'Trân trọng,',
  automated: 'Đây là thư tự động, vui lòng không trả lời thư này.',
  untitled: '(không có tiêu đề)',
  document: 'Hồ sơ',
  documentId: 'Mã hồ sơ',
  step: 'Bước',
  stepValue: (stepName: string, order: number, total: number) =>
    `${stepName} (bước ${order}/${total})`,
  prevActor: 'Người xử lý bước trước',
  dueBy: 'Hạn xử lý',
  linkValidUntil: 'Liên kết có hiệu lực đến',
  completedAt: 'Thời điểm hoàn tất',
  rejectedBy: 'Người từ chối',
  reason: 'Lý do từ chối',
  userName: 'Tên đăng nhập',
  password: 'Mật khẩu',
  sandbox: (recipient: string) =>
    `[SANDBOX] Thư này được gửi tới địa chỉ của tài khoản nhà phát triển thay cho người nhận thật: ${recipient}.`,
  internal: {
    subject: (title: string) => `Bạn có công việc cần xử lý: ${title}`,
    intro: (title: string, stepName: string | null) =>
      stepName !== null
        ? `Bạn được giao xử lý bước “${stepName}” của hồ sơ “${title}”.`
        : `Bạn được giao xử lý hồ sơ “${title}”.`,
    link: 'Mở hồ sơ để xử lý',
  },
  external: {
    subject: (title: string) => `Mời bạn ký hồ sơ: ${title}`,
    intro: (title: string) => `Bạn được mời xem xét và ký hồ sơ “${title}”.`,
    link: 'Xem và ký hồ sơ',
    newAccount: 'Một tài khoản đã được tạo để bạn đăng nhập:',
    keepSecret:
      'Vui lòng đổi mật khẩu sau lần đăng nhập đầu tiên và không chuyển tiếp thư này cho người khác.',
    existingAccount: 'Bạn cũng có thể đăng nhập bằng tài khoản hiện có:',
  },
  rejected: {
    subject: (title: string) => `Hồ sơ bị từ chối: ${title}`,
    intro: (title: string, stepName: string | null) =>
      stepName !== null
        ? `Hồ sơ “${title}” đã bị từ chối ở bước “${stepName}”.`
        : `Hồ sơ “${title}” đã bị từ chối.`,
    link: 'Xem hồ sơ',
  },
  finished: {
    subject: (title: string) => `Hồ sơ đã hoàn tất: ${title}`,
    intro: (title: string) => `Quy trình ký hồ sơ “${title}” đã hoàn tất.`,
    link: 'Xem hồ sơ',
  },
  contract: {
    label: 'Hợp đồng',
    id: 'Mã hợp đồng',
    sender: 'Người gửi',
    deadline: 'Hạn ký',
    reason: 'Lý do',
    signedBy: 'Người đã ký',
    code: 'Mã OTP',
    invitation: {
      subject: (title: string) => `Mời bạn ký hợp đồng: ${title}`,
      intro: (title: string) => `Bạn được mời xem xét và ký hợp đồng “${title}”.`,
      link: 'Xem và ký hợp đồng',
    },
    viewing: {
      subject: (title: string) => `Hợp đồng gửi bạn để xem: ${title}`,
      intro: (title: string) => `Hợp đồng “${title}” được gửi tới bạn để xem.`,
      link: 'Xem hợp đồng',
    },
    expired: {
      subject: (title: string) => `Hợp đồng đã hết hạn ký: ${title}`,
      intro: (title: string) => `Hợp đồng “${title}” đã hết hạn ký trước khi mọi người ký xong.`,
    },
    cancelled: {
      subject: (title: string) => `Hợp đồng đã bị hủy: ${title}`,
      intro: (title: string) => `Hợp đồng “${title}” đã bị hủy; liên kết ký không còn hiệu lực.`,
    },
    completed: {
      subject: (title: string) => `Hợp đồng đã được ký xong: ${title}`,
      intro: (title: string) => `Mọi người đã ký hợp đồng “${title}”.`,
    },
    rejected: {
      subject: (title: string) => `Hợp đồng bị từ chối: ${title}`,
      intro: (title: string) => `Hợp đồng “${title}” đã bị từ chối ký.`,
    },
    signed: {
      subject: (title: string) => `Một lượt ký đã xong: ${title}`,
      intro: (title: string) =>
        `Các bên của một lượt đã ký hợp đồng “${title}”; người ký tiếp theo đã được mời.`,
    },
    otp: {
      subject: (title: string) => `Mã OTP ký hợp đồng: ${title}`,
      intro: (title: string) =>
        `Mã OTP để ký hợp đồng “${title}” ở dưới, có hiệu lực 5 phút. Không chia sẻ mã này với bất kỳ ai.`,
    },
  },
  /** An instant in messages: `15:00 ngày 25/11/2026 (GMT+7)`. */
  instant: (date: string, time: string) => `${time} ngày ${date} (GMT+7)`,
  /** SMS stay without diacritics (GSM 7-bit alphabet, 160 characters a part). */
  sms: {
    otp: (otp: string, minutes: number) =>
      `Ma OTP cua ban la ${otp}, co hieu luc trong ${minutes} phut. Khong chia se ma nay voi bat ky ai.`,
    invited: (serviceName: string, title: string) =>
      `${serviceName}: Ban duoc moi ky ho so "${title}".`,
    signAt: (url: string) => `Ky tai: ${url}`,
    account: (userName: string, password: string) =>
      `Tai khoan: ${userName}, mat khau: ${password}`,
  },
};
