import { foundation } from './001_foundation';
import { directorySearch } from './002_directory_search';
import { dossiers } from './003_dossiers';
import { taskSearch } from './004_task_search';
import { webhookOutbox } from './005_webhook_outbox';
import { notifyOutbox } from './006_notify_outbox';
import { taskListIndexes } from './007_task_list_indexes';
import { tenantLogins } from './008_tenant_logins';
import { jobs } from './009_jobs';
import { signingKeys } from './010_signing_keys';
import { trustAnchors } from './011_trust_anchors';
import { signaturePreparations } from './012_signature_preparations';
import { contracts } from './013_contracts';
import { preparationValidationMaterial } from './014_preparation_validation_material';
import { signingSessions } from './015_signing_sessions';
import { taskSigningSessions } from './016_task_signing_sessions';
import { dossierAuditTrail } from './017_dossier_audit_trail';
import { contractExistingSignatures } from './018_contract_existing_signatures';
import { otpLimits } from './019_otp_limits';
import { shallowSearchTriggers } from './020_shallow_search_triggers';
import { contractArchiveVersions } from './021_contract_archive_versions';
import { signerIdentity } from './022_signer_identity';
import { webSessions } from './023_web_sessions';
import { dashboardIndexes } from './024_dashboard_indexes';
import { plainSearch } from './025_plain_search';
import { waitingTurns } from './026_waiting_turns';
import { waitingTurnKeys } from './027_waiting_turn_keys';
import { rateWindows, rateWindowsPostgres } from './028_rate_windows';

export interface Migration {
  version: number;
  name: string;
  /** The SQLite text (pinned by digest in server/test/db/migrations.test.ts). */
  sql: string;
  /** The same step on PostgreSQL; one list of versions for both dialects. */
  postgres?: string;
}

/** Applied in order at start; a version once shipped is never edited, only followed. */
export const migrations: Migration[] = [
  { version: 1, name: 'foundation', sql: foundation },
  { version: 2, name: 'directory_search', sql: directorySearch },
  { version: 3, name: 'dossiers', sql: dossiers },
  { version: 4, name: 'task_search', sql: taskSearch },
  { version: 5, name: 'webhook_outbox', sql: webhookOutbox },
  { version: 6, name: 'notify_outbox', sql: notifyOutbox },
  { version: 7, name: 'task_list_indexes', sql: taskListIndexes },
  { version: 8, name: 'tenant_logins', sql: tenantLogins },
  { version: 9, name: 'jobs', sql: jobs },
  { version: 10, name: 'signing_keys', sql: signingKeys },
  { version: 11, name: 'trust_anchors', sql: trustAnchors },
  { version: 12, name: 'signature_preparations', sql: signaturePreparations },
  { version: 13, name: 'contracts', sql: contracts },
  { version: 14, name: 'preparation_validation_material', sql: preparationValidationMaterial },
  { version: 15, name: 'signing_sessions', sql: signingSessions },
  { version: 16, name: 'task_signing_sessions', sql: taskSigningSessions },
  { version: 17, name: 'dossier_audit_trail', sql: dossierAuditTrail },
  { version: 18, name: 'contract_existing_signatures', sql: contractExistingSignatures },
  { version: 19, name: 'otp_limits', sql: otpLimits },
  { version: 20, name: 'shallow_search_triggers', sql: shallowSearchTriggers },
  { version: 21, name: 'contract_archive_versions', sql: contractArchiveVersions },
  { version: 22, name: 'signer_identity', sql: signerIdentity },
  { version: 23, name: 'web_sessions', sql: webSessions },
  { version: 24, name: 'dashboard_indexes', sql: dashboardIndexes },
  { version: 25, name: 'plain_search', sql: plainSearch },
  { version: 26, name: 'waiting_turns', sql: waitingTurns },
  { version: 27, name: 'waiting_turn_keys', sql: waitingTurnKeys },
  { version: 28, name: 'rate_windows', sql: rateWindows, postgres: rateWindowsPostgres },
];
