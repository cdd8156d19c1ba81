/**
 * Messages to the partner's page that frames ours (docs/embedding.md): when a task was signed,
 * approved, rejected or acknowledged, or a contract signed or declined, the page tells its
 * parent, and only a parent whose origin the tenant registered (the server lists them on
 * `<body data-embed-origins>`). Never `*`.
 */

/** The events a page announces, and the message's `type` for each. */
export const taskEvents = ['signed', 'approved', 'rejected', 'acknowledged'] as const;
export type TaskEvent = (typeof taskEvents)[number];
export const contractEvents = ['signed', 'rejected'] as const;
export type ContractEvent = (typeof contractEvents)[number];

/** What the parent page receives (`event.data`); documented for partners, keep it stable. */
export interface EmbedMessage {
  source: 'esign';
  version: 1;
  type: `task.${TaskEvent}` | `contract.${ContractEvent}`;
  /** The task (as in `/tasks?id=`), when the event is about one. */
  taskId?: string;
  /** The dossier's id (as in `/folders?id=`) or the contract's uuid, when the page knows it. */
  dossierId?: string;
  contractId?: string;
  /** When the page saw it, ISO 8601: the partner confirms the state through the API. */
  at: string;
}

/**
 * The origins to post to: the parent's own when the browser tells it (`location.ancestorOrigins`,
 * Chromium and Safari) and it is registered; otherwise each registered origin, of which the
 * browser delivers to the one the parent really has and drops the others.
 */
function parentOrigins(): string[] {
  if (window.parent === window) return [];
  const registered = (document.body.dataset.embedOrigins ?? '').split(' ').filter(Boolean);
  const ancestors = location.ancestorOrigins;
  if (ancestors && ancestors.length > 0) {
    const parent = ancestors[0]!;
    return registered.includes(parent) ? [parent] : [];
  }
  return registered;
}

/** Tells a registered parent page about an event; nothing when the page is not framed. */
export function postEmbedEvent(
  type: EmbedMessage['type'],
  ids: { taskId?: string; dossierId?: string; contractId?: string },
): void {
  const message: EmbedMessage = {
    source: 'esign',
    version: 1,
    type,
    ...(ids.taskId ? { taskId: ids.taskId } : {}),
    ...(ids.dossierId ? { dossierId: ids.dossierId } : {}),
    ...(ids.contractId ? { contractId: ids.contractId } : {}),
    at: new Date().toISOString(),
  };
  for (const origin of parentOrigins()) window.parent.postMessage(message, origin);
}

/**
 * The events the server rendered on the page after an action: an element
 * `data-task-event="approved"` with `data-task-id` and `data-dossier-id`, or
 * `data-contract-event="signed"` with `data-contract-id` (the signing page of a contract).
 */
export function postRenderedEvents(): void {
  for (const element of document.querySelectorAll<HTMLElement>('[data-task-event]')) {
    const event = element.dataset.taskEvent as TaskEvent;
    if (!taskEvents.includes(event)) continue;
    postEmbedEvent(`task.${event}`, {
      taskId: element.dataset.taskId,
      dossierId: element.dataset.dossierId,
      contractId: element.dataset.contractId,
    });
  }
  for (const element of document.querySelectorAll<HTMLElement>('[data-contract-event]')) {
    const event = element.dataset.contractEvent as ContractEvent;
    if (!contractEvents.includes(event)) continue;
    postEmbedEvent(`contract.${event}`, { contractId: element.dataset.contractId });
  }
}
