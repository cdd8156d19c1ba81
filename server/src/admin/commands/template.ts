import type { Command } from '../command';

/** Templates for `source: template` files (filled by the dossier-workflow work). */
export const templateCommands: Command[] = [];
