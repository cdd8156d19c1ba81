import { z } from 'zod';
import { verifyAuditChain } from '../../contracts/audit';
import { contractByUuidAnyTenant } from '../../contracts/queries';
import { contractTypes, createContractType } from '../../contracts/types';
import { ApiError } from '../../errors/apiError';
import { isoNow } from '../../platform/clock';
import { tenantByCode } from '../../tenancy/resolveTenant';
import { type Command, command, listCommand, option } from '../command';

const brokenLinks = {
  content_changed: 'was changed after it was written (its hash no longer matches)',
  link_broken: 'does not follow the event before it (an event was removed or replaced)',
  sequence_gap: 'is out of sequence (an event before it is missing)',
  tail_missing: 'is missing: the newest events were removed',
} as const;

/** Contract types of a tenant (the `contractTypeId` of contract creation) and the audit trail. */
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
  command({
    name: 'audit verify',
    options: z.object({ contract: option.text }),
    prepare: ({ contract: contractId }) => {
      return async (deps) => {
        const contract = await contractByUuidAnyTenant(deps.db, contractId);
        if (!contract) {
          throw new ApiError(404, 'CONTRACT_NOT_FOUND', `No contract ${contractId}`);
        }
        const result = await verifyAuditChain(deps.db, contract.id);
        if (!result.valid) {
          throw new ApiError(
            422,
            'AUDIT_CHAIN_BROKEN',
            `The audit trail of contract ${contract.uuid} is broken at event ${result.brokenAt}: it ${brokenLinks[result.reason]}`,
          );
        }
        return {
          json: {
            contractId: contract.uuid,
            valid: true,
            events: result.events,
            head: result.head,
          },
          lines: [
            `The audit trail of contract ${contract.uuid} holds: ${result.events} events, head ${result.head}.`,
          ],
        };
      };
    },
  }),
];
