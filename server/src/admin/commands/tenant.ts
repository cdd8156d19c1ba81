import { isoNow } from '../../platform/clock';
import { tenantByCode } from '../../tenancy/resolveTenant';
import { createTenant, parseDeveloperContact, setDeveloperContact } from '../../tenancy/service';
import { Args, type Command, valueOptions } from '../command';

export const tenantCommands: Command[] = [
  {
    name: 'tenant create',
    options: valueOptions('code', 'name', 'developer-email', 'developer-phone'),
    prepare: (args) => {
      const input = {
        code: args.code('code'),
        name: args.text('name'),
        ...developerContact(args),
      };
      return async (deps) => {
        const { tenant, root, adminRole } = await createTenant(deps.db, isoNow(deps.clock), input);
        return {
          json: {
            id: tenant.id,
            code: tenant.code,
            name: tenant.name,
            developerEmail: tenant.developer_email,
            developerPhone: tenant.developer_phone,
            rootOrganization: { code: root.code, name: root.name },
            adminRole: { name: adminRole.name },
          },
          lines: [
            `Created tenant ${tenant.code} (${tenant.name}), id ${tenant.id}.`,
            `Root organization ${root.code}; role "${adminRole.name}" holds every permission.`,
            'Next: create an administrator and give it that role, e.g.',
            `  admin user create --tenant ${tenant.code} --username U --email E --member ${root.code}:"${adminRole.name}"`,
          ],
        };
      };
    },
  },
];

/** The sandbox developer account options, checked before the database is opened. */
function developerContact(args: Args) {
  const contact = {
    developerEmail: args.optionalText('developer-email'),
    developerPhone: args.optionalText('developer-phone'),
  };
  try {
    return parseDeveloperContact(
      Object.fromEntries(Object.entries(contact).filter(([, value]) => value !== undefined)),
    );
  } catch (error) {
    return args.fail(error instanceof Error ? error.message : String(error));
  }
}

tenantCommands.push({
  name: 'tenant developer',
  options: valueOptions('tenant', 'email', 'phone'),
  prepare: (args) => {
    const tenantCode = args.text('tenant');
    const contact = developerContact(
      new Args(args.command, {
        'developer-email': args.optionalText('email'),
        'developer-phone': args.optionalText('phone'),
      }),
    );
    if (!contact.developerEmail && !contact.developerPhone)
      args.fail('give --email, --phone or both');
    return async (deps) => {
      const tenant = await setDeveloperContact(
        deps.db,
        await tenantByCode(deps.db, tenantCode),
        contact,
      );
      return {
        json: {
          code: tenant.code,
          developerEmail: tenant.developer_email,
          developerPhone: tenant.developer_phone,
        },
        lines: [
          `Developer account of ${tenant.code}: ${tenant.developer_email ?? '(no e-mail)'}, ${tenant.developer_phone ?? '(no phone)'}.`,
          "In sandbox mode (SANDBOX=1) the tenant's e-mails and SMS go only there.",
        ],
      };
    };
  },
});
