import { z } from 'zod';
import { listTemplates, registerTemplate } from '../../templates/service';
import { tenantByCode } from '../../tenancy/resolveTenant';
import { type Command, command, option } from '../command';
import { existingFile, organizationListCommand } from './process';

/** Fillable PDF templates for `source: template` files of dossier creation. */
export const templateCommands: Command[] = [
  command({
    name: 'template create',
    options: z.object({
      tenant: option.text,
      org: option.text,
      code: option.code,
      name: option.text,
      file: existingFile,
    }),
    prepare: ({ tenant: tenantCode, org: organizationCode, code, name, file: pdfPath }) => {
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
  }),
  organizationListCommand({
    name: 'template list',
    key: 'templates',
    header: ['ORGANIZATION', 'CODE', 'NAME', 'FIELDS', 'SIZE', 'UPDATED'],
    list: (deps, tenant, organizationCode) => listTemplates(deps.db, tenant, organizationCode),
    row: (t) => [t.organizationCode, t.code, t.name, t.fields.join(','), t.size, t.updatedAt],
  }),
];
