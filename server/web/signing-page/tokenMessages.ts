/**
 * Every text of USB-token signing on the signing page, Vietnamese and English: what the page
 * says while it finds the desktop agent and signs, and what each refusal means for the signer
 * (the agent's error codes, the page's own, and the server's answers to prepare and
 * sign-with-token). One table, so that the web app's catalogue can take it over whole.
 * `{name}` stands for a value the page fills in.
 */
import type { AgentErrorCode } from '@esign/shared/agentProtocol';

export interface Bilingual {
  vi: string;
  en: string;
}

/** What the page says as it goes, and its controls. */
const steps = {
  FRAMED: {
    vi: 'Không thể ký bằng USB token khi trang ký nằm trong khung của một trang web khác. Hãy mở trang ký trong thẻ mới để tiếp tục.',
    en: "Signing with a USB token does not work inside another website's frame. Open the signing page in a new tab to continue.",
  },
  OPEN_NEW_TAB: { vi: 'Tiếp tục trong thẻ mới', en: 'Continue in a new tab' },
  NEW_TAB_OPENED: {
    vi: 'Trang ký đã được mở trong thẻ mới. Hãy hoàn tất việc ký ở đó.',
    en: 'The signing page is open in a new tab; finish signing there.',
  },
  SEARCHING: {
    vi: 'Đang tìm ứng dụng ký trên máy tính của bạn…',
    en: 'Looking for the signing agent on your computer…',
  },
  CONNECTING: {
    vi: 'Đang kết nối tới ứng dụng ký. Nếu ứng dụng hỏi, hãy cho phép trang {origin}.',
    en: 'Connecting to the signing agent. If it asks, allow {origin}.',
  },
  LISTING: {
    vi: 'Đang đọc chứng thư số trên USB token…',
    en: 'Reading the certificates on your USB token…',
  },
  CHOOSE_ONE: { vi: 'Chứng thư số dùng để ký', en: 'The certificate you will sign with' },
  CHOOSE_MANY: { vi: 'Chọn chứng thư số để ký', en: 'Choose the certificate to sign with' },
  CERTIFICATE_ISSUER: { vi: 'Cấp bởi: {issuer}', en: 'Issued by: {issuer}' },
  CERTIFICATE_VALIDITY: {
    vi: 'Hiệu lực: từ {from} đến {to}',
    en: 'Valid: from {from} to {to}',
  },
  CERTIFICATE_TOKEN: { vi: 'Trên token: {token}', en: 'On token: {token}' },
  SIGN: { vi: 'Ký bằng USB token', en: 'Sign with the USB token' },
  PREPARING: {
    vi: 'Đang chuẩn bị tài liệu để ký…',
    en: 'Preparing the document for signing…',
  },
  WAITING_FOR_SIGNER: {
    vi: 'Hãy xác nhận và nhập mã PIN trong cửa sổ của ứng dụng ký.',
    en: "Confirm and enter your PIN in the signing agent's window.",
  },
  SUBMITTING: { vi: 'Đang gửi chữ ký tới máy chủ…', en: 'Sending the signature…' },
  RETRY: { vi: 'Thử lại', en: 'Try again' },
  INSTALL: {
    vi: 'Tải và cài đặt ứng dụng ký',
    en: 'Download and install the signing agent',
  },
} satisfies Record<string, Bilingual>;

/** What the desktop agent refused with (agent/PROTOCOL.md, "Error codes"), for this page. */
const agentRefusals: Record<AgentErrorCode, Bilingual> = {
  PIN_INCORRECT: {
    vi: 'Mã PIN không đúng. Hãy ký lại và nhập đúng mã PIN.',
    en: 'The PIN is incorrect. Sign again and enter the right PIN.',
  },
  PIN_LOCKED: {
    vi: 'Mã PIN của USB token đã bị khóa do nhập sai quá số lần cho phép. Hãy liên hệ nhà cung cấp chứng thư số để mở khóa.',
    en: "The token's PIN is locked after too many wrong tries. Contact your certificate provider to unlock it.",
  },
  NO_TOKEN: {
    vi: 'Không tìm thấy USB token nào có chứng thư số để ký. Hãy cắm USB token (và cài phần mềm điều khiển của nhà cung cấp), rồi bấm Thử lại.',
    en: "No USB token with a signing certificate was found. Plug in your token (and install its provider's driver), then press Try again.",
  },
  TOKEN_REMOVED: {
    vi: 'USB token đã bị rút ra trong khi ký. Hãy cắm lại token và thử lại.',
    en: 'The token was removed while signing. Plug it in again and retry.',
  },
  CERTIFICATE_NOT_FOUND: {
    vi: 'Chứng thư số đã chọn không còn trên các USB token đang cắm. Hãy cắm lại token và thử lại.',
    en: 'The chosen certificate is no longer on a token plugged in. Plug the token in again and retry.',
  },
  USER_CANCELLED: {
    vi: 'Bạn đã hủy yêu cầu ký trong ứng dụng ký.',
    en: 'You cancelled the signing request in the signing agent.',
  },
  ORIGIN_NOT_ALLOWED: {
    vi: 'Ứng dụng ký chưa cho phép trang {origin} sử dụng. Hãy mở ứng dụng ký, cho phép trang này (trong phần Cài đặt, mục trang web được phép), rồi bấm Thử lại.',
    en: 'The signing agent does not allow {origin}. Open the agent, allow this website (Settings, allowed websites), then press Try again.',
  },
  UNSUPPORTED_VERSION: {
    vi: 'Phiên bản ứng dụng ký trên máy này không tương thích với trang ký. Hãy tải và cài đặt phiên bản mới.',
    en: 'The signing agent on this computer does not match this page. Download and install the new version.',
  },
  BAD_REQUEST: {
    vi: 'Ứng dụng ký không hiểu yêu cầu của trang. Hãy tải lại trang và thử lại.',
    en: "The signing agent did not understand the page's request. Reload the page and retry.",
  },
  TIMESTAMP_FAILED: {
    vi: 'Ứng dụng ký không lấy được dấu thời gian. Hãy kiểm tra kết nối mạng và thử lại.',
    en: 'The signing agent could not get a timestamp. Check your network and retry.',
  },
  MECHANISM_UNSUPPORTED: {
    vi: 'USB token không hỗ trợ thuật toán ký cần cho chứng thư số này.',
    en: 'The token does not support the signature algorithm this certificate needs.',
  },
  TICKET_INVALID: {
    vi: 'Ứng dụng ký không chấp nhận yêu cầu ký này (đã hết hạn, hoặc máy chủ ký chưa được khai báo trong ứng dụng ký). Hãy ký lại; nếu vẫn lỗi, hãy liên hệ bộ phận hỗ trợ.',
    en: 'The signing agent refused this signing request (expired, or this signing service is not set up in the agent). Sign again; if it persists, contact support.',
  },
  RATE_LIMITED: {
    vi: 'Trang gửi quá nhiều yêu cầu tới ứng dụng ký. Hãy đợi giây lát rồi thử lại.',
    en: 'Too many requests to the signing agent. Wait a moment and retry.',
  },
  BUSY: {
    vi: 'Ứng dụng ký đang chờ bạn xác nhận một yêu cầu ký khác. Hãy hoàn tất hoặc hủy yêu cầu đó rồi thử lại.',
    en: 'The signing agent is waiting for you on another signing request. Finish or cancel it, then retry.',
  },
  TOKEN_ERROR: {
    vi: 'USB token báo lỗi. Hãy rút ra, cắm lại token và thử lại.',
    en: 'The token reported an error. Unplug it, plug it in again and retry.',
  },
  INTERNAL: {
    vi: 'Ứng dụng ký gặp lỗi không mong muốn. Hãy thử lại.',
    en: 'The signing agent ran into an unexpected error. Please retry.',
  },
};

/** The page's own findings about the agent, and the wrong-PIN answers with the token's flags. */
const pageRefusals = {
  AGENT_NOT_FOUND: {
    vi: 'Không tìm thấy ứng dụng ký trên máy tính này. Nếu chưa cài, hãy tải và cài đặt ứng dụng ký; mở ứng dụng rồi bấm Thử lại.',
    en: 'The signing agent is not running on this computer. If it is not installed, download and install it; start it, then press Try again.',
  },
  AGENT_CLOSED: {
    vi: 'Mất kết nối với ứng dụng ký. Hãy kiểm tra ứng dụng ký vẫn đang chạy rồi thử lại.',
    en: 'The connection to the signing agent was lost. Check that it is still running, then retry.',
  },
  AGENT_ANSWER_INVALID: {
    vi: 'Trang không đọc được câu trả lời của ứng dụng ký. Hãy cập nhật ứng dụng ký.',
    en: "This page cannot read the signing agent's answer. Please update the agent.",
  },
  PIN_INCORRECT_COUNT_LOW: {
    vi: 'Mã PIN không đúng. USB token chỉ còn ít lần thử: nhập sai thêm có thể khóa token.',
    en: 'The PIN is incorrect. Few tries are left: more wrong PINs may lock the token.',
  },
  PIN_INCORRECT_FINAL_TRY: {
    vi: 'Mã PIN không đúng. Chỉ còn một lần thử: nhập sai lần nữa USB token sẽ bị khóa.',
    en: 'The PIN is incorrect. One try is left: one more wrong PIN locks the token.',
  },
} satisfies Record<string, Bilingual>;

/** The server's answers to prepare and sign-with-token that the signer can act on. */
const serverRefusals = {
  PREPARATION_STALE: {
    vi: 'Đã quá 5 phút kể từ lúc tài liệu được chuẩn bị. Hãy bấm Ký bằng USB token để chuẩn bị lại và ký.',
    en: 'More than 5 minutes passed since the document was prepared. Press Sign with the USB token to prepare it again and sign.',
  },
  SIGNER_IDENTITY_MISMATCH: {
    vi: 'Chứng thư số đã chọn không mang tên người ký của hợp đồng này. Hãy chọn chứng thư số của chính bạn.',
    en: "The chosen certificate names someone other than this contract's signer. Choose your own certificate.",
  },
  CERTIFICATE_UNTRUSTED: {
    vi: 'Chứng thư số này không do tổ chức cung cấp dịch vụ chứng thực được tin cậy cấp.',
    en: 'This certificate was not issued by a trusted certification authority.',
  },
  CERTIFICATE_EXPIRED: {
    vi: 'Chứng thư số này đã hết hiệu lực.',
    en: 'This certificate has expired.',
  },
  CERTIFICATE_REVOKED: {
    vi: 'Chứng thư số này đã bị thu hồi.',
    en: 'This certificate has been revoked.',
  },
  DOCUMENT_CHANGED: {
    vi: 'Hợp đồng vừa có chữ ký khác. Hãy tải lại trang để ký trên phiên bản mới nhất.',
    en: 'Someone else has just signed. Reload the page to sign the newest version.',
  },
  SIGNING_REFUSED: {
    vi: 'Máy chủ không chấp nhận chữ ký.',
    en: 'The service did not accept the signature.',
  },
} satisfies Record<string, Bilingual>;

export const tokenMessages = {
  ...steps,
  ...agentRefusals,
  ...pageRefusals,
  ...serverRefusals,
};

export type TokenMessageKey = keyof typeof tokenMessages;

/** Whether a code from outside (an agent or the server) has a text here. */
export function hasTokenMessage(code: string): code is TokenMessageKey {
  return Object.hasOwn(tokenMessages, code);
}

/** The agent's codes this page knows; an unknown one is treated as INTERNAL (PROTOCOL.md). */
export function isAgentErrorCode(code: string): code is AgentErrorCode {
  return Object.hasOwn(agentRefusals, code);
}

/** The text of `key` in both languages, `{name}` replaced by `values.name`. */
export function tokenMessage(key: TokenMessageKey, values: Record<string, string> = {}): Bilingual {
  const fill = (text: string) =>
    text.replace(/\{(\w+)\}/g, (whole, name: string) => values[name] ?? whole);
  const { vi, en } = tokenMessages[key];
  return { vi: fill(vi), en: fill(en) };
}
