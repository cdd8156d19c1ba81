/**
 * The call site of the embedding parent's message. When the page is framed by a partner, the
 * web app's embed module (server/web/app/app.ts) posts the message to the parent, to its
 * registered origin only; this page tells it what happened by the `esign:signing-event` DOM
 * event on `document`, whose detail is a {@link SigningEvent}, just before the page reloads to
 * show the result.
 */
export interface SigningEvent {
  type: 'task.signed' | 'task.rejected' | 'contract.signed' | 'contract.rejected';
  /** The task's numeric id (a task) or the contract's id. */
  id: string;
  /** The dossier's documentId (a task) or the contract's id. */
  reference: string;
}

export const signingEventName = 'esign:signing-event';

export function announceToEmbedder(event: SigningEvent): void {
  document.dispatchEvent(new CustomEvent<SigningEvent>(signingEventName, { detail: event }));
}
