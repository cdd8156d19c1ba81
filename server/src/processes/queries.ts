import type { Insertable, Selectable, Updateable } from 'kysely';
import type { Db } from '../db/database';
import { parseJsonColumn, StringList } from '../db/jsonColumn';
import type { ProcessesTable, ProcessStepsTable, UserType } from '../db/schema';

export type ProcessRow = Selectable<ProcessesTable>;
export type StepRow = Selectable<ProcessStepsTable>;
/** A step's columns, the process it belongs to aside. */
export type StepFields = Omit<Insertable<ProcessStepsTable>, 'process_id'>;

/** `processes.document_classes`: the JSON array of ecmClassCodes the process signs. */
export function documentClassesOf(row: { document_classes: string }): string[] {
  return parseJsonColumn(StringList, 'processes.document_classes', row.document_classes);
}

/** A process with its steps in order and the document classes it signs. */
export interface LoadedProcess {
  process: ProcessRow;
  documentClasses: string[];
  steps: StepRow[];
}

export async function loadProcess(
  db: Db,
  organizationId: number,
  code: string,
): Promise<LoadedProcess | undefined> {
  const process = await db
    .selectFrom('processes')
    .selectAll()
    .where('organization_id', '=', organizationId)
    .where('code', '=', code)
    .executeTakeFirst();
  if (!process) return undefined;
  const steps = await db
    .selectFrom('process_steps')
    .selectAll()
    .where('process_id', '=', process.id)
    .orderBy('position')
    .execute();
  return { process, documentClasses: documentClassesOf(process), steps };
}

/** Whether any dossier was created from the process (its step rows are then referenced). */
export async function processInUse(db: Db, processId: number): Promise<boolean> {
  const row = await db
    .selectFrom('dossiers')
    .select('id')
    .where('process_id', '=', processId)
    .limit(1)
    .executeTakeFirst();
  return row !== undefined;
}

/** Process rows with their tenant and organization codes, of a tenant or of one organization. */
export function findProcesses(db: Db, filter: { tenantId: number; organizationId?: number }) {
  let query = db
    .selectFrom('processes')
    .innerJoin('tenants', 'tenants.id', 'processes.tenant_id')
    .innerJoin('organizations', 'organizations.id', 'processes.organization_id')
    .selectAll('processes')
    .select(['tenants.code as tenant_code', 'organizations.code as organization_code'])
    .where('processes.tenant_id', '=', filter.tenantId)
    .orderBy('organizations.code')
    .orderBy('processes.code');
  if (filter.organizationId !== undefined) {
    query = query.where('processes.organization_id', '=', filter.organizationId);
  }
  return query.execute();
}

/** Steps of several processes, each list in position order. */
export async function stepsOfProcesses(
  db: Db,
  processIds: number[],
): Promise<Map<number, StepRow[]>> {
  const byProcess = new Map<number, StepRow[]>(processIds.map((id) => [id, []]));
  if (processIds.length === 0) return byProcess;
  const rows = await db
    .selectFrom('process_steps')
    .selectAll()
    .where('process_id', 'in', processIds)
    .orderBy('process_id')
    .orderBy('position')
    .execute();
  for (const row of rows) byProcess.get(row.process_id)?.push(row);
  return byProcess;
}

/** A user of the tenant by folded login name, for a step's default signer. */
export function tenantUserByLoginName(
  db: Db,
  tenantId: number,
  usernameKey: string,
): Promise<{ id: number; type: UserType } | undefined> {
  return db
    .selectFrom('users')
    .select(['id', 'type'])
    .where('tenant_id', '=', tenantId)
    .where('username_key', '=', usernameKey)
    .executeTakeFirst();
}

export async function insertProcess(db: Db, row: Insertable<ProcessesTable>): Promise<number> {
  const inserted = await db
    .insertInto('processes')
    .values(row)
    .returning('id')
    .executeTakeFirstOrThrow();
  return inserted.id;
}

export async function updateProcess(
  db: Db,
  processId: number,
  changes: Updateable<ProcessesTable>,
): Promise<void> {
  await db.updateTable('processes').set(changes).where('id', '=', processId).execute();
}

export async function deleteSteps(db: Db, processId: number): Promise<void> {
  await db.deleteFrom('process_steps').where('process_id', '=', processId).execute();
}

export async function updateStep(db: Db, stepId: number, step: StepFields): Promise<void> {
  await db.updateTable('process_steps').set(step).where('id', '=', stepId).execute();
}

export async function insertSteps(db: Db, processId: number, steps: StepFields[]): Promise<void> {
  await db
    .insertInto('process_steps')
    .values(steps.map((step) => ({ ...step, process_id: processId })))
    .execute();
}
