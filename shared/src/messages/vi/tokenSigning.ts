/**
 * USB-token signing on the signing page: what the page says while it finds the desktop agent
 * and signs, and what each refusal means for the signer (the agent's error codes, the page's own,
 * and the server's answers to prepare and sign-with-token).
 */
export const tokenSigning = {
  /** What the page says as it goes, and its controls. */
  steps: {
    FRAMED:
      'Không thể ký bằng USB token khi trang ký nằm trong khung của một trang web khác. Hãy mở trang ký trong thẻ mới để tiếp tục.',
    OPEN_NEW_TAB: 'Tiếp tục trong thẻ mới',
    NEW_TAB_OPENED: 'Trang ký đã được mở trong thẻ mới. Hãy hoàn tất việc ký ở đó.',
    SEARCHING: 'Đang tìm ứng dụng ký trên máy tính của bạn…',
    CONNECTING: (origin: string) =>
      `Đang kết nối tới ứng dụng ký. Nếu ứng dụng hỏi, hãy cho phép trang ${origin}.`,
    LISTING: 'Đang đọc chứng thư số trên USB token…',
    CHOOSE_ONE: 'Chứng thư số dùng để ký',
    CHOOSE_MANY: 'Chọn chứng thư số để ký',
    CERTIFICATE_ISSUER: (issuer: string) => `Cấp bởi: ${issuer}`,
    CERTIFICATE_VALIDITY: (from: string, to: string) => `Hiệu lực: từ ${from} đến ${to}`,
    CERTIFICATE_TOKEN: (token: string) => `Trên token: ${token}`,
    SIGN: 'Ký bằng USB token',
    PREPARING: 'Đang chuẩn bị tài liệu để ký…',
    WAITING_FOR_SIGNER: 'Hãy xác nhận và nhập mã PIN trong cửa sổ của ứng dụng ký.',
    SUBMITTING: 'Đang gửi chữ ký tới máy chủ…',
    RETRY: 'Thử lại',
    INSTALL: 'Tải và cài đặt ứng dụng ký',
  },
  /** What the desktop agent refused with (agent/PROTOCOL.md, "Error codes"), for this page. */
  agentRefusals: {
    PIN_INCORRECT: 'Mã PIN không đúng. Hãy ký lại và nhập đúng mã PIN.',
    PIN_LOCKED:
      'Mã PIN của USB token đã bị khóa do nhập sai quá số lần cho phép. Hãy liên hệ nhà cung cấp chứng thư số để mở khóa.',
    PIN_TRIES_LOW:
      'Máy ký tự động đã dừng ký: USB token báo chỉ còn ít lần nhập mã PIN sau một lần nhập sai. Hãy báo người quản trị máy ký kiểm tra mã PIN.',
    NO_TOKEN:
      'Không tìm thấy USB token nào có chứng thư số để ký. Hãy cắm USB token (và cài phần mềm điều khiển của nhà cung cấp), rồi bấm Thử lại.',
    TOKEN_REMOVED: 'USB token đã bị rút ra trong khi ký. Hãy cắm lại token và thử lại.',
    CERTIFICATE_NOT_FOUND:
      'Chứng thư số đã chọn không còn trên các USB token đang cắm. Hãy cắm lại token và thử lại.',
    USER_CANCELLED: 'Bạn đã hủy yêu cầu ký trong ứng dụng ký.',
    ORIGIN_NOT_ALLOWED: (origin: string) =>
      `Ứng dụng ký chưa cho phép trang ${origin} sử dụng. Hãy mở ứng dụng ký, cho phép trang này (trong phần Cài đặt, mục trang web được phép), rồi bấm Thử lại.`,
    UNSUPPORTED_VERSION:
      'Phiên bản ứng dụng ký trên máy này không tương thích với trang ký. Hãy tải và cài đặt phiên bản mới.',
    BAD_REQUEST: 'Ứng dụng ký không hiểu yêu cầu của trang. Hãy tải lại trang và thử lại.',
    TIMESTAMP_FAILED:
      'Ứng dụng ký không lấy được dấu thời gian. Hãy kiểm tra kết nối mạng và thử lại.',
    MECHANISM_UNSUPPORTED: 'USB token không hỗ trợ thuật toán ký cần cho chứng thư số này.',
    TICKET_INVALID:
      'Ứng dụng ký không chấp nhận yêu cầu ký này (đã hết hạn, hoặc máy chủ ký chưa được khai báo trong ứng dụng ký). Hãy ký lại; nếu vẫn lỗi, hãy liên hệ bộ phận hỗ trợ.',
    RATE_LIMITED: 'Trang gửi quá nhiều yêu cầu tới ứng dụng ký. Hãy đợi giây lát rồi thử lại.',
    BUSY: 'Ứng dụng ký đang chờ bạn xác nhận một yêu cầu ký khác. Hãy hoàn tất hoặc hủy yêu cầu đó rồi thử lại.',
    TOKEN_ERROR: 'USB token báo lỗi. Hãy rút ra, cắm lại token và thử lại.',
    INTERNAL: 'Ứng dụng ký gặp lỗi không mong muốn. Hãy thử lại.',
  },
  /** The page's own findings about the agent, and the wrong-PIN answers with the token's flags. */
  pageRefusals: {
    AGENT_NOT_FOUND:
      'Không tìm thấy ứng dụng ký trên máy tính này. Nếu chưa cài, hãy tải và cài đặt ứng dụng ký; mở ứng dụng rồi bấm Thử lại.',
    AGENT_CLOSED:
      'Mất kết nối với ứng dụng ký. Hãy kiểm tra ứng dụng ký vẫn đang chạy rồi thử lại.',
    AGENT_ANSWER_INVALID:
      'Trang không đọc được câu trả lời của ứng dụng ký. Hãy cập nhật ứng dụng ký.',
    PIN_INCORRECT_COUNT_LOW:
      'Mã PIN không đúng. USB token chỉ còn ít lần thử: nhập sai thêm có thể khóa token.',
    PIN_INCORRECT_FINAL_TRY:
      'Mã PIN không đúng. Chỉ còn một lần thử: nhập sai lần nữa USB token sẽ bị khóa.',
  },
  /** The server's answers to prepare and sign-with-token that the signer can act on. */
  serverRefusals: {
    PREPARATION_STALE:
      'Đã quá 5 phút kể từ lúc tài liệu được chuẩn bị. Hãy bấm Ký bằng USB token để chuẩn bị lại và ký.',
    SIGNER_IDENTITY_MISMATCH:
      'Chứng thư số đã chọn không mang tên người ký của hợp đồng này. Hãy chọn chứng thư số của chính bạn.',
    CERTIFICATE_UNTRUSTED:
      'Chứng thư số này không do tổ chức cung cấp dịch vụ chứng thực được tin cậy cấp.',
    CERTIFICATE_EXPIRED: 'Chứng thư số này đã hết hiệu lực.',
    CERTIFICATE_REVOKED: 'Chứng thư số này đã bị thu hồi.',
    DOCUMENT_CHANGED:
      'Hợp đồng vừa có chữ ký khác. Hãy tải lại trang để ký trên phiên bản mới nhất.',
    SIGNING_REFUSED: 'Máy chủ không chấp nhận chữ ký.',
  },
};
