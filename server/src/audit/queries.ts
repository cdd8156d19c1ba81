import type { Insertable, Selectable } from 'kysely';
import { sql } from 'kysely';
import type { Db } from '../db/database';
import { JsonObject, parseJsonColumn } from '../db/jsonColumn';
import type { ContractAuditEventsTable } from '../db/schema';
import type { AuditSubject } from './subject';

/**
 * An event of either trail, read alike: the subject's id as `subject_id`; dossier events have
 * no signer column (their signers are accounts), read as null.
 */
export type AuditEventRow = Omit<Selectable<ContractAuditEventsTable>, 'contract_id'> & {
  subject_id: number;
};

/** An event's `details`: the JSON object of facts it was appended with. */
export function auditDetailsOf(event: Pick<AuditEventRow, 'details'>): Record<string, unknown> {
  return parseJsonColumn(JsonObject, 'audit event details', event.details);
}

export type AuditEventValues = Omit<Insertable<ContractAuditEventsTable>, 'contract_id' | 'id'>;

const eventColumns = [
  'id',
  'seq',
  'action',
  'at',
  'actor_kind',
  'actor_user_id',
  'actor_name',
  'client_address',
  'user_agent',
  'details',
  'prev_hash',
  'hash',
] as const;

/** Every event of the subject's trail, oldest first. */
export function auditEventsOf(db: Db, subject: AuditSubject): Promise<AuditEventRow[]> {
  if (subject.kind === 'contract') {
    return db
      .selectFrom('contract_audit_events')
      .select([...eventColumns, 'actor_signer_id', 'contract_id as subject_id'])
      .where('contract_id', '=', subject.id)
      .orderBy('seq')
      .execute();
  }
  return db
    .selectFrom('dossier_audit_events')
    .select([
      ...eventColumns,
      sql<number | null>`NULL`.as('actor_signer_id'),
      'dossier_id as subject_id',
    ])
    .where('dossier_id', '=', subject.id)
    .orderBy('seq')
    .execute();
}

/** The newest event's seq and hash (the chain's head), or undefined for none. */
export function lastAuditEvent(
  trx: Db,
  subject: AuditSubject,
): Promise<Pick<AuditEventRow, 'seq' | 'hash'> | undefined> {
  if (subject.kind === 'contract') {
    return trx
      .selectFrom('contract_audit_events')
      .select(['seq', 'hash'])
      .where('contract_id', '=', subject.id)
      .orderBy('seq', 'desc')
      .limit(1)
      .executeTakeFirst();
  }
  return trx
    .selectFrom('dossier_audit_events')
    .select(['seq', 'hash'])
    .where('dossier_id', '=', subject.id)
    .orderBy('seq', 'desc')
    .limit(1)
    .executeTakeFirst();
}

/** Writes the event and moves the subject's head to its hash. */
export async function insertAuditEvent(
  trx: Db,
  subject: AuditSubject,
  values: AuditEventValues,
): Promise<void> {
  if (subject.kind === 'contract') {
    await trx
      .insertInto('contract_audit_events')
      .values({ ...values, contract_id: subject.id })
      .execute();
    await trx
      .updateTable('contracts')
      .set({ audit_head: values.hash })
      .where('id', '=', subject.id)
      .execute();
    return;
  }
  const { actor_signer_id, actor_kind, ...rest } = values;
  if (actor_kind === 'signer' || (actor_signer_id ?? null) !== null) {
    throw new Error('A dossier audit event names its actor by account, not by contract signer');
  }
  await trx
    .insertInto('dossier_audit_events')
    .values({ ...rest, actor_kind, dossier_id: subject.id })
    .execute();
  await trx
    .updateTable('dossiers')
    .set({ audit_head: values.hash })
    .where('id', '=', subject.id)
    .execute();
}

/** The head the subject repeats, or undefined when the subject does not exist. */
export async function auditHeadOf(db: Db, subject: AuditSubject): Promise<string | undefined> {
  const row =
    subject.kind === 'contract'
      ? await db
          .selectFrom('contracts')
          .select('audit_head')
          .where('id', '=', subject.id)
          .executeTakeFirst()
      : await db
          .selectFrom('dossiers')
          .select('audit_head')
          .where('id', '=', subject.id)
          .executeTakeFirst();
  return row?.audit_head;
}

/** For `admin audit verify`: the subject by its public id (the API's uuid), any tenant. */
export async function subjectByUuid(
  db: Db,
  kind: AuditSubject['kind'],
  uuid: string,
): Promise<AuditSubject | undefined> {
  const row =
    kind === 'contract'
      ? await db.selectFrom('contracts').select('id').where('uuid', '=', uuid).executeTakeFirst()
      : await db.selectFrom('dossiers').select('id').where('uuid', '=', uuid).executeTakeFirst();
  return row ? { kind, id: row.id } : undefined;
}
