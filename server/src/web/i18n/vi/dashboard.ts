import type { recentContractActions } from '../../../contracts/queries';
import type { HistoryAction } from '../../../db/schema';

/** Texts of the dashboard pages. */
export const dashboard = {
  title: 'Tổng quan',
  intro: 'Những việc đang chờ bạn và những gì đang chờ người khác.',
  nothing: 'Tài khoản của bạn chưa được cấp quyền xem hồ sơ, công việc hay hợp đồng.',
  tasks: {
    title: 'Công việc cần xử lý',
    count: (total: number) => `${total} việc đang chờ`,
    intro: 'Việc có hạn gần nhất ở trên cùng.',
    empty: 'Bạn không có công việc nào đang chờ xử lý.',
    all: 'Xem tất cả công việc',
    columns: { document: 'Hồ sơ', step: 'Bước', deadline: 'Hạn xử lý', action: 'Thao tác' },
    open: 'Xử lý',
    openFor: (title: string) => `Xử lý: ${title}`,
    noDeadline: 'Không có hạn',
    overdue: 'Quá hạn',
    dueSoon: 'Sắp đến hạn',
  },
  dossiers: {
    title: 'Hồ sơ theo trạng thái',
    intro: 'Chọn một trạng thái để xem danh sách hồ sơ.',
    atLeast: (count: number) => `${count}+`,
    all: 'Xem tất cả hồ sơ',
  },
  contracts: {
    title: 'Hợp đồng chờ người khác ký',
    count: (total: number) => `${total} hợp đồng`,
    intro: 'Hợp đồng bạn đã gửi, chưa hoàn tất; hạn ký gần nhất ở trên cùng.',
    empty: 'Không có hợp đồng nào của bạn đang chờ ký.',
    all: 'Xem tất cả hợp đồng',
    progress: (signed: number, total: number) => `${signed}/${total} đã ký`,
    waitingFor: (names: string) => `Đang chờ: ${names}`,
    deadline: 'Hạn ký',
  },
  activity: {
    title: 'Hoạt động gần đây',
    intro: 'Những thao tác gần nhất của bạn.',
    empty: 'Chưa có hoạt động nào.',
    history: {
      NEXT: 'Đã xử lý',
      REJECT: 'Đã từ chối',
      OVERDUE: 'Quá hạn xử lý',
    } satisfies Record<HistoryAction, string>,
    step: (step: string, document: string) => `${step} · ${document}`,
    contract: {
      created: 'Đã tạo hợp đồng',
      sent: 'Đã gửi ký hợp đồng',
      cancelled: 'Đã hủy hợp đồng',
      invitation_resent: 'Đã gửi lại lời mời ký',
    } satisfies Record<(typeof recentContractActions)[number], string>,
  },
};
