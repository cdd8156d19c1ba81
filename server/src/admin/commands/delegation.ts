import { findUserByLogin } from '../../auth/queries';
import type { AppDeps } from '../../context';
import { ApiError } from '../../errors/apiError';
import { systemClock } from '../../platform/clock';
import { type TenantRow, tenantByCode } from '../../tenancy/resolveTenant';
import { type ActionOutcome, acknowledge, approve, reject } from '../../workflow/actions';
import {
  createDelegation,
  type DelegationView,
  delegationInstant,
  listDelegations,
  revokeDelegation,
} from '../../workflow/delegations';
import { type Command, listCommand, type Outcome, valueOptions } from '../command';

function delegationLine(view: DelegationView): string {
  return `${view.fromUsername} → ${view.toUsername} from ${view.startsAt} until ${view.endsAt} (${view.state})`;
}

/** The acting user of a task command: a user of the tenant by login name or e-mail. */
async function tenantUser(deps: AppDeps, tenant: TenantRow, login: string) {
  const user = await findUserByLogin(deps.db, login, tenant.id);
  if (!user || user.tenant_id !== tenant.id) {
    throw new ApiError(404, 'USER_NOT_FOUND', `No user ${login} in tenant ${tenant.code}`, {
      field: 'user',
    });
  }
  return user;
}

function outcomeLines(verb: string, login: string, outcome: ActionOutcome): Outcome {
  const next = outcome.nextTaskCode ? `; next task ${outcome.nextTaskCode}` : '';
  return {
    json: { ...outcome },
    lines: [
      `${login} ${verb} task ${outcome.taskCode}: task ${outcome.taskStatus}, dossier ${outcome.dossierStatus} (${outcome.signedCount}/${outcome.requiredCount} signed)${next}.`,
    ],
  };
}

type TaskAction = 'approve' | 'acknowledge' | 'reject';

/** `task approve|acknowledge|reject`: performs a turn as a user, through the task actions. */
function taskCommand(action: TaskAction): Command {
  const verbs = { approve: 'approved', acknowledge: 'acknowledged', reject: 'rejected' };
  return {
    name: `task ${action}`,
    options: valueOptions('tenant', 'task', 'user', action === 'reject' ? 'reason' : 'comment'),
    prepare: (args) => {
      const tenantCode = args.text('tenant');
      const taskCode = args.text('task');
      const login = args.text('user');
      const text = action === 'reject' ? args.text('reason') : args.optionalText('comment');
      return async (deps) => {
        const tenant = await tenantByCode(deps.db, tenantCode);
        const user = await tenantUser(deps, tenant, login);
        const input = { taskCode, actorUserId: user.id };
        const outcome =
          action === 'reject'
            ? await reject(deps, { ...input, reason: text ?? '' })
            : await (action === 'approve' ? approve : acknowledge)(deps, {
                ...input,
                comment: text,
              });
        return outcomeLines(verbs[action], user.username, outcome);
      };
    },
  };
}

/** Delegation of pending tasks between users, and the task actions for operators. */
export const delegationCommands: Command[] = [
  {
    name: 'delegation create',
    options: valueOptions('tenant', 'from', 'to', 'starts', 'ends'),
    prepare: (args) => {
      const tenantCode = args.text('tenant');
      const input = {
        fromUsername: args.text('from'),
        toUsername: args.text('to'),
        startsAt: args.check(() => delegationInstant(args.text('starts'), 'starts')),
        endsAt: args.check(() => delegationInstant(args.text('ends'), 'ends')),
      };
      return async (deps) => {
        const tenant = await tenantByCode(deps.db, tenantCode);
        const view = await createDelegation(deps, tenant, input);
        return {
          json: { ...view },
          lines: [
            `Created delegation ${view.id} in tenant ${tenant.code}: ${delegationLine(view)}.`,
          ],
        };
      };
    },
  },
  listCommand({
    name: 'delegation list',
    key: 'delegations',
    header: ['ID', 'TENANT', 'FROM', 'TO', 'STARTS', 'ENDS', 'STATE'],
    // The operator CLI runs on the system clock (as its runtime does): states are as of now.
    list: (db, tenantId) => listDelegations({ db, clock: systemClock }, tenantId),
    row: (view) => [
      view.id,
      view.tenantCode,
      view.fromUsername,
      view.toUsername,
      view.startsAt,
      view.endsAt,
      view.state,
    ],
  }),
  {
    name: 'delegation revoke',
    options: valueOptions('id'),
    prepare: (args) => {
      const id = args.positiveInteger('id');
      return async (deps) => {
        const view = await revokeDelegation(deps, id);
        return {
          json: { ...view },
          lines: [`Revoked delegation ${view.id} at ${view.revokedAt}: ${delegationLine(view)}.`],
        };
      };
    },
  },
  taskCommand('approve'),
  taskCommand('acknowledge'),
  taskCommand('reject'),
];
