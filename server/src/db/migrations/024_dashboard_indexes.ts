import { postgresOf } from './sqlParts';

/**
 * The web application's dashboard reads, each bounded and each from an index of its own:
 *
 * - `dossiers_tenant_status`: how many dossiers of each state the viewer may see. A count walks
 *   one state's range of the tenant (at most a capped number of matches); the organization and
 *   the creator, which decide most of the scope, are read from the index, not the table.
 * - `contracts_creator_signing`: the viewer's contracts waiting for others, closest deadline
 *   first; only contracts being signed are in it, so it stays small.
 * - `contract_audit_events_actor`: the viewer's own recent acts on contracts (created, sent,
 *   cancelled, invitation sent again), newest first, without walking the views and downloads
 *   the same person records far more often.
 */
export const dashboardIndexes = `
CREATE INDEX dossiers_tenant_status ON dossiers(tenant_id, status, organization_id, created_by_user_id);
CREATE INDEX contracts_creator_signing ON contracts(created_by_user_id, expired_at) WHERE status = 'signing';
CREATE INDEX contract_audit_events_actor ON contract_audit_events(actor_user_id, at)
  WHERE action IN ('created', 'sent', 'cancelled', 'invitation_resent');
`;

/** PostgreSQL reads the same text (no type or dialect-specific syntax in it). */
export const dashboardIndexesPostgres = postgresOf(dashboardIndexes);
