/** Texts of `/xac-thuc`: anyone checks the signatures of a signed PDF. */
export const verify = {
  title: 'Xác thực chữ ký số',
  intro:
    'Tải lên một tệp PDF đã ký để kiểm tra từng chữ ký số trong tệp: ai đã ký, ký lúc nào, chữ ký còn hợp lệ không và tài liệu có bị thay đổi sau khi ký hay không.',
  privacy:
    'Tệp chỉ được dùng để kiểm tra rồi xóa ngay: hệ thống không lưu tệp và không ghi lại nội dung.',
  fileLabel: 'Tệp PDF đã ký',
  fileHint: (megabytes: number) => `Chỉ tệp .pdf, tối đa ${megabytes} MB.`,
  submit: 'Kiểm tra chữ ký',
  again: 'Kiểm tra tệp khác',
  resultTitle: 'Kết quả xác thực',
  fileName: 'Tệp',
  signatureCount: 'Số chữ ký',
  checkedAt: 'Thời điểm kiểm tra',
  verdict: {
    valid: 'Tất cả chữ ký trong tệp đều hợp lệ và tài liệu không bị thay đổi sau khi ký.',
    invalid:
      'Có chữ ký không hợp lệ hoặc tài liệu đã bị thay đổi. Xem chi tiết từng chữ ký bên dưới.',
    none: 'Tệp này không có chữ ký số nào.',
  },
  badge: { valid: 'Hợp lệ', invalid: 'Không hợp lệ', none: 'Không có chữ ký' },
  signatureHeading: (index: number) => `Chữ ký ${index}`,
  timestampHeading: (index: number) => `Dấu thời gian tài liệu ${index}`,
  field: 'Trường chữ ký',
  signer: 'Người ký',
  subject: 'Chủ thể chứng thư số',
  issuer: 'Tổ chức cấp chứng thư',
  validity: 'Hiệu lực chứng thư',
  signedAt: 'Thời điểm ký',
  unknown: 'Không rõ',
  level: 'Mức chữ ký (PAdES)',
  levels: {
    'B-B': 'B-B: chữ ký cơ bản, không có dấu thời gian tin cậy.',
    'B-T': 'B-T: có dấu thời gian tin cậy chứng minh thời điểm ký.',
    'B-LT':
      'B-LT: có dấu thời gian và kèm sẵn dữ liệu xác minh (chứng thư, tình trạng thu hồi) trong tệp, kiểm tra được cả khi tổ chức cấp không còn trả lời.',
    'B-LTA':
      'B-LTA: như B-LT, thêm dấu thời gian lưu trữ bảo vệ toàn bộ dữ liệu xác minh: kiểm chứng được lâu dài.',
  },
  mark: { success: 'Đạt', danger: 'Không đạt', warning: 'Lưu ý', info: 'Lưu ý' },
  checks: 'Các bước kiểm tra',
  integrity: {
    passed: 'Nội dung được ký còn nguyên vẹn: chữ ký khớp với tài liệu.',
    failed:
      'Chữ ký không khớp với nội dung: phần được ký đã bị sửa sau khi ký, hoặc chữ ký bị hỏng.',
  },
  certificate: {
    valid: 'Chứng thư số do tổ chức chứng thực được tin cậy cấp và còn hiệu lực vào thời điểm ký.',
    untrusted:
      'Chứng thư số không thuộc tổ chức chứng thực được tin cậy (hoặc không dựng được chuỗi chứng thư đến tổ chức đó).',
    expired: 'Chứng thư số đã hết hạn, hoặc chưa có hiệu lực, vào thời điểm ký.',
    revoked: 'Chứng thư số đã bị thu hồi trước thời điểm ký.',
    unknown: 'Không kiểm tra được chứng thư số của chữ ký này.',
  },
  timestamp: {
    verified: 'Thời điểm ký được xác nhận bởi dấu thời gian của tổ chức cấp dấu thời gian tin cậy.',
    missing:
      'Không có dấu thời gian tin cậy hợp lệ: thời điểm ký chỉ là thời gian do máy người ký ghi.',
  },
  coverage: {
    whole: 'Chữ ký bao trùm toàn bộ tệp.',
    partial:
      'Chữ ký không bao trùm toàn bộ tệp: tệp có phần được thêm vào sau khi ký (xem mục thay đổi).',
  },
  modified: {
    none: 'Không có thay đổi nào sau khi ký.',
    allowed:
      'Có bổ sung sau khi ký nhưng đều được phép: chữ ký khác, dữ liệu xác minh, dấu thời gian.',
    disallowed: 'Tài liệu đã bị thay đổi sau khi ký theo cách chữ ký này không cho phép.',
  },
  identity: {
    label: 'Định danh người ký',
    bound: (kinds: string) => `Chứng thư số ghi định danh của người ký: ${kinds}.`,
    none: 'Chứng thư số không ghi số định danh (CCCD, mã số thuế, e-mail): chỉ có tên.',
    note: 'Hệ thống không biết tệp này được mong đợi do ai ký: hãy đối chiếu tên và số định danh với người bạn chờ ký.',
    kinds: {
      CCCD: 'số CCCD',
      CMND: 'số CMND',
      PID: 'số định danh cá nhân',
      HC: 'số hộ chiếu',
      UID: 'số định danh',
      MST: 'mã số thuế',
      MNS: 'mã đơn vị quan hệ ngân sách',
      BHXH: 'số bảo hiểm xã hội',
      email: 'e-mail',
    } as Record<string, string>,
  },
  changes: 'Thay đổi sau khi ký',
  changeLine: (revision: number, what: string) => `Lần cập nhật ${revision}: ${what}`,
  technical: 'Chi tiết kỹ thuật (tiếng Anh)',
  errors: {
    missing: 'Vui lòng chọn một tệp PDF để kiểm tra.',
    notPdf: 'Tệp đã chọn không phải là tệp PDF. Vui lòng chọn tệp .pdf.',
    unreadable:
      'Không đọc được tệp PDF này: tệp bị hỏng, được mã hóa hoặc có cấu trúc vượt quá giới hạn kiểm tra.',
    tooLarge: (megabytes: number) => `Tệp lớn hơn ${megabytes} MB, vượt quá giới hạn kiểm tra.`,
    malformed: 'Không nhận được tệp. Vui lòng chọn tệp và gửi lại.',
    rateLimited: (seconds: number) =>
      `Bạn đã gửi quá nhiều tệp trong thời gian ngắn. Vui lòng thử lại sau ${seconds} giây.`,
    busy: 'Hệ thống đang bận kiểm tra nhiều tệp. Vui lòng thử lại sau ít phút.',
  },
};
