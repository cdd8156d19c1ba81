import { type AuditSubject, contractTrail, dossierTrail } from '../audit/subject';
import type { Db } from '../db/database';

/** The checks of a migrated database: which audit trails and which signed PDFs it holds. */

/** Every contract's and every dossier's audit trail. */
export async function auditTrails(db: Db): Promise<AuditSubject[]> {
  const contracts = await db.selectFrom('contracts').select('id').orderBy('id').execute();
  const dossiers = await db.selectFrom('dossiers').select('id').orderBy('id').execute();
  return [
    ...contracts.map((row) => contractTrail(row.id)),
    ...dossiers.map((row) => dossierTrail(row.id)),
  ];
}

export interface SignedFile {
  sha256: string;
  tenantId: number;
}

/**
 * Every stored PDF the service signed: the contract file versions a signature or the archive
 * timestamp made, and the signed file of every finalized preparation (dossier files, and the
 * contract versions again), each once per tenant.
 */
export async function signedFiles(db: Db): Promise<SignedFile[]> {
  const rows = await db
    .selectFrom('contract_file_versions')
    .innerJoin('contracts', 'contracts.id', 'contract_file_versions.contract_id')
    .select(['contract_file_versions.sha256 as sha256', 'contracts.tenant_id as tenantId'])
    .where('contract_file_versions.kind', '!=', 'original')
    .union(
      db
        .selectFrom('signature_preparations')
        .select(['signed_sha256 as sha256', 'tenant_id as tenantId'])
        .where('state', '=', 'finalized')
        .where('signed_sha256', 'is not', null)
        .$narrowType<{ sha256: string }>(),
    )
    .orderBy('sha256')
    .orderBy('tenantId')
    .execute();
  return rows.map((row) => ({ sha256: row.sha256, tenantId: Number(row.tenantId) }));
}
