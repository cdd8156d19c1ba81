import type { dashboard as vi } from '../vi/dashboard';

export const dashboard: typeof vi = {
  title: 'Overview',
  intro: 'What waits for you, and what waits for others.',
  nothing: 'Your account has not been given access to dossiers, tasks or contracts yet.',
  tasks: {
    title: 'Tasks waiting for you',
    count: (total: number) => `${total} waiting`,
    intro: 'The closest deadline first.',
    empty: 'You have no task waiting.',
    all: 'All tasks',
    columns: { document: 'Dossier', step: 'Step', deadline: 'Deadline', action: 'Action' },
    open: 'Open',
    openFor: (title: string) => `Open: ${title}`,
    noDeadline: 'No deadline',
    overdue: 'Overdue',
    dueSoon: 'Due soon',
  },
  dossiers: {
    title: 'Dossiers by status',
    intro: 'Pick a status to see its dossiers.',
    atLeast: (count: number) => `${count}+`,
    all: 'All dossiers',
  },
  contracts: {
    title: 'Contracts waiting for others',
    count: (total: number) => `${total} contracts`,
    intro: 'Contracts you sent that are not completed yet; the closest deadline first.',
    empty: 'None of your contracts is waiting for a signature.',
    all: 'All contracts',
    progress: (signed: number, total: number) => `${signed} of ${total} signed`,
    waitingFor: (names: string) => `Waiting for: ${names}`,
    deadline: 'Deadline',
  },
  activity: {
    title: 'Recent activity',
    intro: 'What you did last.',
    empty: 'Nothing yet.',
    history: {
      NEXT: 'Completed',
      REJECT: 'Rejected',
      OVERDUE: 'Deadline passed',
    },
    step: (step: string, document: string) => `${step} · ${document}`,
    contract: {
      created: 'Created contract',
      sent: 'Sent contract for signing',
      cancelled: 'Cancelled contract',
      invitation_resent: 'Sent an invitation again',
    },
  },
};
