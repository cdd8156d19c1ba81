import { z } from 'zod';
import { inTransaction } from '../../db/database';
import { UserInputSchema } from '../../directory/schemas';
import { createUser, type MemberInput, type UserInput } from '../../directory/service';
import { insertUser } from '../../directory/userRecords';
import { validationError } from '../../errors/domainError';
import { isoNow } from '../../platform/clock';
import { hashPassword } from '../../platform/passwords';
import { tenantByCode } from '../../tenancy/resolveTenant';
import {
  type Action,
  type Command,
  command,
  forbiddenWith,
  option,
  type Preparation,
  requiredWhen,
} from '../command';
import { readSecret } from '../secretInput';

/** CLI-created accounts are active at once. */
const activeStatus = 2;

/** `--member ORG:ROLE_NAME`, split at the first colon (role names may hold colons). */
const member = option.text.transform((raw, context): MemberInput => {
  const colon = raw.indexOf(':');
  const organizationCode = raw.slice(0, colon).trim();
  const roleName = raw.slice(colon + 1).trim();
  if (colon === -1 || organizationCode === '' || roleName === '') {
    context.issues.push({
      code: 'custom',
      message: `takes ORG:ROLE_NAME, got "${raw}"`,
      input: raw,
    });
    return z.NEVER;
  }
  return { organizationCode, roleName };
});

const UserOptions = z
  .object({
    tenant: option.text.optional(),
    username: option.text,
    email: option.text,
    name: option.text.optional(),
    password: option.text.optional(),
    phone: option.text.optional(),
    'identity-number': option.text.optional(),
    code: option.code.optional(),
    type: option.oneOf(['internal', 'external']).optional(),
    member: z.array(member).default([]),
    'super-admin': option.flag,
  })
  .superRefine(
    forbiddenWith(
      'super-admin',
      ['tenant', 'member', 'code', 'type'],
      '--super-admin (a system super-administrator belongs to no tenant)',
    ),
  )
  .superRefine(requiredWhen('super-admin', true, ['password']))
  .superRefine(requiredWhen('super-admin', false, ['tenant']));
type UserOptions = z.output<typeof UserOptions>;

function tenantUser(options: UserOptions, preparation: Preparation): Action {
  const tenantCode = preparation.required(options.tenant, 'tenant');
  const type = options.type ?? 'internal';
  const input: UserInput = {
    username: options.username,
    email: options.email,
    code: options.code,
    name: options.name,
    phone: options.phone,
    identityNumber: options['identity-number'],
    members: options.member,
  };
  // The directory's own schema: a bad e-mail or an over-long field is a bad argument here.
  const checked = UserInputSchema.safeParse(input);
  if (!checked.success) preparation.fail(validationError(checked.error).message);
  const rawPassword = options.password;
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

function superAdmin(options: UserOptions, preparation: Preparation): Action {
  const fields = {
    username: options.username,
    email: options.email,
    name: options.name ?? null,
    phone: options.phone ?? null,
    identityNumber: options['identity-number'] ?? null,
  };
  const rawPassword = preparation.required(options.password, 'password');
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
  command({
    name: 'user create',
    options: UserOptions,
    prepare: (options, preparation) =>
      options['super-admin'] ? superAdmin(options, preparation) : tenantUser(options, preparation),
  }),
];
