import { z } from 'zod';
import { contractTypes, createContractType } from '../../contracts/types';
import { isoNow } from '../../platform/clock';
import { tenantByCode } from '../../tenancy/resolveTenant';
import { type Command, command, listCommand, option } from '../command';

/** Contract types of a tenant (the `contractTypeId` of contract creation). */
export const contractCommands: Command[] = [
  command({
    name: 'contract-type create',
    options: z.object({
      tenant: option.text,
      name: option.text.max(255, 'must be at most 255 characters'),
    }),
    prepare: ({ tenant: tenantCode, name }) => {
      return async (deps) => {
        const tenant = await tenantByCode(deps.db, tenantCode);
        const type = await createContractType(deps.db, isoNow(deps.clock), tenant.id, name);
        return {
          json: { tenantCode: tenant.code, id: type.type_number, name: type.name },
          lines: [
            `Created contract type ${type.type_number} "${type.name}" of tenant ${tenant.code} (contractTypeId ${type.type_number}).`,
          ],
        };
      };
    },
  }),
  listCommand({
    name: 'contract-type list',
    key: 'contractTypes',
    header: ['TENANT', 'ID', 'NAME', 'CREATED'],
    list: (db, tenantId) => contractTypes(db, tenantId),
    row: (type) => [type.tenantCode, type.id, type.name, type.createdAt],
  }),
];
