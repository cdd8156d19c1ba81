import { listTemplates, registerTemplate } from '../../templates/service';
import { tenantByCode } from '../../tenancy/resolveTenant';
import { type Command, valueOptions } from '../command';
import { existingFile, organizationListCommand } from './process';

/** Fillable PDF templates for `source: template` files of dossier creation. */
export const templateCommands: Command[] = [
  {
    name: 'template create',
    options: valueOptions('tenant', 'org', 'code', 'name', 'file'),
    prepare: (args) => {
      const tenantCode = args.text('tenant');
      const organizationCode = args.text('org');
      const code = args.code('code');
      const name = args.text('name');
      const pdfPath = existingFile(args, 'file');
      return async (deps) => {
        const tenant = await tenantByCode(deps.db, tenantCode);
        const { template, replaced } = await registerTemplate(deps, tenant, organizationCode, {
          code,
          name,
          pdfPath,
        });
        return {
          json: {
            id: template.id,
            organizationCode: template.organizationCode,
            code: template.code,
            name: template.name,
            fields: template.fields,
            sha256: template.sha256,
            size: template.size,
          },
          lines: [
            `${replaced ? 'Replaced' : 'Registered'} template ${template.code} "${template.name}" of ${template.organizationCode} (tenant ${tenant.code}), id ${template.id}, ${template.size} bytes.`,
            `Fields for templateData: ${template.fields.join(', ')}.`,
          ],
        };
      };
    },
  },
  organizationListCommand({
    name: 'template list',
    key: 'templates',
    header: ['ORGANIZATION', 'CODE', 'NAME', 'FIELDS', 'SIZE', 'UPDATED'],
    list: (deps, tenant, organizationCode) => listTemplates(deps.db, tenant, organizationCode),
    row: (t) => [t.organizationCode, t.code, t.name, t.fields.join(','), t.size, t.updatedAt],
  }),
];
