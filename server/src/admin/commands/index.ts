import type { Command } from '../command';
import { apikeyCommands } from './apikey';
import { auditCommands } from './audit';
import { backupCommands } from './backup';
import { contractCommands } from './contract';
import { dbCommands } from './db';
import { delegationCommands } from './delegation';
import { domainCommands } from './domain';
import { notifyCommands } from './notify';
import { orgCommands } from './org';
import { processCommands } from './process';
import { roleCommands } from './role';
import { signingKeyCommands } from './signingKeys';
import { storageCommands } from './storage';
import { templateCommands } from './template';
import { tenantCommands } from './tenant';
import { trustCommands } from './trust';
import { userCommands } from './user';
import { webhookCommands } from './webhook';

/** Every command, by `group action`. */
export const commands = new Map<string, Command>(
  [
    ...tenantCommands,
    ...orgCommands,
    ...roleCommands,
    ...userCommands,
    ...apikeyCommands,
    ...processCommands,
    ...templateCommands,
    ...delegationCommands,
    ...webhookCommands,
    ...domainCommands,
    ...notifyCommands,
    ...trustCommands,
    ...signingKeyCommands,
    ...contractCommands,
    ...auditCommands,
    ...storageCommands,
    ...backupCommands,
    ...dbCommands,
  ].map((command) => [command.name, command]),
);
