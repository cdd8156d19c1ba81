import type { Language } from './api';

const strings = {
  'tray.tooltip': { vi: 'ESign Agent: công cụ ký số', en: 'ESign Agent: signing agent' },
  'tray.settings': { vi: 'Cài đặt…', en: 'Settings…' },
  'tray.startAtLogin': { vi: 'Khởi động cùng máy tính', en: 'Start at login' },
  'tray.language': { vi: 'Ngôn ngữ', en: 'Language' },
  'tray.quit': { vi: 'Thoát', en: 'Quit' },
  'approve.title': {
    vi: 'Cho phép trang web dùng công cụ ký số?',
    en: 'Allow this website to use the signing agent?',
  },
  'approve.explain': {
    vi: 'Trang web này muốn xem danh sách chứng thư số và gửi yêu cầu ký. Mỗi lần ký bạn vẫn phải xác nhận và nhập mã PIN.',
    en: 'This website wants to list your certificates and send signing requests. You will still confirm and type your PIN for every signature.',
  },
  'approve.allow': { vi: 'Cho phép', en: 'Allow' },
  'approve.deny': { vi: 'Từ chối', en: 'Deny' },
  'consent.title': { vi: 'Xác nhận ký tài liệu', en: 'Confirm the signature' },
  'consent.origin': { vi: 'Trang web', en: 'Website' },
  'consent.service': { vi: 'Dịch vụ', en: 'Service' },
  'consent.document': { vi: 'Tài liệu', en: 'Document' },
  'consent.hash': { vi: 'Mã băm SHA-256', en: 'SHA-256 hash' },
  'consent.certificate': { vi: 'Chứng thư số', en: 'Certificate' },
  'consent.issuer': { vi: 'Nhà cung cấp', en: 'Issuer' },
  'consent.validUntil': { vi: 'Hiệu lực đến', en: 'Valid until' },
  'consent.token': { vi: 'Thiết bị', en: 'Token' },
  'consent.sign': { vi: 'Ký', en: 'Sign' },
  'consent.cancel': { vi: 'Hủy', en: 'Cancel' },
  'pin.title': { vi: 'Nhập mã PIN của thiết bị ký số', en: 'Type the PIN of your token' },
  'pin.label': { vi: 'Mã PIN', en: 'PIN' },
  'pin.countLow': {
    vi: 'Cảnh báo: bạn đã nhập sai mã PIN, còn ít lần thử.',
    en: 'Warning: a wrong PIN was typed; few tries are left.',
  },
  'pin.finalTry': {
    vi: 'Lần thử cuối: nếu sai, thiết bị sẽ bị khóa.',
    en: 'Last try: a wrong PIN now locks the token.',
  },
  'pin.ok': { vi: 'Đồng ý', en: 'OK' },
  'pin.cancel': { vi: 'Hủy', en: 'Cancel' },
  'settings.title': { vi: 'Cài đặt ESign Agent', en: 'ESign Agent settings' },
  'settings.general': { vi: 'Chung', en: 'General' },
  'settings.language': { vi: 'Ngôn ngữ', en: 'Language' },
  'settings.startAtLogin': { vi: 'Khởi động cùng máy tính', en: 'Start at login' },
  'settings.tsa': { vi: 'Máy chủ cấp dấu thời gian (TSA)', en: 'Timestamp authority (TSA)' },
  'settings.save': { vi: 'Lưu', en: 'Save' },
  'settings.modules': { vi: 'Phần mềm điều khiển token (PKCS#11)', en: 'Token drivers (PKCS#11)' },
  'settings.module': { vi: 'Tên', en: 'Name' },
  'settings.path': { vi: 'Đường dẫn', en: 'Path' },
  'settings.enabled': { vi: 'Bật', en: 'On' },
  'settings.state': { vi: 'Trạng thái', en: 'State' },
  'settings.test': { vi: 'Kiểm tra', en: 'Test this module' },
  'settings.addModule': { vi: 'Thêm', en: 'Add' },
  'settings.origins': { vi: 'Trang web được phép', en: 'Approved websites' },
  'settings.noOrigins': { vi: 'Chưa có trang web nào.', en: 'No website yet.' },
  'settings.revoke': { vi: 'Thu hồi', en: 'Revoke' },
  'state.loaded': { vi: 'Đã nạp', en: 'Loaded' },
  'state.absent': { vi: 'Chưa cài đặt', en: 'Not installed' },
  'state.failed': { vi: 'Lỗi khi nạp', en: 'Failed to load' },
  'state.disabled': { vi: 'Đã tắt', en: 'Disabled' },
  'test.tokens': { vi: 'Token đang cắm', en: 'Tokens plugged in' },
  'test.noToken': { vi: 'không có token nào', en: 'no token' },
} as const satisfies Record<string, Record<Language, string>>;

export type MessageKey = keyof typeof strings;

/** The text of `key` in `language`. */
export function t(language: Language, key: MessageKey): string {
  return strings[key][language];
}
