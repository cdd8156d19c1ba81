import type { Command } from '../command';

/** Outgoing mail and SMS: the operator's view of the notification outbox. */
export const notifyCommands: Command[] = [];
