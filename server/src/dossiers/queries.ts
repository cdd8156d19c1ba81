import crypto from 'node:crypto';
import { type ExpressionBuilder, type Insertable, type Selectable, sql } from 'kysely';
import type { Db } from '../db/database';
import { isUniqueViolation } from '../db/dialect';
import { queryShape } from '../db/queryShape';
import type {
  Database,
  DossierStatus,
  DossiersTable,
  SignType,
  StepKind,
  TurnStatus,
  UserType,
} from '../db/schema';
import { plainMatches } from '../directory/queries/search';
import { DomainError } from '../errors/domainError';
import { filesWithNewestVersion, type NewestFile } from '../files/queries';
import type { PlannedTurn } from './signers';
import type { SourceFile } from './sourceFiles';

/** SQL of the dossier domain: creation writes, the reads of lookups and the caller's scope. */

export function duplicateDocumentId(documentId: string): DomainError {
  return new DomainError(
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

/** The unique index `dossiers_document_id` refused the row: another creation committed first. */
const documentIdIndex = { index: 'dossiers_document_id', columns: 'dossiers.document_id' };

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
    if (isUniqueViolation(error, documentIdIndex)) throw duplicateDocumentId(row.document_id ?? '');
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
  stepPosition: number;
  signType: SignType;
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
  /** The name submitted for a guest, else the assignee's (the web app's pages show it). */
  signerFullName: string | null;
  assigneeName: string | null;
  actorName: string | null;
}

/** Every turn of a dossier in signing order (step, then turn order). */
const turnsOfDossier = queryShape((db: Db, values: { dossierId: number }) =>
  db
    .selectFrom('turns as t')
    .innerJoin('process_steps as s', 's.id', 't.step_id')
    .leftJoin('roles as r', 'r.id', 's.role_id')
    .leftJoin('users as assignee', 'assignee.id', 't.assignee_user_id')
    .leftJoin('users as actor', 'actor.id', 't.acted_by_user_id')
    .where('t.dossier_id', '=', values.dossierId)
    .orderBy('t.step_position')
    .orderBy('t.turn_order')
    .select([
      's.step_code as stepCode',
      's.name as stepName',
      's.kind as stepKind',
      's.position as stepPosition',
      's.sign_type as signType',
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
      't.signer_full_name as signerFullName',
      'assignee.name as assigneeName',
      'actor.name as actorName',
    ]),
);

export function dossierTurns(db: Db, dossierId: number): Promise<TurnView[]> {
  return turnsOfDossier.all(db, { dossierId });
}

export function dossierById(db: Db, dossierId: number) {
  return db
    .selectFrom('dossiers')
    .selectAll()
    .where('id', '=', dossierId)
    .executeTakeFirstOrThrow();
}

/** The organization and tenant a partner-token caller sits in, and whether it is an outside signer. */
export function creatorPlacement(
  db: Db,
  userId: number,
): Promise<{ tenant_id: number | null; organization_id: number | null; type: UserType }> {
  return db
    .selectFrom('users')
    .select(['tenant_id', 'organization_id', 'type'])
    .where('id', '=', userId)
    .executeTakeFirstOrThrow();
}

/**
 * The accounts whose login name or e-mail is `key` (folded) and that an outside signer of the
 * tenant must not clash with: the tenant's own accounts and internal accounts of any tenant (their
 * login names and e-mails are unique in the whole system). Login-name matches first.
 */
export function signerLoginHolders(
  db: Db,
  tenantId: number,
  key: string,
): Promise<{ id: number; tenant_id: number | null; type: UserType }[]> {
  return db
    .selectFrom('users')
    .select(['id', 'tenant_id', 'type'])
    .where((eb) => eb.or([eb('username_key', '=', key), eb('email_key', '=', key)]))
    .where((eb) => eb.or([eb('tenant_id', '=', tenantId), eb('type', '=', 'internal')]))
    .orderBy((eb) => eb.case().when('username_key', '=', key).then(0).else(1).end())
    .orderBy('id')
    .execute();
}

export type DossierRow = Selectable<DossiersTable>;

/**
 * Which dossiers a caller of the integration API may see. An organization key sees its
 * organization's dossiers (its bound user is the actor). A user token sees, in the user's
 * tenant, the dossiers of organizations the user belongs to and those the user takes part in
 * (turn assignee or actor, holder of a turn's role, creator): an external signer only the latter.
 */
export interface DossierScope {
  tenantId: number;
  userId: number;
  /** Set for organization keys: only this organization. */
  organizationId: number | null;
  /** Organizations the user belongs to (user tokens). */
  memberOrganizationIds: number[];
  /** Roles the user holds (user tokens), for role-based turns. */
  roleIds: number[];
}

/** The (organization, role) pairs a user holds, which widen its dossier scope. */
export function scopeMemberships(
  db: Db,
  userId: number,
): Promise<{ organization_id: number; role_id: number }[]> {
  return db
    .selectFrom('memberships')
    .select(['organization_id', 'role_id'])
    .where('user_id', '=', userId)
    .execute();
}

/** The WHERE condition "dossier `d` is in scope", for queries that alias dossiers as `d`. */
export function dossierInScope(scope: DossierScope) {
  return (eb: ExpressionBuilder<Database & { d: DossiersTable }, 'd'>) => {
    const tenant = eb('d.tenant_id', '=', scope.tenantId);
    if (scope.organizationId !== null) {
      return eb.and([tenant, eb('d.organization_id', '=', scope.organizationId)]);
    }
    const participates = eb.exists(
      eb
        .selectFrom('turns as scope_turn')
        .select('scope_turn.id')
        .whereRef('scope_turn.dossier_id', '=', 'd.id')
        .where((inner) =>
          inner.or([
            inner('scope_turn.assignee_user_id', '=', scope.userId),
            inner('scope_turn.acted_by_user_id', '=', scope.userId),
            ...(scope.roleIds.length > 0 ? [inner('scope_turn.role_id', 'in', scope.roleIds)] : []),
          ]),
        ),
    );
    return eb.and([
      tenant,
      eb.or([
        eb('d.created_by_user_id', '=', scope.userId),
        ...(scope.memberOrganizationIds.length > 0
          ? [eb('d.organization_id', 'in', scope.memberOrganizationIds)]
          : []),
        participates,
      ]),
    ]);
  };
}

/** The newest dossier with this documentId in the scope (documentIds repeat across organizations). */
const dossierOfDocumentId = queryShape((db: Db, values: DossierScope & { documentId: string }) =>
  db
    .selectFrom('dossiers as d')
    .selectAll('d')
    .where('d.document_id', '=', values.documentId)
    .where(dossierInScope(values))
    .orderBy('d.id', 'desc')
    .limit(1),
);

export function scopedDossierByDocumentId(
  db: Db,
  scope: DossierScope,
  documentId: string,
): Promise<DossierRow | undefined> {
  const { tenantId, userId, organizationId, memberOrganizationIds, roleIds } = scope;
  return dossierOfDocumentId.first(db, {
    tenantId,
    userId,
    organizationId,
    memberOrganizationIds,
    roleIds,
    documentId,
  });
}

/** The file with this uuid if its dossier is in the caller's scope (else undefined: 404). */
export function fileInScope(
  db: Db,
  scope: DossierScope,
  fileUuid: string,
): Promise<NewestFile | undefined> {
  return filesWithNewestVersion(db)
    .innerJoin('dossiers as d', 'd.id', 'f.dossier_id')
    .where('f.uuid', '=', fileUuid)
    .where(dossierInScope(scope))
    .executeTakeFirst();
}

/** The dossier with this numeric id (folderId) if it is in the caller's scope (else undefined: 404). */
export function scopedDossierById(
  db: Db,
  scope: DossierScope,
  dossierId: number,
): Promise<DossierRow | undefined> {
  return db
    .selectFrom('dossiers as d')
    .selectAll('d')
    .where('d.id', '=', dossierId)
    .where(dossierInScope(scope))
    .executeTakeFirst();
}

/** The filters of a dossier list, validated (dossiers/schemas.ts DossierListQuery). */
export interface DossierRowFilter {
  status?: DossierStatus | undefined;
  fromDate?: string | undefined;
  toDate?: string | undefined;
  documentId?: string | undefined;
  keyword?: string | undefined;
}

/** A row of the dossier list. */
export interface DossierListRow {
  id: number;
  uuid: string;
  document_id: string | null;
  title: string;
  status: DossierStatus;
  signed_count: number;
  required_count: number;
  created_at: string;
  completed_at: string | null;
  process_name: string;
}

/**
 * One page of the dossiers in the caller's scope that match the filters, newest first
 * (created_at, then id), and how many match, counted up to `countCap` + 1. Both walk
 * dossiers_tenant_created newest first and stop when they have enough: an exact count of a
 * wide scope reads every dossier of the tenant (40 ms at 100k for a member of the root
 * organization, 190 ms for someone who only takes part in 5,000), a capped one a thousand.
 * `keyword` matches the folded title (search_key, as the task list's keyword) or the documentId.
 */
export async function dossierListPage(
  db: Db,
  scope: DossierScope,
  filter: DossierRowFilter,
  paging: { page: number; pageSize: number },
  countCap: number,
): Promise<{ counted: number; rows: DossierListRow[] }> {
  const filtered = db
    .selectFrom('dossiers as d')
    .where(dossierInScope(scope))
    .$if(filter.status !== undefined, (query) => query.where('d.status', '=', filter.status!))
    .$if(filter.fromDate !== undefined, (query) =>
      query.where('d.created_at', '>=', filter.fromDate!),
    )
    .$if(filter.toDate !== undefined, (query) => query.where('d.created_at', '<=', filter.toDate!))
    .$if(filter.documentId !== undefined, (query) =>
      query.where('d.document_id', '=', filter.documentId!),
    )
    .$if(filter.keyword !== undefined, (query) =>
      query.where((eb) =>
        eb.or([
          plainMatches('d.search_key', filter.keyword!),
          plainMatches(sql`lower(${sql.ref('d.document_id')})`, filter.keyword!),
        ]),
      ),
    );
  const { counted } = await db
    .selectFrom(
      filtered
        .select('d.id')
        .limit(countCap + 1)
        .as('matches'),
    )
    .select((eb) => eb.fn.countAll<number>().as('counted'))
    .executeTakeFirstOrThrow();
  const rows = await filtered
    .innerJoin('processes as p', 'p.id', 'd.process_id')
    .select([
      'd.id',
      'd.uuid',
      'd.document_id',
      'd.title',
      'd.status',
      'd.signed_count',
      'd.required_count',
      'd.created_at',
      'd.completed_at',
      'p.name as process_name',
    ])
    .orderBy('d.created_at', 'desc')
    .orderBy('d.id', 'desc')
    .limit(paging.pageSize + 1)
    .offset((paging.page - 1) * paging.pageSize)
    .execute();
  return { counted: Number(counted), rows };
}

/** The step each of these dossiers waits on (its open task), with that task's deadline. */
export function openStepsOf(
  db: Db,
  dossierIds: number[],
): Promise<{ task_id: number; dossier_id: number; step_name: string; expire_at: string | null }[]> {
  if (dossierIds.length === 0) return Promise.resolve([]);
  return db
    .selectFrom('tasks as t')
    .innerJoin('process_steps as s', 's.id', 't.step_id')
    .select(['t.id as task_id', 't.dossier_id', 's.name as step_name', 't.expire_at'])
    .where('t.dossier_id', 'in', dossierIds)
    .where('t.status', '=', 1)
    .execute();
}

/** The process of a dossier, by name, for its page. */
export function processNameOf(db: Db, processId: number): Promise<string> {
  return db
    .selectFrom('processes')
    .select('name')
    .where('id', '=', processId)
    .executeTakeFirstOrThrow()
    .then((row) => row.name);
}

/**
 * The dossiers of one state in the scope, at most `cap` of them, to be counted (the dashboard
 * says "cap or more" rather than walk a whole state). Reads the state's range of
 * dossiers_tenant_status (tenant_id, status, organization_id, created_by_user_id): organization
 * and creator come from the index; only rows neither decides probe their turns.
 */
export function dossiersOfStatus(
  db: Db,
  scope: DossierScope,
  status: DossiersTable['status'],
  cap: number,
) {
  const matches = db
    .selectFrom('dossiers as d')
    .select('d.id')
    .where('d.tenant_id', '=', scope.tenantId)
    .where('d.status', '=', status)
    .where(dossierInScope(scope))
    .limit(cap);
  return db.selectFrom(matches.as('m')).select((eb) => eb.fn.countAll<number>().as('count'));
}
