import { appendAuditEvent } from '../audit/chain';
import { dossierTrail, systemActor } from '../audit/subject';
import type { Db } from '../db/database';
import type { DossierStatus } from '../db/schema';
import { DomainError } from '../errors/domainError';
import type { ArchivedVersion } from './archive';
import { dossierCompleted, dossierRejected, type EventDeps } from './events';
import { dossierProgress, updateDossier } from './queries/dossiers';

/** How a dossier's lifecycle ends: every signer signed, someone rejected, or a deadline passed. */
export type DossierOutcome = Extract<DossierStatus, 'COMPLETED' | 'REJECTED' | 'EXPIRED'>;

export const endedStatuses: readonly DossierStatus[] = ['COMPLETED', 'REJECTED', 'EXPIRED'];
/** States in which the workflow runs and its tasks can be acted on. */
export const runningStatuses: readonly DossierStatus[] = ['PENDING_SIGN', 'IN_PROGRESS'];

const endColumn = {
  COMPLETED: 'completed_at',
  REJECTED: 'rejected_at',
  EXPIRED: 'expired_at',
} as const;

/**
 * Ends a running dossier inside the caller's transaction: status and its time column
 * (completed_at, rejected_at or expired_at = `at`).
 *
 * This is the one place where the end of a dossier is written, so its events are emitted here in
 * the same transaction (workflow/events.ts): `document.completed` and
 * `notification.process_finished` for COMPLETED, `document.rejected` and
 * `notification.task_rejected` for REJECTED (the REJECTED turn, written before, holds the reason
 * and who rejected), nothing for EXPIRED (the spec: an expired dossier produces no webhook).
 *
 * COMPLETED requires signedCount to equal requiredCount, as the spec defines it; anything else
 * is a bug of the engine and aborts the transaction. `archived` names the archive versions the
 * completing action recorded just before (workflow/archive.ts) in the `completed` audit event.
 */
export async function dossierEnded(
  trx: Db,
  deps: EventDeps,
  dossierId: number,
  outcome: DossierOutcome,
  at: string,
  archived: ArchivedVersion[] = [],
): Promise<void> {
  const dossier = await dossierProgress(trx, dossierId);
  if (!runningStatuses.includes(dossier.status)) {
    throw new DomainError(
      'DOSSIER_ENDED',
      `The dossier is ${dossier.status}; its lifecycle has ended`,
    );
  }
  if (outcome === 'COMPLETED' && dossier.signed_count !== dossier.required_count) {
    throw new Error(
      `dossier ${dossierId} cannot complete: signedCount ${dossier.signed_count} of requiredCount ${dossier.required_count}`,
    );
  }
  await updateDossier(trx, dossierId, {
    status: outcome,
    [endColumn[outcome]]: at,
    updated_at: deps.clock.now().toISOString(),
  });
  // The rejecting turn records its own event, naming who rejected and why.
  if (outcome !== 'REJECTED') {
    await appendAuditEvent(trx, deps.clock, dossierTrail(dossierId), {
      action: outcome === 'COMPLETED' ? 'completed' : 'expired',
      actor: systemActor,
      details: {
        signedCount: dossier.signed_count,
        requiredCount: dossier.required_count,
        ...(archived.length > 0 ? { archived } : {}),
      },
    });
  }
  if (outcome === 'COMPLETED') await dossierCompleted(trx, deps, dossierId);
  if (outcome === 'REJECTED') await dossierRejected(trx, deps, dossierId);
}
