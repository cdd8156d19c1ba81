/** Texts of the signing page (/ky-so/…) as the server renders it; its script's are in signingPage. */
export const signing = {
  eyebrow: { contract: 'Hợp đồng điện tử', task: 'Hồ sơ cần ký' },
  pageTitle: { contract: 'Ký hợp đồng', task: 'Ký hồ sơ' },
  step: (name: string) => `Bước: ${name}`,
  facts: {
    label: 'Thông tin ký',
    signer: 'Người ký',
    deadline: 'Hạn ký',
    noDeadline: 'Không giới hạn',
    reference: { contract: 'Mã hợp đồng', task: 'Mã hồ sơ' },
    state: 'Trạng thái',
  },
  badge: {
    yours: 'Chờ bạn ký',
    waiting: 'Chưa đến lượt',
    signed: 'Đã ký',
    declined: 'Đã từ chối',
    viewer: 'Chỉ xem',
    closed: {
      completed: 'Đã hoàn tất',
      cancelled: 'Đã hủy',
      expired: 'Hết hạn ký',
      rejected: 'Đã bị từ chối',
      notSent: 'Chưa gửi ký',
      handled: 'Đã xử lý',
      notSigned: 'Không ký tại đây',
    },
  },
  document: {
    heading: 'Tài liệu',
    intro: 'Vui lòng đọc kỹ toàn bộ tài liệu trước khi ký.',
    download: 'Tải tài liệu (PDF)',
    downloadSigned: 'Tải bản đã ký (PDF)',
    signedName: (title: string) => `${title} (đã ký)`,
    hidden: 'Tài liệu không còn hiển thị qua liên kết này.',
  },
  turn: {
    yours: 'Đến lượt bạn ký. Chọn cách ký phù hợp bên dưới.',
    waiting: (names: string) => `Chưa đến lượt bạn ký. Đang chờ ${names} ký trước.`,
    waitingAnyone: 'Chưa đến lượt bạn ký. Vui lòng chờ người ký trước hoàn tất.',
    signed: 'Bạn đã ký tài liệu này.',
    signedAt: 'Thời điểm ký',
    declined: 'Bạn đã từ chối ký tài liệu này.',
    viewer: 'Bạn được mời để xem hợp đồng này. Bạn không cần ký.',
    closed: {
      completed: 'Tài liệu đã được ký đầy đủ. Không cần ký thêm.',
      cancelled: 'Hợp đồng đã bị hủy. Bạn không thể ký.',
      expired: 'Đã quá hạn ký. Vui lòng liên hệ bên gửi nếu bạn vẫn cần ký.',
      rejected: 'Tài liệu đã bị từ chối ký nên không thể ký tiếp.',
      notSent: 'Hợp đồng chưa được gửi để ký.',
      handled: 'Công việc này đã được xử lý.',
      notSigned: 'Bước này không ký số trên trang ký. Vui lòng xử lý tại trang Xử lý công việc.',
    },
    tasksLink: 'Đến trang Xử lý công việc',
  },
  link: {
    invalid: {
      title: 'Liên kết ký không hợp lệ',
      text: 'Liên kết bạn mở không đúng hoặc không còn tồn tại. Vui lòng kiểm tra lại liên kết, hoặc liên hệ bên gửi để nhận liên kết mới.',
    },
    used: {
      title: 'Liên kết ký đã được sử dụng',
      text: 'Mỗi liên kết ký chỉ dùng được một lần. Nếu bạn chưa ký xong, vui lòng đề nghị bên gửi cấp liên kết mới.',
    },
    expired: {
      title: 'Liên kết ký đã hết hạn',
      text: 'Liên kết ký chỉ có hiệu lực trong 30 phút. Vui lòng đề nghị bên gửi cấp liên kết mới.',
    },
    superseded: {
      title: 'Liên kết ký đã được thay thế',
      text: 'Một liên kết ký mới hơn đã được tạo cho bạn. Vui lòng dùng liên kết mới nhất.',
    },
    locked: {
      title: 'Phiên ký đã bị khóa',
      text: 'Mã OTP đã bị nhập sai quá số lần cho phép. Vui lòng đề nghị bên gửi cấp liên kết mới.',
    },
    ended: {
      title: 'Phiên ký đã kết thúc',
      text: 'Phiên ký của liên kết này đã kết thúc. Vui lòng liên hệ bên gửi nếu bạn cần hỗ trợ.',
    },
  },
  sign: {
    heading: 'Ký tài liệu',
    choose: 'Chọn cách ký',
    methods: {
      usb_token: 'USB token',
      cloud_hsm: 'Chữ ký số từ xa',
      otp_sms: 'Mã OTP',
      image_signature: 'Chữ ký hình ảnh',
    },
    hints: {
      usb_token: 'Ký bằng chứng thư số trên USB token của bạn, qua ứng dụng ký trên máy tính.',
      cloud_hsm:
        'Ký bằng chứng thư số của bạn lưu trên HSM của dịch vụ. Mã OTP xác nhận bạn đồng ý ký.',
      otp_sms:
        'Xác nhận bằng mã OTP gửi tới điện thoại của bạn; tài liệu được ký bằng con dấu điện tử của dịch vụ.',
      image_signature:
        'Vẽ chữ ký bằng chuột hoặc ngón tay, hoặc tải ảnh chữ ký lên; tài liệu được ký bằng con dấu điện tử của dịch vụ.',
    },
    consent: 'Khi bấm ký, bạn xác nhận đã đọc và đồng ý với toàn bộ nội dung tài liệu.',
  },
  otp: {
    send: 'Gửi mã OTP',
    label: 'Mã OTP (6 chữ số)',
    confirm: 'Xác nhận và ký',
    resend: 'Gửi lại mã',
  },
  image: {
    padLabel: 'Khung vẽ chữ ký: dùng chuột hoặc ngón tay để ký',
    padHint: 'Ký trong khung bên dưới.',
    clear: 'Vẽ lại',
    upload: 'Hoặc tải ảnh chữ ký (PNG, JPEG, tối đa 512 KB)',
    confirm: 'Xác nhận và ký',
  },
  usb: {
    intro: 'Cắm USB token vào máy tính và mở ứng dụng ký để tiếp tục.',
  },
  reject: {
    summary: 'Từ chối ký',
    label: 'Lý do từ chối',
    hint: 'Lý do sẽ được gửi tới bên gửi tài liệu.',
    submit: 'Từ chối ký',
  },
  result: {
    signed: 'Bạn đã ký thành công.',
    rejected: 'Bạn đã từ chối ký. Bên gửi đã được thông báo.',
    certificate: 'Chứng thư số',
  },
  verification: {
    heading: 'Kết quả xác thực chữ ký',
    allValid: 'Tất cả chữ ký trong tài liệu đều hợp lệ.',
    notValid: 'Có chữ ký không hợp lệ, hoặc tài liệu đã bị thay đổi sau khi ký.',
    valid: 'Hợp lệ',
    invalid: 'Không hợp lệ',
    signature: (index: number) => `Chữ ký ${index}`,
    documentTimestamp: 'Dấu thời gian lưu trữ',
    unknownSigner: 'Không rõ người ký',
    signedBy: 'Người ký',
    signedAt: 'Thời điểm',
    integrity: {
      passed: 'Nội dung không bị thay đổi sau khi ký',
      failed: 'Nội dung đã bị thay đổi sau khi ký',
    },
    certificate: {
      valid: 'Chứng thư số hợp lệ',
      expired: 'Chứng thư số đã hết hạn',
      revoked: 'Chứng thư số đã bị thu hồi',
      untrusted: 'Chứng thư số không do tổ chức tin cậy cấp',
      unknown: 'Chưa xác định được tình trạng chứng thư số',
    } as Record<string, string>,
    timestamp: {
      yes: 'Có dấu thời gian đáng tin cậy',
      no: 'Không có dấu thời gian hợp lệ',
    },
    level: (level: string) => `Chuẩn chữ ký: PAdES ${level}`,
    failed: 'Chưa thể xác thực chữ ký lúc này. Vui lòng tải lại trang sau.',
  },
  secure:
    'Kết nối được mã hóa. Tài liệu chỉ hiển thị cho người được mời ký; mỗi thao tác đều được ghi nhật ký.',
};
