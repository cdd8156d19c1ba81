import { identityKey, userStatus } from '../auth/queries';
import type { Db } from '../db/database';
import { internalUserByLoginName } from '../directory/queries/users';
import { DomainError } from '../errors/domainError';
import type { Logger } from '../platform/logger';
import type { StepRow } from '../processes/queries';
import type { SignerInputValue } from './schemas';

/**
 * "Validate and assign signers by stepCode": turns the `signers[]` of a creation request into
 * the turns of the dossier, one per signer, ordered within each step. Reads only; the accounts
 * of guest signers are found or created later, inside the creation transaction.
 */

/** The signer fields stored on the turn, as submitted. */
export interface SubmittedSigner {
  fullName: string | null;
  email: string | null;
  phone: string | null;
  identityNumber: string | null;
  taxCode: string | null;
}

/** The outside signer's account: found in the tenant by `username`, or created. */
export interface GuestAccountSpec {
  username: string;
  /** `details.field` of the input the username came from, for conflicts. */
  usernameField: string;
  name: string | null;
  email: string | null;
  phone: string | null;
  identityNumber: string | null;
  taxCode: string | null;
}

export type TurnAssignee =
  | { kind: 'user'; userId: number }
  | { kind: 'guest'; account: GuestAccountSpec }
  | { kind: 'role'; roleId: number };

export interface PlannedTurn {
  step: StepRow;
  turnOrder: number;
  signer: SubmittedSigner;
  assignee: TurnAssignee;
}

function signerRequired(step: StepRow, field: string, what: string): DomainError {
  return new DomainError('SIGNER_REQUIRED', `Step ${step.step_code} (${step.kind}) needs ${what}`, {
    field,
  });
}

function submitted(signer: SignerInputValue | undefined): SubmittedSigner {
  return {
    fullName: signer?.fullName ?? null,
    email: signer?.email ?? null,
    phone: signer?.phone ?? null,
    identityNumber: signer?.identityNumber ?? null,
    taxCode: signer?.taxCode ?? null,
  };
}

/** An internal user of the tenant by username (case-insensitive), or 400 with the field. */
async function internalUser(
  db: Db,
  tenantId: number,
  username: string,
  field: string,
): Promise<number> {
  const user = await internalUserByLoginName(db, tenantId, identityKey(username));
  if (!user) {
    throw new DomainError('USERNAME_NOT_FOUND', `No internal user ${username} in the tenant`, {
      field,
    });
  }
  if (user.status === userStatus.locked) {
    throw new DomainError('USER_LOCKED', `User ${username} is locked and cannot sign`, {
      field,
    });
  }
  return user.id;
}

/**
 * The account of an outside signer. The spec: "the signer account's username becomes the tax
 * code"; a person's is the identity number; without either, the e-mail (guest) or the phone
 * number (phone guest).
 */
function guestAccount(step: StepRow, signer: SignerInputValue, at: string): GuestAccountSpec {
  const [username, source] =
    signer.identityNumber !== undefined
      ? [signer.identityNumber, 'identityNumber']
      : signer.taxCode !== undefined
        ? [signer.taxCode, 'taxCode']
        : step.kind === 'guest'
          ? [signer.email!, 'email']
          : [signer.phone!, 'phone'];
  return {
    username,
    usernameField: `${at}.${source}`,
    name: signer.fullName ?? null,
    email: signer.email ?? null,
    phone: signer.phone ?? null,
    identityNumber: signer.identityNumber ?? null,
    taxCode: signer.taxCode ?? null,
  };
}

async function assigneeOf(
  db: Db,
  tenantId: number,
  step: StepRow,
  signer: SignerInputValue,
  at: string,
  logger: Logger,
): Promise<TurnAssignee> {
  switch (step.kind) {
    case 'guest':
    case 'phone_guest': {
      const needed = step.kind === 'guest' ? 'email' : 'phone';
      if (signer[needed] === undefined) {
        throw new DomainError(
          'VALIDATION_ERROR',
          `${at}.${needed}: is required for ${step.kind} step ${step.step_code}`,
          { field: `${at}.${needed}`, detailCode: 'REQUIRED' },
        );
      }
      if (signer.username !== undefined) {
        logger.warn(
          { field: `${at}.username`, stepCode: step.step_code, kind: step.kind },
          'username ignored for an outside signer',
        );
      }
      return { kind: 'guest', account: guestAccount(step, signer, at) };
    }
    case 'internal': {
      if (signer.username !== undefined) {
        return {
          kind: 'user',
          userId: await internalUser(db, tenantId, signer.username, `${at}.username`),
        };
      }
      if (step.default_user_id === null) {
        throw signerRequired(step, `${at}.username`, 'a username (it has no default user)');
      }
      return { kind: 'user', userId: step.default_user_id };
    }
    case 'role': {
      if (signer.username !== undefined) {
        return {
          kind: 'user',
          userId: await internalUser(db, tenantId, signer.username, `${at}.username`),
        };
      }
      return { kind: 'role', roleId: step.role_id! };
    }
  }
}

/** A step nobody was sent for: role steps get one role turn, internal steps their default user. */
function defaultAssignee(step: StepRow): TurnAssignee {
  if (step.kind === 'role') return { kind: 'role', roleId: step.role_id! };
  if (step.kind === 'internal' && step.default_user_id !== null) {
    return { kind: 'user', userId: step.default_user_id };
  }
  const what = step.kind === 'internal' ? 'a signer with a username' : 'a signer';
  throw signerRequired(step, 'signers', what);
}

/**
 * One turn per signer, grouped by step in process order; within a step by `order` (default: the
 * signer's 1-based position in `signers[]`), ties kept in array order, numbered from 1.
 */
export async function planTurns(
  db: Db,
  tenantId: number,
  steps: StepRow[],
  signers: SignerInputValue[],
  logger: Logger,
): Promise<PlannedTurn[]> {
  const byCode = new Map(steps.map((step) => [step.step_code, step]));
  const grouped = new Map<number, { sortKey: number; index: number; turn: PlannedTurn }[]>();
  for (const [index, signer] of signers.entries()) {
    const at = `signers.${index}`;
    const step = byCode.get(signer.stepCode);
    if (!step) {
      throw new DomainError('STEP_CODE_NOT_FOUND', `The process has no step ${signer.stepCode}`, {
        field: `${at}.stepCode`,
      });
    }
    const assignee = await assigneeOf(db, tenantId, step, signer, at, logger);
    const entries = grouped.get(step.position) ?? [];
    entries.push({
      sortKey: signer.order ?? index + 1,
      index,
      turn: { step, turnOrder: 0, signer: submitted(signer), assignee },
    });
    grouped.set(step.position, entries);
  }
  const turns: PlannedTurn[] = [];
  for (const step of steps) {
    const entries = grouped.get(step.position);
    if (!entries) {
      turns.push({
        step,
        turnOrder: 1,
        signer: submitted(undefined),
        assignee: defaultAssignee(step),
      });
      continue;
    }
    entries.sort((a, b) => a.sortKey - b.sortKey || a.index - b.index);
    entries.forEach((entry, position) => {
      turns.push({ ...entry.turn, turnOrder: position + 1 });
    });
  }
  return turns;
}
