import {
  appendOnlyTriggers,
  appendOnlyTriggersPostgres,
  auditChainColumns,
  postgresOf,
} from './sqlParts';

/** `dossiers.audit_head` and the events table (the same on both dialects but for types). */
const headAndEvents = `ALTER TABLE dossiers ADD COLUMN audit_head TEXT NOT NULL
  DEFAULT '0000000000000000000000000000000000000000000000000000000000000000';

CREATE TABLE dossier_audit_events (
  id INTEGER PRIMARY KEY,
  dossier_id INTEGER NOT NULL REFERENCES dossiers(id),
  seq INTEGER NOT NULL CHECK (seq > 0),
  action TEXT NOT NULL,
  at TEXT NOT NULL,
  actor_kind TEXT NOT NULL CHECK (actor_kind IN ('user', 'system')),
  actor_user_id INTEGER REFERENCES users(id),
${auditChainColumns}
  UNIQUE (dossier_id, seq)
);`;

/**
 * The audit trail of dossiers: the same append-only, hash-chained events as contracts
 * (server/src/audit), in a table of their own beside `contract_audit_events`.
 *
 * - A second table rather than one keyed by subject kind: the contract rows stay exactly where
 *   and as they are (their hashes cover `contractId`, nothing is rewritten), and each table keeps a
 *   real foreign key to its subject.
 * - No `actor_signer_id`: a dossier's signers are accounts, named by `actor_user_id`.
 * - `dossiers.audit_head` repeats the newest hash, as `contracts.audit_head` does; existing
 *   dossiers have no event yet, so their head is the genesis hash.
 */
export const dossierAuditTrail = `
${headAndEvents}
${appendOnlyTriggers('dossier_audit_events', 'dossier audit events')}
`;

/** The same on PostgreSQL; the append-only function is migration 013's. */
export const dossierAuditTrailPostgres = `
${postgresOf(headAndEvents)}
${appendOnlyTriggersPostgres('dossier_audit_events', 'dossier audit events')}
`;
