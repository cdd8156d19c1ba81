import { type Db, inTransaction } from '../db/database';
import { DomainError } from '../errors/domainError';
import {
  type ContractTypeRow,
  contractTypeByName,
  insertContractType,
  listContractTypes,
} from './queries';

export interface ContractTypeView {
  tenantCode: string;
  id: number;
  name: string;
  createdAt: string;
}

/**
 * A new contract type of a tenant, numbered after its highest one (type 1 "Hợp đồng" exists in
 * every tenant). A name the tenant already uses is 409 CONTRACT_TYPE_EXISTS.
 */
export async function createContractType(
  db: Db,
  now: string,
  tenantId: number,
  name: string,
): Promise<ContractTypeRow> {
  const trimmed = name.normalize('NFC').trim();
  return inTransaction(db, async (trx) => {
    if (await contractTypeByName(trx, tenantId, trimmed)) {
      throw new DomainError(
        'CONTRACT_TYPE_EXISTS',
        `The tenant already has a contract type "${trimmed}"`,
      );
    }
    return insertContractType(trx, tenantId, trimmed, now);
  });
}

export async function contractTypes(db: Db, tenantId?: number): Promise<ContractTypeView[]> {
  const rows = await listContractTypes(db, tenantId);
  return rows.map((row) => ({
    tenantCode: row.tenant_code,
    id: row.type_number,
    name: row.name,
    createdAt: row.created_at,
  }));
}
