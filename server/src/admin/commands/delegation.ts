import type { Command } from '../command';

/** Delegation of pending tasks between users (filled by the workflow work). */
export const delegationCommands: Command[] = [];
