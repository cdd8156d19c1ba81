import type { UserRow } from '../auth/queries';
import type { AppDeps } from '../context';
import type { Db } from '../db/database';
import type { StepKind } from '../db/schema';
import { presignFileUrl } from '../files/presign';
import { dossierFiles } from '../files/queries';
import { queueNotification } from '../notify';
import { tenantCodeOf } from '../tenancy/queries';
import { enqueueEvent } from '../webhooks/events';
import {
  type DossierEventFacts,
  documentCompletedData,
  documentRejectedData,
  type NotificationEvent,
  type NotificationFacts,
  type NotificationRecipient,
  notificationData,
  type WebhookSignerFacts,
} from '../webhooks/payloads';
import { type DossierRow, dossierById, dossierMetadataOf, lastActorName } from './queries/dossiers';
import { unlockedRoleHolders, usersByIds } from './queries/people';
import { taskExpireAt } from './queries/tasks';
import { dossierOfTurn, turnsWithSteps } from './queries/turns';
import { actorSnapshot, type TurnRow } from './taskContext';

/**
 * The events of a dossier's life, one function per moment. Each runs INSIDE the workflow's
 * transaction (no I/O): it reads what the moment needs through `trx`, builds the spec's `data`
 * (webhooks/payloads) and writes the outbox rows, so the events exist if and only if the state
 * change commits.
 *
 * - `turnActivated`: a turn became ACTIVE (the first turn of a step that opened, or the next turn
 *   of a step) → `notification.task_assigned_external` (guest and phone_guest steps) or
 *   `notification.task_assigned_internal` (internal and role steps; a role turn nobody has taken
 *   goes to every holder of the role).
 * - `dossierCompleted`: the dossier became COMPLETED → `document.completed` and
 *   `notification.process_finished` (to the creator and everyone who acted).
 * - `dossierRejected`: the dossier became REJECTED → `document.rejected` and
 *   `notification.task_rejected` (to the creator and everyone who acted, except who rejected).
 * - An EXPIRED dossier emits nothing (spec: "an expired dossier produces no webhook").
 *
 * Every `notification.*` event follows one recipe (docs/notifications.md): the webhook event is
 * enqueued for the subscriptions that opted in, then `queueNotification` queues the e-mails the
 * service sends itself — internal recipients always, external ones only when no subscription
 * took the event (its receiver sends them).
 */

/** What emitting needs: the outbox rows (db, clock), presigned URLs (config, secrets), e-mails. */
export type EventDeps = Pick<AppDeps, 'db' | 'clock' | 'config' | 'secrets'>;

const outsideKinds: ReadonlySet<StepKind> = new Set(['guest', 'phone_guest']);

interface StepFacts {
  kind: StepKind;
  stepCode: string;
  stepName: string;
  position: number;
}

type DossierTurn = TurnRow & { step: StepFacts };

/** A dossier with what every moment reads: its turns in order, the people they name. */
interface DossierContext {
  dossier: DossierRow;
  tenantCode: string;
  metadata: Record<string, unknown>;
  turns: DossierTurn[];
  /** Positions of the steps that have turns, in order: `step.order` is an index in it, from 1. */
  stepPositions: number[];
  users: Map<number, UserRow>;
}

async function loadDossier(trx: Db, dossierId: number): Promise<DossierContext> {
  const dossier = await dossierById(trx, dossierId);
  const tenant = await tenantCodeOf(trx, dossier.tenant_id);
  const rows = await turnsWithSteps(trx, dossierId);
  const turns = rows.map(({ kind, step_code, step_name, position, ...turn }) => ({
    ...turn,
    step: { kind, stepCode: step_code, stepName: step_name, position },
  }));
  const userIds = new Set<number>();
  for (const turn of turns) {
    if (turn.assignee_user_id !== null) userIds.add(turn.assignee_user_id);
    if (turn.acted_by_user_id !== null) userIds.add(turn.acted_by_user_id);
  }
  if (dossier.created_by_user_id !== null) userIds.add(dossier.created_by_user_id);
  const users = userIds.size === 0 ? [] : await usersByIds(trx, [...userIds]);
  return {
    dossier,
    tenantCode: tenant.code,
    metadata: dossierMetadataOf(dossier),
    turns,
    stepPositions: [...new Set(turns.map((turn) => turn.step_position))],
    users: new Map(users.map((user) => [user.id, user])),
  };
}

// ---------------------------------------------------------------------------------------------
// document.completed / document.rejected

/** The spec's signer status: SIGNED, REJECTED, or PENDING for a turn that never acted. */
function signerStatus(turn: TurnRow): WebhookSignerFacts['status'] {
  return turn.status === 'SIGNED' || turn.status === 'REJECTED' ? turn.status : 'PENDING';
}

/** The facts `document.*` share: files presigned now, every turn (the builder keeps outside ones). */
async function dossierEventFacts(
  trx: Db,
  deps: EventDeps,
  context: DossierContext,
): Promise<DossierEventFacts> {
  const { dossier } = context;
  const files = await dossierFiles(trx, dossier.id);
  return {
    documentId: dossier.document_id,
    documentUuid: dossier.uuid,
    documentTitle: dossier.title,
    transactionId: dossier.transaction_id,
    signedCount: dossier.signed_count,
    metadata: context.metadata,
    tenantCode: context.tenantCode,
    files: files.map((file) => {
      const url = presignFileUrl(deps, file.uuid);
      return {
        fileUuid: file.uuid,
        kind: file.kind,
        name: file.title,
        mimeType: file.mimeType,
        sizeBytes: file.size,
        ecmClassCode: file.ecmClassCode,
        url,
        expiresAt: presignedExpiry(url),
        // Version 1 is the file as sent; a signature adds a version.
        signed: file.version > 1,
      };
    }),
    signers: context.turns.map((turn) => ({
      stepKind: turn.step.kind,
      stepName: turn.step.stepName,
      stepCode: turn.step.stepCode,
      email: turn.signer_email,
      phone: turn.signer_phone,
      identityNumber: turn.signer_identity_number,
      taxCode: turn.signer_tax_code,
      status: signerStatus(turn),
      signedAt: turn.acted_at,
    })),
  };
}

/** `expiresAt` of a presigned URL: its `expires` parameter (unix seconds), so both always agree. */
function presignedExpiry(url: string): string {
  const expires = Number(new URL(url).searchParams.get('expires'));
  return new Date(expires * 1000).toISOString();
}

function displayName(user: UserRow): string {
  return user.name ?? user.username;
}

// ---------------------------------------------------------------------------------------------
// notification.* recipients

/**
 * The recipient a user is for an event. Outside signers (external accounts) are described as
 * submitted on their turn when they are its assignee (an account keeps its first profile), with
 * `credentials` {userName, password: null}: the account exists and has no password yet. A
 * signer of a phone_guest step was invited by phone: `email` null.
 */
function recipientOf(user: UserRow, turn: DossierTurn | null): NotificationRecipient {
  if (user.type !== 'external') {
    return {
      type: 'internal',
      name: displayName(user),
      email: user.email,
      phone: user.phone,
      credentials: null,
    };
  }
  const own = turn !== null && turn.assignee_user_id === user.id ? turn : null;
  const byPhone = own?.step.kind === 'phone_guest';
  return {
    type: 'external',
    name: own?.signer_full_name ?? user.name ?? user.username,
    email: byPhone ? null : (own?.signer_email ?? user.email),
    phone: own?.signer_phone ?? user.phone,
    credentials: { userName: user.username, password: null },
  };
}

/**
 * The creator and everyone who acted on the dossier (in signing order), once each, optionally
 * leaving someone out. People who never acted were never invited (a turn notifies when it
 * becomes active), so they are not told how a dossier they never saw ended.
 */
function participants(
  context: DossierContext,
  exceptUserId: number | null,
): NotificationRecipient[] {
  const seen = new Set<number>(exceptUserId === null ? [] : [exceptUserId]);
  const recipients: NotificationRecipient[] = [];
  const add = (userId: number | null, turn: DossierTurn | null) => {
    if (userId === null || seen.has(userId)) return;
    const user = context.users.get(userId);
    if (!user) return;
    seen.add(userId);
    recipients.push(recipientOf(user, turn));
  };
  add(context.dossier.created_by_user_id, null);
  for (const turn of context.turns) add(turn.acted_by_user_id, turn);
  return recipients;
}

/** Who handles an active turn: its assignee, or every unlocked holder of its role. */
async function assigneesOf(
  trx: Db,
  context: DossierContext,
  turn: DossierTurn,
): Promise<UserRow[]> {
  if (turn.assignee_user_id !== null) {
    const user = context.users.get(turn.assignee_user_id);
    return user ? [user] : [];
  }
  if (turn.role_id === null) return [];
  return unlockedRoleHolders(trx, turn.role_id);
}

function stepOf(context: DossierContext, turn: DossierTurn) {
  return {
    stepCode: turn.step.stepCode,
    stepName: turn.step.stepName,
    order: context.stepPositions.indexOf(turn.step_position) + 1,
  };
}

/** The link of a task in the web app (spec "Embedding": deep link `/tasks?id={taskId}`). */
function taskUrl(deps: EventDeps, taskId: number): string {
  return `${deps.config.appUrl}/tasks?id=${taskId}`;
}

async function taskDeadline(trx: Db, taskId: number | null): Promise<string | null> {
  return taskId === null ? null : taskExpireAt(trx, taskId);
}

/**
 * The recipe of one `notification.*` event: the webhook event for the subscriptions that opted
 * in, then the e-mails the service sends itself (external ones only when nobody took the event).
 * An event nobody would receive (no recipient) is not emitted.
 */
async function notify(
  trx: Db,
  deps: EventDeps,
  context: DossierContext,
  event: NotificationEvent,
  facts: Omit<
    NotificationFacts,
    'transactionId' | 'documentId' | 'documentUuid' | 'documentTitle' | 'totalSteps' | 'metadata'
  >,
): Promise<void> {
  if (facts.recipients.length === 0) return;
  const { dossier } = context;
  const data = notificationData(event, {
    transactionId: dossier.transaction_id,
    documentId: dossier.document_id,
    documentUuid: dossier.uuid,
    documentTitle: dossier.title,
    totalSteps: context.stepPositions.length,
    metadata: context.metadata,
    ...facts,
  });
  const { deliveries } = await enqueueEvent(trx, deps, {
    tenantId: dossier.tenant_id,
    organizationId: dossier.organization_id,
    type: event,
    data,
  });
  await queueNotification(trx, deps, {
    tenantId: dossier.tenant_id,
    event,
    data,
    delegatedByWebhook: deliveries > 0,
  });
}

// ---------------------------------------------------------------------------------------------
// The moments

/**
 * A turn became ACTIVE (its task is open): its handler is told. Call it in the transaction that
 * activated the turn, after the activation is written.
 */
export async function turnActivated(trx: Db, deps: EventDeps, turnId: number): Promise<void> {
  const { dossier_id: dossierId } = await dossierOfTurn(trx, turnId);
  const context = await loadDossier(trx, dossierId);
  const turn = context.turns.find((candidate) => candidate.id === turnId)!;
  const outside = outsideKinds.has(turn.step.kind);
  const handlers = await assigneesOf(trx, context, turn);
  await notify(
    trx,
    deps,
    context,
    outside ? 'notification.task_assigned_external' : 'notification.task_assigned_internal',
    {
      step: stepOf(context, turn),
      recipients: handlers.map((user) => recipientOf(user, turn)),
      signUrl: turn.task_id === null ? null : taskUrl(deps, turn.task_id),
      expireAt: await taskDeadline(trx, turn.task_id),
      prevActorName: await lastActorName(trx, dossierId),
      completeDate: null,
      note: null,
    },
  );
}

/** The dossier became COMPLETED: `document.completed`, then `notification.process_finished`. */
export async function dossierCompleted(trx: Db, deps: EventDeps, dossierId: number): Promise<void> {
  const context = await loadDossier(trx, dossierId);
  const { dossier } = context;
  const completedAt = dossier.completed_at!;
  const facts = await dossierEventFacts(trx, deps, context);
  await enqueueEvent(trx, deps, {
    tenantId: dossier.tenant_id,
    organizationId: dossier.organization_id,
    type: 'document.completed',
    data: documentCompletedData({ ...facts, completedAt }),
  });
  await notify(trx, deps, context, 'notification.process_finished', {
    step: null,
    recipients: participants(context, null),
    signUrl: null,
    expireAt: null,
    prevActorName: await lastActorName(trx, dossierId),
    completeDate: completedAt,
    note: null,
  });
}

/**
 * The dossier became REJECTED (its REJECTED turn holds the reason and who acted):
 * `document.rejected`, then `notification.task_rejected`.
 */
export async function dossierRejected(trx: Db, deps: EventDeps, dossierId: number): Promise<void> {
  const context = await loadDossier(trx, dossierId);
  const { dossier } = context;
  const rejectedAt = dossier.rejected_at!;
  const turn = context.turns.find((candidate) => candidate.status === 'REJECTED');
  if (!turn || turn.acted_by_user_id === null) {
    throw new Error(`dossier ${dossierId} is REJECTED without a rejected turn`);
  }
  const actor = context.users.get(turn.acted_by_user_id)!;
  const snapshot = actorSnapshot(turn.step.kind, actor, turn);
  const reason = turn.comment ?? '';
  const ownTurn = turn.assignee_user_id === actor.id && outsideKinds.has(turn.step.kind);
  const facts = await dossierEventFacts(trx, deps, context);
  await enqueueEvent(trx, deps, {
    tenantId: dossier.tenant_id,
    organizationId: dossier.organization_id,
    type: 'document.rejected',
    data: documentRejectedData({
      ...facts,
      rejectedAt,
      reason,
      rejectedBy: {
        fullName: snapshot.actor_name ?? null,
        email: snapshot.actor_email ?? null,
        phone: snapshot.actor_phone ?? null,
        identityNumber: (ownTurn ? turn.signer_identity_number : null) ?? actor.identity_number,
      },
    }),
  });
  await notify(trx, deps, context, 'notification.task_rejected', {
    step: stepOf(context, turn),
    recipients: participants(context, actor.id),
    signUrl: turn.task_id === null ? null : taskUrl(deps, turn.task_id),
    expireAt: await taskDeadline(trx, turn.task_id),
    prevActorName: snapshot.actor_name ?? null,
    completeDate: rejectedAt,
    note: reason,
  });
}
