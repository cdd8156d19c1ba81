import crypto from 'node:crypto';
import type { z } from '@hono/zod-openapi';
import { appendAuditEvent } from '../audit/chain';
import { userActor } from '../audit/origin';
import { type AuditOrigin, dossierTrail } from '../audit/subject';
import { requireActor } from '../auth/authenticate';
import type { AppDeps, Principal } from '../context';
import { type Db, inTransaction } from '../db/database';
import { DomainError } from '../errors/domainError';
import { dossierFiles } from '../files/queries';
import { isoNow } from '../platform/clock';
import { type LoadedProcess, loadProcess } from '../processes/queries';
import { tenantCodeOf } from '../tenancy/queries';
import { startWorkflow } from '../workflow/lifecycle';
import { dossierMetadataOf } from '../workflow/queries/dossiers';
import { fileItems, toFileItem } from './fileItems';
import { guestAccountId } from './guestAccounts';
import { dossierIdentity } from './identity';
import {
  creatorPlacement,
  documentIdTaken,
  dossierById,
  dossierListPage,
  dossierTurns,
  duplicateDocumentId,
  insertDossier,
  insertFiles,
  insertTurns,
  openStepsOf,
  processNameOf,
  type TurnView,
} from './queries';
import {
  type DossierCreated,
  type DossierCreateInput,
  type DossierFileList,
  type DossierListFilter,
  type DossierLookup,
  type DossierStarted,
  dossierPageSize,
  type FileInputValue,
  type SignerView,
} from './schemas';
import { dossierByDocumentId, dossierInScopeById, scopeOf } from './scope';
import { type PlannedTurn, planTurns } from './signers';
import {
  discardFiles,
  type FileRequest,
  keepFiles,
  type SourceFile,
  storeFiles,
} from './sourceFiles';

/** Who creates: the organization (and tenant) the dossier belongs to and the acting user. */
interface Creator {
  tenantId: number;
  tenantCode: string;
  organizationId: number;
  userId: number;
  login: string;
}

/**
 * "Identify organization from the API key": an organization key's organization; with a partner
 * token, the organization the (internal) user sits in. Outside signers create nothing.
 */
async function creatorOf(db: Db, principal: Principal): Promise<Creator> {
  const actor = requireActor(principal);
  let tenantId: number | null;
  let organizationId: number | null;
  if (principal.kind === 'apiKey') {
    tenantId = principal.tenantId;
    organizationId = principal.organizationId;
  } else {
    const user = await creatorPlacement(db, actor.id);
    if (user.type === 'external') {
      throw new DomainError('FORBIDDEN', 'Outside signers cannot create dossiers');
    }
    tenantId = user.tenant_id;
    organizationId = user.organization_id;
  }
  if (tenantId === null || organizationId === null) {
    throw new DomainError('FORBIDDEN', 'The caller belongs to no organization');
  }
  const tenant = await tenantCodeOf(db, tenantId);
  return {
    tenantId,
    tenantCode: tenant.code,
    organizationId,
    userId: actor.id,
    login: actor.username,
  };
}

function processNotFound(code: string): DomainError {
  return new DomainError('PROCESS_NOT_FOUND', `No process ${code} in the organization`, {
    field: 'processDefCode',
  });
}

/**
 * The class rule for a signed (MAIN) file: with one class configured the file inherits it; with
 * two or more it must send `ecmClassCode` (422 MISSING_ECM_CLASS_CODE). A sent class is kept.
 */
function mainFileClass(process: LoadedProcess, input: FileInputValue, at: string): string | null {
  if (input.ecmClassCode !== undefined) return input.ecmClassCode;
  if (process.documentClasses.length <= 1) return process.documentClasses[0] ?? null;
  throw new DomainError(
    'MISSING_ECM_CLASS_CODE',
    `${at}.ecmClassCode is required: process ${process.process.code} signs ${process.documentClasses.join(', ')}`,
    { field: `${at}.ecmClassCode` },
  );
}

/** files[] then attachments[]; attachments keep what they send (no class rule, no inheritance). */
function fileRequests(process: LoadedProcess, input: DossierCreateInput): FileRequest[] {
  const main = input.files.map((file, index) => ({
    kind: 'MAIN' as const,
    position: index + 1,
    at: `files.${index}`,
    input: file,
    ecmClassCode: mainFileClass(process, file, `files.${index}`),
  }));
  const attachments = (input.attachments ?? []).map((file, index) => ({
    kind: 'ATTACHMENT' as const,
    position: index + 1,
    at: `attachments.${index}`,
    input: file,
    ecmClassCode: file.ecmClassCode ?? null,
  }));
  return [...main, ...attachments];
}

/** The one transaction of a creation: accounts, dossier, files, turns, then the workflow start. */
async function writeDossier(
  deps: AppDeps,
  creator: Creator,
  process: LoadedProcess,
  input: DossierCreateInput,
  turns: PlannedTurn[],
  files: SourceFile[],
  origin: AuditOrigin,
): Promise<number> {
  const now = isoNow(deps.clock);
  return inTransaction(deps.db, async (trx) => {
    const assigned: { planned: PlannedTurn; assigneeUserId: number | null }[] = [];
    for (const planned of turns) {
      const { assignee } = planned;
      const assigneeUserId =
        assignee.kind === 'user'
          ? assignee.userId
          : assignee.kind === 'guest'
            ? await guestAccountId(trx, creator.tenantId, assignee.account, now)
            : null;
      assigned.push({ planned, assigneeUserId });
    }
    const dossierId = await insertDossier(trx, {
      uuid: crypto.randomUUID(),
      tenant_id: creator.tenantId,
      organization_id: creator.organizationId,
      document_id: input.documentId,
      title: input.documentTitle ?? input.documentId,
      process_id: process.process.id,
      ecm_class_code: input.ecmClassCode ?? null,
      status: 'PENDING',
      transaction_id: null,
      metadata: JSON.stringify({ ...(input.metadata ?? {}), tenantCode: creator.tenantCode }),
      created_by_user_id: creator.userId,
      required_count: turns.length,
      created_at: now,
      updated_at: now,
    });
    await insertFiles(trx, dossierId, creator.organizationId, files, now);
    await insertTurns(trx, dossierId, assigned);
    await appendAuditEvent(trx, deps.clock, dossierTrail(dossierId), {
      action: 'created',
      actor: await userActor(trx, creator.userId, creator.login),
      origin,
      details: {
        documentId: input.documentId,
        title: input.documentTitle ?? input.documentId,
        processDefCode: process.process.code,
        files: files.map((file) => ({
          kind: file.kind,
          position: file.position,
          title: file.title,
          sha256: file.stored.sha256,
        })),
        signers: turns.length,
        started: !input.disableStart,
      },
    });
    if (!input.disableStart) await startWorkflow(trx, deps, dossierId);
    return dossierId;
  });
}

/**
 * Endpoint 1, in the spec's order: organization, idempotency on documentId (409), process, the
 * class rule, signers by stepCode, files (fetched or rendered before any write), then one
 * transaction writing everything and starting the workflow unless `disableStart`. Any failure
 * leaves no row and no stored file behind.
 */
export async function createDossier(
  deps: AppDeps,
  principal: Principal,
  input: DossierCreateInput,
  origin: AuditOrigin,
): Promise<z.output<typeof DossierCreated>> {
  const creator = await creatorOf(deps.db, principal);
  if (await documentIdTaken(deps.db, creator.organizationId, input.documentId)) {
    throw duplicateDocumentId(input.documentId);
  }
  const process = await loadProcess(deps.db, creator.organizationId, input.processDefCode);
  if (!process) throw processNotFound(input.processDefCode);
  const requests = fileRequests(process, input);
  const turns = await planTurns(
    deps.db,
    creator.tenantId,
    process.steps,
    input.signers,
    deps.logger,
  );
  if (turns.length === 0) {
    throw new DomainError('PROCESS_HAS_NO_STEPS', `Process ${process.process.code} has no steps`, {
      field: 'processDefCode',
    });
  }
  const files = await storeFiles(deps, creator.organizationId, requests);
  let dossierId: number;
  try {
    dossierId = await writeDossier(deps, creator, process, input, turns, files, origin);
  } catch (error) {
    await discardFiles(deps, files);
    throw error;
  }
  keepFiles(deps, files);
  const dossier = await dossierById(deps.db, dossierId);
  const items = await fileItems(deps, dossierId, { detailed: false });
  return {
    transactionId: dossier.transaction_id,
    documentId: input.documentId,
    documentTitle: dossier.title,
    folderId: dossier.id,
    documentUuid: dossier.uuid,
    files: items.files,
    attachments: items.attachments,
    status: dossier.status === 'PENDING' ? 'PENDING' : 'PENDING_SIGN',
    createdAt: dossier.created_at,
  };
}

/** Endpoint 2: PENDING → PENDING_SIGN and the first task; 404 unknown, 400 not PENDING. */
export async function startDossier(
  deps: AppDeps,
  principal: Principal,
  documentId: string,
  origin: AuditOrigin,
): Promise<z.output<typeof DossierStarted>> {
  const scope = await scopeOf(deps.db, principal);
  const found = await dossierByDocumentId(deps.db, scope, documentId);
  await inTransaction(deps.db, async (trx) => {
    // Read again under the write lock: a concurrent start may have won.
    const { status } = await dossierById(trx, found.id);
    if (status !== 'PENDING') {
      throw new DomainError(
        'DOSSIER_NOT_PENDING',
        `The dossier is ${status}; only a PENDING dossier (created with disableStart) can be started`,
      );
    }
    await startWorkflow(trx, deps, found.id);
    const actor = requireActor(principal);
    await appendAuditEvent(trx, deps.clock, dossierTrail(found.id), {
      action: 'sent',
      actor: await userActor(trx, actor.id, actor.username),
      origin,
    });
  });
  const dossier = await dossierById(deps.db, found.id);
  return {
    documentId,
    documentUuid: dossier.uuid,
    transactionId: dossier.transaction_id ?? '',
    status: 'PENDING_SIGN',
  };
}

/**
 * A signer of the lookup: SIGNED, REJECTED (as webhooks say), otherwise PENDING; identity fields
 * by step kind, never a numeric id.
 */
export function signerView(turn: TurnView): z.output<typeof SignerView> {
  const status =
    turn.status === 'SIGNED' ? 'SIGNED' : turn.status === 'REJECTED' ? 'REJECTED' : 'PENDING';
  const view: z.output<typeof SignerView> = {
    stepName: turn.stepName,
    stepCode: turn.stepCode,
    status,
    signedAt: status === 'SIGNED' ? turn.actedAt : null,
  };
  const present = (fields: Record<string, string | null>) => {
    for (const [name, value] of Object.entries(fields)) {
      if (value !== null) (view as Record<string, unknown>)[name] = value;
    }
  };
  switch (turn.stepKind) {
    case 'guest':
    case 'phone_guest':
      present({
        email: turn.signerEmail,
        phone: turn.signerPhone,
        identityNumber: turn.signerIdentityNumber,
        taxCode: turn.signerTaxCode,
      });
      break;
    case 'internal':
      present({ username: turn.assigneeUsername });
      break;
    case 'role':
      present({
        roleCode: turn.roleCode,
        roleName: turn.roleName,
        username: status === 'PENDING' ? null : turn.actorUsername,
      });
      break;
  }
  return view;
}

/** Endpoint 3: the dossier as it is now. */
export async function lookupDossier(
  deps: AppDeps,
  principal: Principal,
  documentId: string,
): Promise<z.output<typeof DossierLookup>> {
  const scope = await scopeOf(deps.db, principal);
  const dossier = await dossierByDocumentId(deps.db, scope, documentId);
  const items = await fileItems(deps, dossier.id, { detailed: true });
  const turns = await dossierTurns(deps.db, dossier.id);
  return {
    documentId,
    documentUuid: dossier.uuid,
    transactionId: dossier.transaction_id,
    status: dossier.status,
    signedCount: dossier.signed_count,
    requiredCount: dossier.required_count,
    files: items.files,
    attachments: items.attachments,
    signers: turns.map(signerView),
    metadata: dossierMetadataOf(dossier),
    createdAt: dossier.created_at,
    completedAt: dossier.completed_at,
  };
}

/** Endpoint 4: MAIN files and attachments with their details. */
export async function listDossierFiles(
  deps: AppDeps,
  principal: Principal,
  documentId: string,
): Promise<z.output<typeof DossierFileList>> {
  const scope = await scopeOf(deps.db, principal);
  const dossier = await dossierByDocumentId(deps.db, scope, documentId);
  const items = await fileItems(deps, dossier.id, { detailed: true });
  return { documentId, documentUuid: dossier.uuid, ...items };
}

/** A dossier as a row of a list: the lookup's counts and dates, its process and open step. */
export interface DossierListItem {
  folderId: number;
  /** Empty when the dossier was not created through the integration API. */
  documentId: string;
  documentUuid: string;
  documentTitle: string;
  processName: string;
  status: z.output<typeof DossierLookup>['status'];
  signedCount: number;
  requiredCount: number;
  createdAt: string;
  completedAt: string | null;
  /** The step the dossier waits on, with its deadline; null when none is open. */
  currentStep: { name: string; expireAt: string | null } | null;
}

/** Matches of a dossier list counted exactly up to this many; beyond, "more than" it. */
export const dossierCountCap = 1000;

/**
 * The dossiers the caller may see (the lookup's scope: dossiers/scope.ts), filtered as the
 * task list filters its records, newest first. `total` counts the matches up to
 * `dossierCountCap`; `more` says that more match than that; `next` that a next page exists.
 */
export async function listDossiers(
  deps: AppDeps,
  principal: Principal,
  filter: DossierListFilter,
): Promise<{
  items: DossierListItem[];
  page: number;
  pageSize: number;
  total: number;
  more: boolean;
  next: boolean;
}> {
  const scope = await scopeOf(deps.db, principal);
  const paging = { page: filter.page ?? 1, pageSize: filter.pageSize ?? dossierPageSize.default };
  const { counted, rows } = await dossierListPage(deps.db, scope, filter, paging, dossierCountCap);
  const shown = rows.slice(0, paging.pageSize);
  const open = new Map(
    (
      await openStepsOf(
        deps.db,
        shown.map((row) => row.id),
      )
    ).map((step) => [step.dossier_id, step]),
  );
  const items = shown.map((row): DossierListItem => {
    const step = open.get(row.id);
    return {
      folderId: row.id,
      documentId: row.document_id ?? '',
      documentUuid: row.uuid,
      documentTitle: row.title,
      processName: row.process_name,
      status: row.status,
      signedCount: row.signed_count,
      requiredCount: row.required_count,
      createdAt: row.created_at,
      completedAt: row.completed_at,
      currentStep: step ? { name: step.step_name, expireAt: step.expire_at } : null,
    };
  });
  return {
    items,
    page: paging.page,
    pageSize: paging.pageSize,
    total: Math.min(counted, dossierCountCap),
    more: counted > dossierCountCap,
    next: rows.length > paging.pageSize,
  };
}

/** A signing turn as a dossier's page shows it: the lookup's signer plus its exact state. */
export interface TurnOverview {
  signer: z.output<typeof SignerView>;
  stepPosition: number;
  signType: TurnView['signType'];
  /** WAITING (not yet its turn), ACTIVE, SIGNED, REJECTED, EXPIRED, CANCELLED. */
  state: TurnView['status'];
  /** The submitted or account name of whoever takes (or took) the turn. */
  name: string | null;
  actedAt: string | null;
}

/**
 * A dossier by its numeric id (folderId) for the caller who may see it (else 404): the
 * lookup's facts (endpoint 3) with its title, process and each turn's exact state.
 */
export async function dossierOverview(deps: AppDeps, principal: Principal, dossierId: number) {
  const scope = await scopeOf(deps.db, principal);
  const dossier = await dossierInScopeById(deps.db, scope, dossierId);
  // File items with the number of their newest version (above 1: signed at least once).
  const files = (await dossierFiles(deps.db, dossier.id)).map((file) => ({
    ...toFileItem(deps, file, true),
    version: file.version,
  }));
  const turns = await dossierTurns(deps.db, dossier.id);
  return {
    ...dossierIdentity(dossier),
    ecmClassCode: dossier.ecm_class_code,
    processName: await processNameOf(deps.db, dossier.process_id),
    status: dossier.status,
    signedCount: dossier.signed_count,
    requiredCount: dossier.required_count,
    files: files.filter((file) => file.type === 'MAIN'),
    attachments: files.filter((file) => file.type === 'ATTACHMENT'),
    turns: turns.map(
      (turn): TurnOverview => ({
        signer: signerView(turn),
        stepPosition: turn.stepPosition,
        signType: turn.signType,
        state: turn.status,
        name: turn.signerFullName ?? turn.assigneeName ?? turn.actorName,
        actedAt: turn.actedAt,
      }),
    ),
    createdAt: dossier.created_at,
    startedAt: dossier.started_at,
    completedAt: dossier.completed_at,
    rejectedAt: dossier.rejected_at,
    expiredAt: dossier.expired_at,
  };
}

export type DossierOverview = Awaited<ReturnType<typeof dossierOverview>>;
