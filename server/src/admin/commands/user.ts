import { inTransaction } from '../../db/database';
import { UserInputSchema } from '../../directory/schemas';
import { createUser, type MemberInput, type UserInput } from '../../directory/service';
import { insertUser } from '../../directory/userRecords';
import { validationError } from '../../errors/apiError';
import { isoNow } from '../../platform/clock';
import { hashPassword } from '../../platform/passwords';
import { tenantByCode } from '../../tenancy/resolveTenant';
import { type Action, type Args, type Command, flagOptions, valueOptions } from '../command';
import { readSecret } from '../secretInput';

/** CLI-created accounts are active at once. */
const activeStatus = 2;

/** `--member ORG:ROLE_NAME`, split at the first colon (role names may hold colons). */
function memberOf(args: Args, raw: string): MemberInput {
  const colon = raw.indexOf(':');
  const organizationCode = raw.slice(0, colon).trim();
  const roleName = raw.slice(colon + 1).trim();
  if (colon === -1 || organizationCode === '' || roleName === '') {
    args.fail(`--member takes ORG:ROLE_NAME, got "${raw}"`);
  }
  return { organizationCode, roleName };
}

function tenantUser(args: Args): Action {
  const tenantCode = args.text('tenant');
  const type = args.optionalText('type') ?? 'internal';
  if (type !== 'internal' && type !== 'external') {
    args.fail(`--type must be internal or external, got "${type}"`);
  }
  const input: UserInput = {
    username: args.text('username'),
    email: args.text('email'),
    code: args.optionalCode('code'),
    name: args.optionalText('name'),
    phone: args.optionalText('phone'),
    identityNumber: args.optionalText('identity-number'),
    members: args.repeated('member').map((raw) => memberOf(args, raw)),
  };
  // The directory's own schema: a bad e-mail or an over-long field is a bad argument here.
  const checked = UserInputSchema.safeParse(input);
  if (!checked.success) args.fail(validationError(checked.error).message);
  const rawPassword = args.optionalText('password');
  return async (deps) => {
    const passwordHash =
      rawPassword === undefined ? null : await hashPassword(await readSecret(rawPassword));
    const tenant = await tenantByCode(deps.db, tenantCode);
    const user = await createUser(deps, tenant, input, {
      type,
      status: activeStatus,
      passwordHash,
      // An outside signer belongs to no organization of the tenant; staff sit at the root.
      ...(type === 'external' ? { organizationId: null } : {}),
    });
    const roles = user.members.map((m) => `${m.organizationCode}:${m.roleName}`).join(', ');
    return {
      json: { ...user },
      lines: [
        `Created ${type} user ${user.username} (${user.email}) in tenant ${tenant.code}${user.code ? `, code ${user.code}` : ''}; active.`,
        `Roles: ${roles || 'none'}. Password: ${passwordHash ? 'set' : 'none (partner login or login-server only)'}.`,
      ],
    };
  };
}

function superAdmin(args: Args): Action {
  args.forbid(
    ['tenant', 'member', 'code', 'type'],
    '--super-admin (a system super-administrator belongs to no tenant)',
  );
  const fields = {
    username: args.text('username'),
    email: args.text('email'),
    name: args.optionalText('name') ?? null,
    phone: args.optionalText('phone') ?? null,
    identityNumber: args.optionalText('identity-number') ?? null,
  };
  const rawPassword = args.text('password');
  return async (deps) => {
    const passwordHash = await hashPassword(await readSecret(rawPassword));
    const user = await inTransaction(deps.db, (trx) =>
      insertUser(
        trx,
        {
          ...fields,
          tenantId: null,
          organizationId: null,
          code: null,
          status: activeStatus,
          type: 'internal',
          isSuperAdmin: true,
          passwordHash,
        },
        isoNow(deps.clock),
      ),
    );
    return {
      json: {
        id: user.id,
        username: user.username,
        email: user.email,
        name: user.name,
        status: user.status,
        isSuperAdmin: true,
      },
      lines: [
        `Created system super-administrator ${user.username} (${user.email}), id ${user.id}.`,
        'It signs in with POST /api/auth/login; bind API keys to tenant administrators instead (spec rule 7).',
      ],
    };
  };
}

export const userCommands: Command[] = [
  {
    name: 'user create',
    options: {
      ...valueOptions(
        'tenant',
        'username',
        'email',
        'name',
        'password',
        'phone',
        'identity-number',
        'code',
        'type',
      ),
      member: { type: 'string', multiple: true },
      ...flagOptions('super-admin'),
    },
    prepare: (args) => {
      return args.flag('super-admin') ? superAdmin(args) : tenantUser(args);
    },
  },
];
