import type { Selectable } from 'kysely';
import type { Db } from '../db/database';
import type { ProcessesTable, ProcessStepsTable } from '../db/schema';

export type ProcessRow = Selectable<ProcessesTable>;
export type StepRow = Selectable<ProcessStepsTable>;

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
  return { process, documentClasses: JSON.parse(process.document_classes) as string[], steps };
}
