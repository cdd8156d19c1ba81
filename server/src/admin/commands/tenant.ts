import { z } from 'zod';
import { isoNow } from '../../platform/clock';
import { tenantByCode } from '../../tenancy/resolveTenant';
import { createTenant, parseDeveloperContact, setDeveloperContact } from '../../tenancy/service';
import { type Command, command, option, type Preparation } from '../command';

export const tenantCommands: Command[] = [
  command({
    name: 'tenant create',
    options: z.object({
      code: option.code,
      name: option.text,
      'developer-email': option.text.optional(),
      'developer-phone': option.text.optional(),
    }),
    prepare: (options, preparation) => {
      const input = {
        code: options.code,
        name: options.name,
        ...developerContact(
          { email: options['developer-email'], phone: options['developer-phone'] },
          preparation,
        ),
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
  }),
];

/** The sandbox developer account options, checked by the tenancy rules before the database is opened. */
function developerContact(
  contact: { email: string | undefined; phone: string | undefined },
  preparation: Preparation,
) {
  return preparation.check(() =>
    parseDeveloperContact({
      ...(contact.email !== undefined ? { developerEmail: contact.email } : {}),
      ...(contact.phone !== undefined ? { developerPhone: contact.phone } : {}),
    }),
  );
}

tenantCommands.push(
  command({
    name: 'tenant developer',
    options: z.object({
      tenant: option.text,
      email: option.text.optional(),
      phone: option.text.optional(),
    }),
    prepare: ({ tenant: tenantCode, email, phone }, preparation) => {
      const contact = developerContact({ email, phone }, preparation);
      if (!contact.developerEmail && !contact.developerPhone)
        preparation.fail('give --email, --phone or both');
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
  }),
);
