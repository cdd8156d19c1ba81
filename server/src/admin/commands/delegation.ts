import { z } from 'zod';
import { findUserByLogin } from '../../auth/queries';
import type { AppDeps } from '../../context';
import { DomainError } from '../../errors/domainError';
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
import {
  type Action,
  type Command,
  checked,
  command,
  listCommand,
  type Outcome,
  option,
} from '../command';

function delegationLine(view: DelegationView): string {
  return `${view.fromUsername} → ${view.toUsername} from ${view.startsAt} until ${view.endsAt} (${view.state})`;
}

/** The acting user of a task command: a user of the tenant by login name or e-mail. */
async function tenantUser(deps: AppDeps, tenant: TenantRow, login: string) {
  const user = await findUserByLogin(deps.db, login, tenant.id);
  if (!user || user.tenant_id !== tenant.id) {
    throw new DomainError('USER_NOT_FOUND', `No user ${login} in tenant ${tenant.code}`, {
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

const taskOptions = { tenant: option.text, task: option.text, user: option.text };

/** `task approve|acknowledge|reject`: performs a turn as a user, through the task actions. */
function taskCommand(action: TaskAction): Command {
  const verbs = { approve: 'approved', acknowledge: 'acknowledged', reject: 'rejected' };
  const perform =
    (options: z.output<z.ZodObject<typeof taskOptions>>, text: string | undefined): Action =>
    async (deps) => {
      const tenant = await tenantByCode(deps.db, options.tenant);
      const user = await tenantUser(deps, tenant, options.user);
      const input = { taskCode: options.task, actorUserId: user.id };
      const outcome =
        action === 'reject'
          ? await reject(deps, { ...input, reason: text ?? '' })
          : await (action === 'approve' ? approve : acknowledge)(deps, { ...input, comment: text });
      return outcomeLines(verbs[action], user.username, outcome);
    };
  const name = `task ${action}`;
  // A rejection needs its reason; approving or acknowledging may add a comment.
  return action === 'reject'
    ? command({
        name,
        options: z.object({ ...taskOptions, reason: option.text }),
        prepare: (options) => perform(options, options.reason),
      })
    : command({
        name,
        options: z.object({ ...taskOptions, comment: option.text.optional() }),
        prepare: (options) => perform(options, options.comment),
      });
}

/** Delegation of pending tasks between users, and the task actions for operators. */
export const delegationCommands: Command[] = [
  command({
    name: 'delegation create',
    options: z.object({
      tenant: option.text,
      from: option.text,
      to: option.text,
      starts: checked(option.text, (value) => delegationInstant(value, 'starts')),
      ends: checked(option.text, (value) => delegationInstant(value, 'ends')),
    }),
    prepare: ({ tenant: tenantCode, from, to, starts, ends }) => {
      const input = { fromUsername: from, toUsername: to, startsAt: starts, endsAt: ends };
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
  }),
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
  command({
    name: 'delegation revoke',
    options: z.object({ id: option.positiveInteger }),
    prepare: ({ id }) => {
      return async (deps) => {
        const view = await revokeDelegation(deps, id);
        return {
          json: { ...view },
          lines: [`Revoked delegation ${view.id} at ${view.revokedAt}: ${delegationLine(view)}.`],
        };
      };
    },
  }),
  taskCommand('approve'),
  taskCommand('acknowledge'),
  taskCommand('reject'),
];
