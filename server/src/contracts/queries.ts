import { type Insertable, type Selectable, sql, type Updateable } from 'kysely';
import type { Db } from '../db/database';
import { parseJsonColumn } from '../db/jsonColumn';
import type {
  ContractFileVersionsTable,
  ContractSignersTable,
  ContractStatus,
  ContractsTable,
  ContractTypesTable,
} from '../db/schema';
import { SignaturePlacement } from './schemas';

export type ContractRow = Selectable<ContractsTable>;
export type ContractSignerRow = Selectable<ContractSignersTable>;

/** `contract_signers.placement`: the signer's box as contract creation accepted it, or null. */
export function placementOf(
  signer: Pick<ContractSignerRow, 'placement'>,
): SignaturePlacement | null {
  return signer.placement === null
    ? null
    : parseJsonColumn(SignaturePlacement, 'contract_signers.placement', signer.placement);
}
export type ContractFileVersionRow = Selectable<ContractFileVersionsTable>;
export type ContractTypeRow = Selectable<ContractTypesTable>;

// --- Contract types ---------------------------------------------------------------------------

export function contractTypeByNumber(
  db: Db,
  tenantId: number,
  typeNumber: number,
): Promise<ContractTypeRow | undefined> {
  return db
    .selectFrom('contract_types')
    .selectAll()
    .where('tenant_id', '=', tenantId)
    .where('type_number', '=', typeNumber)
    .executeTakeFirst();
}

export function contractTypeById(db: Db, id: number): Promise<ContractTypeRow | undefined> {
  return db.selectFrom('contract_types').selectAll().where('id', '=', id).executeTakeFirst();
}

export function contractTypeByName(
  db: Db,
  tenantId: number,
  name: string,
): Promise<ContractTypeRow | undefined> {
  return db
    .selectFrom('contract_types')
    .selectAll()
    .where('tenant_id', '=', tenantId)
    .where('name', '=', name)
    .executeTakeFirst();
}

/** Inserts the tenant's next type number (call inside a transaction). */
export async function insertContractType(
  trx: Db,
  tenantId: number,
  name: string,
  createdAt: string,
): Promise<ContractTypeRow> {
  const { highest } = await trx
    .selectFrom('contract_types')
    .select(({ fn }) => fn.max('type_number').as('highest'))
    .where('tenant_id', '=', tenantId)
    .executeTakeFirstOrThrow();
  return trx
    .insertInto('contract_types')
    .values({
      tenant_id: tenantId,
      type_number: (highest ?? 0) + 1,
      name,
      created_at: createdAt,
    })
    .returningAll()
    .executeTakeFirstOrThrow();
}

export function listContractTypes(
  db: Db,
  tenantId?: number,
): Promise<(ContractTypeRow & { tenant_code: string })[]> {
  return db
    .selectFrom('contract_types as t')
    .innerJoin('tenants as n', 'n.id', 't.tenant_id')
    .selectAll('t')
    .select('n.code as tenant_code')
    .$if(tenantId !== undefined, (query) => query.where('t.tenant_id', '=', tenantId!))
    .orderBy('t.tenant_id')
    .orderBy('t.type_number')
    .execute();
}

// --- Contracts --------------------------------------------------------------------------------

export async function insertContract(
  trx: Db,
  values: Insertable<ContractsTable>,
): Promise<ContractRow> {
  return trx.insertInto('contracts').values(values).returningAll().executeTakeFirstOrThrow();
}

export async function insertSigners(
  trx: Db,
  rows: Insertable<ContractSignersTable>[],
): Promise<void> {
  if (rows.length > 0) await trx.insertInto('contract_signers').values(rows).execute();
}

export async function insertFileVersion(
  trx: Db,
  values: Insertable<ContractFileVersionsTable>,
): Promise<void> {
  await trx.insertInto('contract_file_versions').values(values).execute();
}

/** Who may see a contract: the tenant, and the creator unless every contract may be seen. */
export interface ContractScope {
  tenantId: number;
  /** Only contracts created by this user; null with `contract:view-all`. */
  ownerUserId: number | null;
}

export function contractByUuid(
  db: Db,
  scope: ContractScope,
  uuid: string,
): Promise<ContractRow | undefined> {
  return db
    .selectFrom('contracts')
    .selectAll()
    .where('uuid', '=', uuid)
    .where('tenant_id', '=', scope.tenantId)
    .$if(scope.ownerUserId !== null, (query) =>
      query.where('created_by_user_id', '=', scope.ownerUserId!),
    )
    .executeTakeFirst();
}

export function contractById(db: Db, id: number): Promise<ContractRow | undefined> {
  return db.selectFrom('contracts').selectAll().where('id', '=', id).executeTakeFirst();
}

/**
 * Moves a contract from one of `from` to new values; returns false (changing nothing) when its
 * status is no longer one of `from`, so two concurrent transitions cannot both happen.
 */
export async function transitionContract(
  trx: Db,
  id: number,
  from: readonly ContractStatus[],
  values: Updateable<ContractsTable>,
): Promise<boolean> {
  const result = await trx
    .updateTable('contracts')
    .set(values)
    .where('id', '=', id)
    .where('status', 'in', from)
    .executeTakeFirst();
  return Number(result.numUpdatedRows) === 1;
}

export function signersOf(db: Db, contractId: number): Promise<ContractSignerRow[]> {
  return db
    .selectFrom('contract_signers')
    .selectAll()
    .where('contract_id', '=', contractId)
    .orderBy('signing_order')
    .orderBy('position')
    .execute();
}

export function signersOfMany(db: Db, contractIds: number[]): Promise<ContractSignerRow[]> {
  if (contractIds.length === 0) return Promise.resolve([]);
  return db
    .selectFrom('contract_signers')
    .selectAll()
    .where('contract_id', 'in', contractIds)
    .orderBy('contract_id')
    .orderBy('signing_order')
    .orderBy('position')
    .execute();
}

export async function updateSigner(
  trx: Db,
  id: number,
  values: Updateable<ContractSignersTable>,
): Promise<void> {
  await trx.updateTable('contract_signers').set(values).where('id', '=', id).execute();
}

/** The signer whose invitation token hashes to `tokenHash` (the signing page). */
export function signerByInvitation(
  db: Db,
  tokenHash: string,
): Promise<ContractSignerRow | undefined> {
  return db
    .selectFrom('contract_signers')
    .selectAll()
    .where('invitation_token_hash', '=', tokenHash)
    .executeTakeFirst();
}

/** Version 1 (the original) or the newest version of a contract's file. */
export function fileVersion(
  db: Db,
  contractId: number,
  which: 'original' | 'newest',
): Promise<ContractFileVersionRow | undefined> {
  return db
    .selectFrom('contract_file_versions')
    .selectAll()
    .where('contract_id', '=', contractId)
    .orderBy('version', which === 'original' ? 'asc' : 'desc')
    .limit(1)
    .executeTakeFirst();
}

/** The versions signatures added (2, 3, …), oldest first: signature n of the file is row n. */
export function signedVersionsOf(db: Db, contractId: number): Promise<ContractFileVersionRow[]> {
  return db
    .selectFrom('contract_file_versions')
    .selectAll()
    .where('contract_id', '=', contractId)
    .where('version', '>', 1)
    .orderBy('version')
    .execute();
}

// --- The list ---------------------------------------------------------------------------------

export type ContractSortKey = 'createdAt' | 'title' | 'expiredAt' | 'status';

const sortColumns = {
  createdAt: 'created_at',
  title: 'search_key',
  expiredAt: 'expired_at',
  status: 'status',
} as const satisfies Record<ContractSortKey, keyof ContractsTable>;

export interface ContractListFilter {
  page: number;
  limit: number;
  status?: ContractStatus | undefined;
  /** Already folded like `search_key`. */
  searchKey?: string | undefined;
  fromDate?: string | undefined;
  toDate?: string | undefined;
  sortBy: ContractSortKey;
  order: 'ASC' | 'DESC';
}

/** One page of the contracts in scope, and how many match. Ties keep creation order. */
export async function listContracts(
  db: Db,
  scope: ContractScope,
  filter: ContractListFilter,
): Promise<{ total: number; rows: ContractRow[] }> {
  const filtered = db
    .selectFrom('contracts')
    .where('tenant_id', '=', scope.tenantId)
    .$if(scope.ownerUserId !== null, (query) =>
      query.where('created_by_user_id', '=', scope.ownerUserId!),
    )
    .$if(filter.status !== undefined, (query) => query.where('status', '=', filter.status!))
    .$if(filter.searchKey !== undefined, (query) =>
      query.where(
        sql<boolean>`search_key LIKE ${`%${filter.searchKey!.replace(/[\\%_]/g, (c) => `\\${c}`)}%`} ESCAPE '\\'`,
      ),
    )
    .$if(filter.fromDate !== undefined, (query) =>
      query.where('created_at', '>=', filter.fromDate!),
    )
    .$if(filter.toDate !== undefined, (query) => query.where('created_at', '<=', filter.toDate!));
  const { total } = await filtered
    .select(sql<number>`count(*)`.as('total'))
    .executeTakeFirstOrThrow();
  const direction = filter.order === 'ASC' ? 'asc' : 'desc';
  const rows = await filtered
    .selectAll()
    .orderBy(sortColumns[filter.sortBy], direction)
    .orderBy('id', direction)
    .limit(filter.limit)
    .offset((filter.page - 1) * filter.limit)
    .execute();
  return { total: Number(total), rows };
}

// --- Expiry -----------------------------------------------------------------------------------

/** Ids of draft or signing contracts whose deadline is at or before `now`. */
export function overdueContracts(db: Db, now: string, limit: number): Promise<{ id: number }[]> {
  return db
    .selectFrom('contracts')
    .select('id')
    .where('status', 'in', ['draft', 'signing'])
    .where('expired_at', '<=', now)
    .orderBy('expired_at')
    .limit(limit)
    .execute();
}

// --- The web application's dashboard ----------------------------------------------------------

/**
 * Contracts `userId` created in the tenant that are being signed (sent, waiting for signers).
 * Reads the partial index contracts_creator_signing (created_by_user_id, expired_at) WHERE
 * status = 'signing'.
 */
function awaitingOthers(db: Db, owner: { tenantId: number; userId: number }) {
  return db
    .selectFrom('contracts')
    .where('created_by_user_id', '=', owner.userId)
    .where('status', '=', 'signing')
    .where('tenant_id', '=', owner.tenantId);
}

/** How many contracts `userId` created wait for others (the index alone). */
export function countContractsAwaitingOthers(db: Db, owner: { tenantId: number; userId: number }) {
  return awaitingOthers(db, owner).select(sql<number>`count(*)`.as('total'));
}

/** The first `limit` of them, closest deadline first (the index's own order). */
export function contractsAwaitingOthers(
  db: Db,
  owner: { tenantId: number; userId: number },
  limit: number,
) {
  return awaitingOthers(db, owner).selectAll().orderBy('expired_at').orderBy('id').limit(limit);
}

/** The acts of a person on contracts that their recent activity lists. */
export const recentContractActions = ['created', 'sent', 'cancelled', 'invitation_resent'] as const;

/**
 * A person's own recent acts on the contracts of `scope` (created, sent, cancelled, invitation
 * sent again), newest first, at most `limit`. Reads the partial index
 * contract_audit_events_actor (actor_user_id, at), whose condition the query repeats, then each
 * event's contract by primary key.
 */
export function recentContractEventsBy(
  db: Db,
  userId: number,
  scope: ContractScope,
  limit: number,
) {
  return (
    db
      .selectFrom('contract_audit_events as e')
      .innerJoin('contracts as c', 'c.id', 'e.contract_id')
      .select(['e.id', 'e.action', 'e.at', 'c.uuid', 'c.title'])
      .where('e.actor_user_id', '=', userId)
      // Literals, not bound values: SQLite uses a partial index only for a condition it can read.
      .where(
        sql<boolean>`e.action IN (${sql.join(recentContractActions.map((action) => sql.lit(action)))})`,
      )
      .where('c.tenant_id', '=', scope.tenantId)
      .$if(scope.ownerUserId !== null, (query) =>
        query.where('c.created_by_user_id', '=', scope.ownerUserId!),
      )
      .orderBy('e.at', 'desc')
      .orderBy('e.id', 'desc')
      .limit(limit)
  );
}
