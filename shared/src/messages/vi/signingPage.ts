/**
 * What the signing page's script says (server/web/signing-page): its steps and the API's
 * refusals it explains; any other code falls back to `client.generic`.
 */
export const signingPage = {
  client: {
    opening: 'Đang mở phiên ký…',
    working: 'Đang xử lý, vui lòng chờ…',
    signing: 'Đang ký tài liệu…',
    otpSentSms: (to: string, time: string) =>
      `Mã OTP đã được gửi tới số điện thoại ${to}. Mã có hiệu lực đến ${time}.`,
    otpSentEmail: (to: string, time: string) =>
      `Mã OTP đã được gửi tới địa chỉ e-mail ${to}. Mã có hiệu lực đến ${time}.`,
    otpWaiting: 'Nhập mã OTP đã được gửi cho bạn.',
    resendIn: (seconds: number) => `Gửi lại mã sau ${seconds} giây`,
    triesLeft: (count: number) => `Mã OTP không đúng. Bạn còn ${count} lần thử.`,
    otpFormat: 'Mã OTP gồm 6 chữ số.',
    imageEmpty: 'Vui lòng vẽ hoặc tải lên chữ ký của bạn trước khi ký.',
    imageType: 'Chỉ nhận ảnh PNG hoặc JPEG.',
    imageTooLarge: 'Ảnh chữ ký lớn hơn 512 KB. Vui lòng chọn ảnh nhỏ hơn.',
    imageUnreadable: 'Không đọc được ảnh này. Vui lòng chọn ảnh khác.',
    imageLoaded: 'Đã tải ảnh chữ ký. Bạn có thể bấm Vẽ lại để chọn lại.',
    rejectConfirm: 'Bạn chắc chắn muốn từ chối ký? Thao tác này không thể hoàn tác.',
    reasonRequired: 'Vui lòng nhập lý do từ chối.',
    generic: 'Chưa thực hiện được. Vui lòng thử lại.',
    network: 'Không kết nối được tới máy chủ. Vui lòng kiểm tra mạng và thử lại.',
    reload: 'Phiên ký không còn hiệu lực trên trang này. Vui lòng tải lại trang.',
  },
  errors: {
    SIGNING_LINK_USED:
      'Liên kết ký này đã được sử dụng. Vui lòng đề nghị bên gửi cấp liên kết mới.',
    SIGNING_LINK_EXPIRED: 'Liên kết ký đã hết hạn. Vui lòng đề nghị bên gửi cấp liên kết mới.',
    SIGNING_LINK_NOT_FOUND: 'Liên kết ký không hợp lệ.',
    SESSION_EXPIRED: 'Phiên ký đã hết hạn. Vui lòng tải lại trang để bắt đầu lại.',
    SESSION_SUPERSEDED: 'Phiên ký này đã được thay bằng một phiên mới hơn.',
    SESSION_ALREADY_USED: 'Phiên ký này đã kết thúc.',
    SESSION_LOCKED:
      'Phiên ký đã bị khóa do nhập sai mã quá nhiều lần. Vui lòng tải lại trang để bắt đầu phiên mới.',
    OTP_EXPIRED: 'Mã OTP đã hết hạn. Vui lòng bấm Gửi lại mã.',
    OTP_NOT_SENT: 'Vui lòng bấm Gửi mã OTP trước.',
    OTP_RESEND_TOO_SOON: 'Vui lòng chờ trước khi gửi lại mã.',
    OTP_SEND_LIMIT_REACHED: 'Bạn đã yêu cầu quá nhiều mã trong một giờ. Vui lòng thử lại sau.',
    OTP_FAILURE_LIMIT_REACHED: 'Bạn đã nhập sai mã quá nhiều lần. Vui lòng thử lại sau.',
    SIGNER_UNREACHABLE:
      'Chưa có số điện thoại hoặc e-mail để nhận mã OTP. Vui lòng liên hệ bên gửi.',
    CONTRACT_CANCELLED: 'Hợp đồng đã bị hủy.',
    CONTRACT_EXPIRED: 'Hợp đồng đã hết hạn ký.',
    CONTRACT_REJECTED: 'Hợp đồng đã bị từ chối ký.',
    CONTRACT_COMPLETED: 'Hợp đồng đã được ký đầy đủ.',
    NOT_SIGNER_TURN: 'Chưa đến lượt bạn ký.',
    NOT_YOUR_TURN: 'Chưa đến lượt bạn ký.',
    SIGNER_ALREADY_SIGNED: 'Bạn đã ký tài liệu này.',
    TASK_ALREADY_HANDLED: 'Công việc này đã được xử lý.',
    TASK_EXPIRED: 'Công việc đã quá hạn.',
    DOSSIER_ENDED: 'Hồ sơ đã kết thúc.',
    SIGNER_KEY_NOT_ENROLLED:
      'Bạn chưa có chứng thư số từ xa. Vui lòng chọn cách ký khác hoặc liên hệ quản trị viên.',
    SIGNER_IDENTITY_MISMATCH: 'Chứng thư số không đúng tên hoặc mã định danh của người ký.',
    DOCUMENT_CHANGED: 'Tài liệu vừa được người khác ký. Vui lòng tải lại trang để ký bản mới nhất.',
    IMAGE_TOO_LARGE: 'Ảnh chữ ký quá lớn.',
    IMAGE_TYPE_UNSUPPORTED: 'Chỉ nhận ảnh PNG hoặc JPEG.',
    IMAGE_UNREADABLE: 'Không đọc được ảnh chữ ký. Vui lòng vẽ lại hoặc chọn ảnh khác.',
    TIMESTAMP_FAILED:
      'Dịch vụ cấp dấu thời gian tạm thời không phản hồi. Vui lòng thử lại sau ít phút.',
    RATE_LIMITED: 'Bạn thao tác quá nhanh. Vui lòng chờ một chút rồi thử lại.',
    CSRF_REFUSED: 'Trang đã hết hạn. Vui lòng tải lại trang và thử lại.',
    UNAUTHORIZED: 'Phiên ký không còn hiệu lực trên trang này. Vui lòng tải lại trang.',
    VALIDATION_ERROR: 'Thông tin chưa hợp lệ. Vui lòng kiểm tra lại.',
  } as Record<string, string>,
};
