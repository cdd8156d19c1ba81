import type { Insertable } from 'kysely';
import type { UserRow } from '../auth/queries';
import type { Db } from '../db/database';
import type { DossierStatus, HistoryTable, StepKind } from '../db/schema';
import type { StepRow } from '../processes/queries';
import { activeDelegatorIds } from './queries/delegations';
import { roleIdsOf } from './queries/people';
import { stepById, taskWithDossier } from './queries/tasks';
import { type TurnRow, turnsOfTask } from './queries/turns';

export type { TurnRow };

/** A task with what every action needs: its step, its dossier and its turns in order. */
export interface TaskContext {
  task: {
    id: number;
    code: string;
    tenantId: number;
    organizationId: number;
    dossierId: number;
    status: number;
    expireAt: string | null;
  };
  step: StepRow;
  dossier: { id: number; status: DossierStatus; signedCount: number; requiredCount: number };
  turns: TurnRow[];
}

export async function loadTaskContext(
  db: Db,
  where: { code: string } | { id: number },
): Promise<TaskContext | undefined> {
  const row = await taskWithDossier(db, where);
  if (!row) return undefined;
  const step = await stepById(db, row.step_id);
  const turns = await turnsOfTask(db, row.id);
  return {
    task: {
      id: row.id,
      code: row.code,
      tenantId: row.tenant_id,
      organizationId: row.organization_id,
      dossierId: row.dossier_id,
      status: row.status,
      expireAt: row.expire_at,
    },
    step,
    dossier: {
      id: row.dossier_id,
      status: row.dossier_status,
      signedCount: row.signed_count,
      requiredCount: row.required_count,
    },
    turns,
  };
}

/** Steps performed by an account of the organization: the history shows the actor's username. */
export function isInternalAccountStep(kind: StepKind): boolean {
  return kind === 'internal' || kind === 'role';
}

export type ActorSnapshot = Pick<
  Insertable<HistoryTable>,
  'actor_user_id' | 'actor_name' | 'actor_username' | 'actor_email' | 'actor_phone'
>;

/**
 * Who a history row names, frozen at the time of the action. On a guest step the signer is
 * described as submitted at creation (falling back to the account), and the username is never
 * shown (a guest's username is their personal id); on internal and role steps the account speaks.
 */
export function actorSnapshot(kind: StepKind, user: UserRow, turn: TurnRow): ActorSnapshot {
  const internal = isInternalAccountStep(kind);
  const signerIsAssignee = turn.assignee_user_id === user.id && !internal;
  return {
    actor_user_id: user.id,
    actor_name:
      (signerIsAssignee ? turn.signer_full_name : null) ??
      user.name ??
      (internal ? user.username : null),
    actor_username: internal ? user.username : null,
    actor_email: (signerIsAssignee ? turn.signer_email : null) ?? user.email,
    actor_phone: (signerIsAssignee ? turn.signer_phone : null) ?? user.phone,
  };
}

/**
 * The numbers that identify the person taking the turn, compared with a signing certificate:
 * on a guest step as submitted at creation (falling back to the account), else the account's.
 */
export function signerNumbers(
  kind: StepKind,
  user: UserRow,
  turn: TurnRow,
): { identityNumber: string | null; taxCode: string | null } {
  const signerIsAssignee = turn.assignee_user_id === user.id && !isInternalAccountStep(kind);
  return {
    identityNumber: (signerIsAssignee ? turn.signer_identity_number : null) ?? user.identity_number,
    taxCode: (signerIsAssignee ? turn.signer_tax_code : null) ?? user.tax_code,
  };
}

/** What makes a user part of a task: the user, the roles held, the delegations in force to them. */
export interface Participant {
  userId: number;
  roleIds: number[];
  /** Users whose pending tasks this user may handle now (delegations in force). */
  delegatorIds: number[];
}

export async function participantAt(db: Db, userId: number, now: string): Promise<Participant> {
  return {
    userId,
    roleIds: await roleIdsOf(db, userId),
    delegatorIds: await activeDelegatorIds(db, userId, now),
  };
}

/**
 * Whether the participant may perform `turn`: its assignee, any holder of its role while nobody
 * has taken it, or a delegate of its assignee.
 */
export function mayPerform(participant: Participant, turn: TurnRow): boolean {
  return turn.assignee_user_id === null
    ? turn.role_id !== null && participant.roleIds.includes(turn.role_id)
    : turn.assignee_user_id === participant.userId ||
        participant.delegatorIds.includes(turn.assignee_user_id);
}

/** Whether the participant takes part in a task of these turns: may perform one, or performed one. */
export function takesPart(participant: Participant, turns: TurnRow[]): boolean {
  return turns.some(
    (turn) => mayPerform(participant, turn) || turn.acted_by_user_id === participant.userId,
  );
}
