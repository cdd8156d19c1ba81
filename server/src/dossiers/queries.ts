import crypto from 'node:crypto';
import type { Insertable } from 'kysely';
import type { Db } from '../db/database';
import type { DossiersTable, StepKind, TurnStatus } from '../db/schema';
import { ApiError } from '../errors/apiError';
import type { PlannedTurn } from './signers';
import type { SourceFile } from './sourceFiles';

/** SQL of the dossier domain: creation writes and the reads of lookups. */

export function duplicateDocumentId(documentId: string): ApiError {
  return new ApiError(
    409,
    'DUPLICATE_DOCUMENT_ID',
    `documentId ${documentId} is already used in the organization`,
    { field: 'documentId' },
  );
}

export async function documentIdTaken(
  db: Db,
  organizationId: number,
  documentId: string,
): Promise<boolean> {
  const row = await db
    .selectFrom('dossiers')
    .select('id')
    .where('organization_id', '=', organizationId)
    .where('document_id', '=', documentId)
    .executeTakeFirst();
  return row !== undefined;
}

/**
 * The unique index `dossiers_document_id` refused the row: another creation with the same
 * documentId committed first. (better-sqlite3's error shape; the PostgreSQL dialect would match
 * its own unique-violation code here.)
 */
function isDocumentIdViolation(error: unknown): boolean {
  const { code, message } = error as { code?: unknown; message?: unknown };
  return (
    code === 'SQLITE_CONSTRAINT_UNIQUE' &&
    typeof message === 'string' &&
    message.includes('dossiers.document_id')
  );
}

/** Inserts the dossier; a documentId committed meanwhile by another request gives 409. */
export async function insertDossier(trx: Db, row: Insertable<DossiersTable>): Promise<number> {
  try {
    const inserted = await trx
      .insertInto('dossiers')
      .values(row)
      .returning('id')
      .executeTakeFirstOrThrow();
    return inserted.id;
  } catch (error) {
    if (isDocumentIdViolation(error)) throw duplicateDocumentId(row.document_id ?? '');
    throw error;
  }
}

/** One dossier_files row and its version 1 per stored file. */
export async function insertFiles(
  trx: Db,
  dossierId: number,
  organizationId: number,
  files: SourceFile[],
  now: string,
): Promise<void> {
  for (const file of files) {
    const row = await trx
      .insertInto('dossier_files')
      .values({
        uuid: crypto.randomUUID(),
        dossier_id: dossierId,
        organization_id: organizationId,
        kind: file.kind,
        position: file.position,
        title: file.title,
        ecm_class_code: file.ecmClassCode,
        mime_type: file.mimeType,
        created_at: now,
      })
      .returning('id')
      .executeTakeFirstOrThrow();
    await trx
      .insertInto('file_versions')
      .values({
        file_id: row.id,
        version: 1,
        sha256: file.stored.sha256,
        size: file.stored.size,
        created_at: now,
      })
      .execute();
  }
}

/**
 * The turns of a new dossier, all WAITING with no task yet (the workflow opens steps):
 * `assigneeUserId` is the outside signer's account or the internal user; a role turn has none
 * and carries the step's role, so every holder sees it until the first who acts takes it.
 */
export async function insertTurns(
  trx: Db,
  dossierId: number,
  turns: { planned: PlannedTurn; assigneeUserId: number | null }[],
): Promise<void> {
  if (turns.length === 0) return;
  await trx
    .insertInto('turns')
    .values(
      turns.map(({ planned, assigneeUserId }) => ({
        dossier_id: dossierId,
        step_id: planned.step.id,
        step_position: planned.step.position,
        turn_order: planned.turnOrder,
        task_id: null,
        status: 'WAITING' as const,
        signer_full_name: planned.signer.fullName,
        signer_email: planned.signer.email,
        signer_phone: planned.signer.phone,
        signer_identity_number: planned.signer.identityNumber,
        signer_tax_code: planned.signer.taxCode,
        assignee_user_id: assigneeUserId,
        role_id: planned.assignee.kind === 'role' ? planned.assignee.roleId : null,
      })),
    )
    .execute();
}

/** A turn as lookups show it, with its step, role and the users behind it. */
export interface TurnView {
  stepCode: string;
  stepName: string;
  stepKind: StepKind;
  status: TurnStatus;
  actedAt: string | null;
  signerEmail: string | null;
  signerPhone: string | null;
  signerIdentityNumber: string | null;
  signerTaxCode: string | null;
  assigneeUsername: string | null;
  actorUsername: string | null;
  roleCode: string | null;
  roleName: string | null;
}

/** Every turn of a dossier in signing order (step, then turn order). */
export function dossierTurns(db: Db, dossierId: number): Promise<TurnView[]> {
  return db
    .selectFrom('turns as t')
    .innerJoin('process_steps as s', 's.id', 't.step_id')
    .leftJoin('roles as r', 'r.id', 's.role_id')
    .leftJoin('users as assignee', 'assignee.id', 't.assignee_user_id')
    .leftJoin('users as actor', 'actor.id', 't.acted_by_user_id')
    .where('t.dossier_id', '=', dossierId)
    .orderBy('t.step_position')
    .orderBy('t.turn_order')
    .select([
      's.step_code as stepCode',
      's.name as stepName',
      's.kind as stepKind',
      't.status as status',
      't.acted_at as actedAt',
      't.signer_email as signerEmail',
      't.signer_phone as signerPhone',
      't.signer_identity_number as signerIdentityNumber',
      't.signer_tax_code as signerTaxCode',
      'assignee.username as assigneeUsername',
      'actor.username as actorUsername',
      'r.code as roleCode',
      'r.name as roleName',
    ])
    .execute();
}

export function dossierById(db: Db, dossierId: number) {
  return db
    .selectFrom('dossiers')
    .selectAll()
    .where('id', '=', dossierId)
    .executeTakeFirstOrThrow();
}
