import { foundation, foundationPostgres } from './001_foundation';
import { directorySearch, directorySearchPostgres } from './002_directory_search';
import { dossiers, dossiersPostgres } from './003_dossiers';
import { taskSearch, taskSearchPostgres } from './004_task_search';
import { webhookOutbox, webhookOutboxPostgres } from './005_webhook_outbox';
import { notifyOutbox, notifyOutboxPostgres } from './006_notify_outbox';
import { taskListIndexes, taskListIndexesPostgres } from './007_task_list_indexes';
import { tenantLogins, tenantLoginsPostgres } from './008_tenant_logins';
import { jobs, jobsPostgres } from './009_jobs';
import { signingKeys, signingKeysPostgres } from './010_signing_keys';
import { trustAnchors, trustAnchorsPostgres } from './011_trust_anchors';
import { signaturePreparations, signaturePreparationsPostgres } from './012_signature_preparations';
import { contracts, contractsPostgres } from './013_contracts';
import {
  preparationValidationMaterial,
  preparationValidationMaterialPostgres,
} from './014_preparation_validation_material';
import { signingSessions, signingSessionsPostgres } from './015_signing_sessions';
import { taskSigningSessions, taskSigningSessionsPostgres } from './016_task_signing_sessions';
import { dossierAuditTrail, dossierAuditTrailPostgres } from './017_dossier_audit_trail';
import {
  contractExistingSignatures,
  contractExistingSignaturesPostgres,
} from './018_contract_existing_signatures';
import { otpLimits, otpLimitsPostgres } from './019_otp_limits';
import {
  shallowSearchTriggers,
  shallowSearchTriggersPostgres,
} from './020_shallow_search_triggers';
import {
  contractArchiveVersions,
  contractArchiveVersionsPostgres,
} from './021_contract_archive_versions';
import { signerIdentity, signerIdentityPostgres } from './022_signer_identity';
import { webSessions, webSessionsPostgres } from './023_web_sessions';
import { dashboardIndexes, dashboardIndexesPostgres } from './024_dashboard_indexes';
import { plainSearch, plainSearchPostgres } from './025_plain_search';
import { waitingTurns, waitingTurnsPostgres } from './026_waiting_turns';
import { waitingTurnKeys, waitingTurnKeysPostgres } from './027_waiting_turn_keys';
import { rateWindows, rateWindowsPostgres } from './028_rate_windows';
import { sharedInstanceState, sharedInstanceStatePostgres } from './029_shared_instance_state';
import { writeNotifications, writeNotificationsPostgres } from './030_write_notifications';
import { scheduledRuns, scheduledRunsPostgres } from './031_scheduled_runs';

export interface Migration {
  version: number;
  name: string;
  /** The SQLite text (pinned by digest in server/test/db/migrations.test.ts). */
  sql: string;
  /**
   * The same step on PostgreSQL; one list of versions for both dialects. After each version both
   * dialects have the same tables, columns (in order), indexes and triggers by name
   * (server/test/db/dialects.test.ts compares them and the triggers' results).
   */
  postgres: string;
}

/** Applied in order at start; a version once shipped is never edited, only followed. */
export const migrations: Migration[] = [
  { version: 1, name: 'foundation', sql: foundation, postgres: foundationPostgres },
  { version: 2, name: 'directory_search', sql: directorySearch, postgres: directorySearchPostgres },
  { version: 3, name: 'dossiers', sql: dossiers, postgres: dossiersPostgres },
  { version: 4, name: 'task_search', sql: taskSearch, postgres: taskSearchPostgres },
  { version: 5, name: 'webhook_outbox', sql: webhookOutbox, postgres: webhookOutboxPostgres },
  { version: 6, name: 'notify_outbox', sql: notifyOutbox, postgres: notifyOutboxPostgres },
  {
    version: 7,
    name: 'task_list_indexes',
    sql: taskListIndexes,
    postgres: taskListIndexesPostgres,
  },
  { version: 8, name: 'tenant_logins', sql: tenantLogins, postgres: tenantLoginsPostgres },
  { version: 9, name: 'jobs', sql: jobs, postgres: jobsPostgres },
  { version: 10, name: 'signing_keys', sql: signingKeys, postgres: signingKeysPostgres },
  { version: 11, name: 'trust_anchors', sql: trustAnchors, postgres: trustAnchorsPostgres },
  {
    version: 12,
    name: 'signature_preparations',
    sql: signaturePreparations,
    postgres: signaturePreparationsPostgres,
  },
  { version: 13, name: 'contracts', sql: contracts, postgres: contractsPostgres },
  {
    version: 14,
    name: 'preparation_validation_material',
    sql: preparationValidationMaterial,
    postgres: preparationValidationMaterialPostgres,
  },
  {
    version: 15,
    name: 'signing_sessions',
    sql: signingSessions,
    postgres: signingSessionsPostgres,
  },
  {
    version: 16,
    name: 'task_signing_sessions',
    sql: taskSigningSessions,
    postgres: taskSigningSessionsPostgres,
  },
  {
    version: 17,
    name: 'dossier_audit_trail',
    sql: dossierAuditTrail,
    postgres: dossierAuditTrailPostgres,
  },
  {
    version: 18,
    name: 'contract_existing_signatures',
    sql: contractExistingSignatures,
    postgres: contractExistingSignaturesPostgres,
  },
  { version: 19, name: 'otp_limits', sql: otpLimits, postgres: otpLimitsPostgres },
  {
    version: 20,
    name: 'shallow_search_triggers',
    sql: shallowSearchTriggers,
    postgres: shallowSearchTriggersPostgres,
  },
  {
    version: 21,
    name: 'contract_archive_versions',
    sql: contractArchiveVersions,
    postgres: contractArchiveVersionsPostgres,
  },
  { version: 22, name: 'signer_identity', sql: signerIdentity, postgres: signerIdentityPostgres },
  { version: 23, name: 'web_sessions', sql: webSessions, postgres: webSessionsPostgres },
  {
    version: 24,
    name: 'dashboard_indexes',
    sql: dashboardIndexes,
    postgres: dashboardIndexesPostgres,
  },
  { version: 25, name: 'plain_search', sql: plainSearch, postgres: plainSearchPostgres },
  { version: 26, name: 'waiting_turns', sql: waitingTurns, postgres: waitingTurnsPostgres },
  {
    version: 27,
    name: 'waiting_turn_keys',
    sql: waitingTurnKeys,
    postgres: waitingTurnKeysPostgres,
  },
  { version: 28, name: 'rate_windows', sql: rateWindows, postgres: rateWindowsPostgres },
  {
    version: 29,
    name: 'shared_instance_state',
    sql: sharedInstanceState,
    postgres: sharedInstanceStatePostgres,
  },
  {
    version: 30,
    name: 'write_notifications',
    sql: writeNotifications,
    postgres: writeNotificationsPostgres,
  },
  { version: 31, name: 'scheduled_runs', sql: scheduledRuns, postgres: scheduledRunsPostgres },
];
