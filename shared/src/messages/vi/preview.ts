/**
 * Texts of the PDF preview (server/web/app/preview.ts, which bundles this file): the toolbar and
 * what it says while loading or when the file cannot be shown.
 */
export const preview = {
  toolbar: 'Công cụ xem tài liệu',
  region: (title: string) => `Xem trước tài liệu: ${title}`,
  previous: 'Trang trước',
  next: 'Trang sau',
  page: 'Trang',
  of: (pages: number) => `/ ${pages}`,
  zoomOut: 'Thu nhỏ',
  zoomIn: 'Phóng to',
  fitWidth: 'Vừa chiều rộng',
  zoom: (percent: number) => `${percent}%`,
  loading: 'Đang tải tài liệu…',
  failed: 'Không thể hiển thị tài liệu tại đây. Bạn vẫn có thể tải tệp về để xem.',
  pageImage: (page: number, pages: number, title: string) =>
    `Trang ${page} trên ${pages} của tài liệu ${title}`,
};
