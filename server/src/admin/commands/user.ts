import { inTransaction } from '../../db/database';
import { insertUser } from '../../directory/userRecords';
import { isoNow } from '../../platform/clock';
import { hashPassword } from '../../platform/passwords';
import { type Action, type Args, type Command, flagOptions, valueOptions } from '../command';
import { readSecret } from '../secretInput';

/** CLI-created accounts are active at once. */
const activeStatus = 2;

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
      if (args.flag('super-admin')) return superAdmin(args);
      return args.fail('tenant users are not available yet');
    },
  },
];
