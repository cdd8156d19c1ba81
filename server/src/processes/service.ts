import { identityKey } from '../auth/queries';
import type { AppDeps } from '../context';
import { type Db, inTransaction } from '../db/database';
import type { SignType, StepKind } from '../db/schema';
import { rolesOfOrganization } from '../directory/queries/users';
import { DomainError } from '../errors/domainError';
import { isoNow } from '../platform/clock';
import type { TenantRow } from '../tenancy/resolveTenant';
import { organizationByCode } from '../tenancy/service';
import { type ProcessDefinition, parseProcessDefinition, type StepDefinition } from './definition';
import {
  deleteSteps,
  documentClassesOf,
  findProcesses,
  insertProcess,
  insertSteps,
  loadProcess,
  processInUse,
  type StepFields,
  type StepRow,
  stepsOfProcesses,
  tenantUserByLoginName,
  updateProcess,
  updateStep,
} from './queries';

/** A step as the operator sees it. */
export interface StepView {
  stepCode: string;
  name: string;
  kind: StepKind;
  signType: SignType;
  deadlineSeconds: number | null;
}

/** A process as the operator sees it. */
export interface ProcessView {
  id: number;
  code: string;
  name: string;
  documentClasses: string[];
  steps: StepView[];
}

export interface ListedProcess extends ProcessView {
  tenantCode: string;
  organizationCode: string;
  createdAt: string;
  updatedAt: string;
}

/**
 * What loading a definition did: `created` a new process, `replaced` one no dossier used yet,
 * or `updated` one in use in place (same steps, only names, labels, deadlines, roles, default
 * users or document classes changed).
 */
export type ProcessOutcome = 'created' | 'replaced' | 'updated';

function stepView(step: StepRow): StepView {
  return {
    stepCode: step.step_code,
    name: step.name,
    kind: step.kind,
    signType: step.sign_type,
    deadlineSeconds: step.deadline_seconds,
  };
}

type ResolvedStep = StepFields;

/** The role a role step names: organization + role name, with the directory's errors. */
async function roleOfStep(
  db: Db,
  tenantId: number,
  step: StepDefinition,
  at: string,
): Promise<number> {
  const organization = await organizationByCode(
    db,
    tenantId,
    step.organizationCode!,
    `${at}.organizationCode`,
  );
  const roles = await rolesOfOrganization(db, organization.id, 'name', step.roleName!);
  if (roles.length === 0) {
    throw new DomainError(
      'ROLE_NOT_FOUND_IN_ORGANIZATION',
      `No role ${step.roleName} in organization ${organization.code}`,
      { field: `${at}.roleName` },
    );
  }
  if (roles.length > 1) {
    throw new DomainError(
      'ROLE_AMBIGUOUS_IN_ORGANIZATION',
      `Several roles of ${organization.code} are named ${step.roleName}`,
      { field: `${at}.roleName` },
    );
  }
  return roles[0]!.id;
}

/** The internal user of the tenant an internal step names as its default signer. */
async function defaultUserOfStep(
  db: Db,
  tenantId: number,
  username: string,
  at: string,
): Promise<number> {
  const user = await tenantUserByLoginName(db, tenantId, identityKey(username));
  if (!user) {
    throw new DomainError('USERNAME_NOT_FOUND', `No user ${username} in the tenant`, {
      field: `${at}.defaultUsername`,
    });
  }
  if (user.type !== 'internal') {
    throw new DomainError(
      'USER_NOT_INTERNAL',
      `${username} is an outside signer account; an internal step needs an internal user`,
      { field: `${at}.defaultUsername` },
    );
  }
  return user.id;
}

async function resolveSteps(
  db: Db,
  tenantId: number,
  definition: ProcessDefinition,
): Promise<ResolvedStep[]> {
  const resolved: ResolvedStep[] = [];
  for (const [index, step] of definition.steps.entries()) {
    const at = `steps.${index}`;
    resolved.push({
      position: index + 1,
      step_code: step.stepCode,
      name: step.name,
      kind: step.kind,
      sign_type: step.signType,
      deadline_seconds: step.deadlineSeconds,
      approve_label: step.approveLabel,
      reject_label: step.rejectLabel,
      role_id: step.kind === 'role' ? await roleOfStep(db, tenantId, step, at) : null,
      default_user_id:
        step.defaultUsername === null
          ? null
          : await defaultUserOfStep(db, tenantId, step.defaultUsername, at),
    });
  }
  return resolved;
}

/** Same steps in the same order: dossiers created from the old rows still make sense. */
function sameShape(current: StepRow[], next: ResolvedStep[]): boolean {
  return (
    current.length === next.length &&
    current.every(
      (step, index) =>
        step.step_code === next[index]!.step_code &&
        step.kind === next[index]!.kind &&
        step.sign_type === next[index]!.sign_type,
    )
  );
}

/**
 * Loads a process definition (the parsed JSON file) into an organization of the tenant:
 * validates it (400 with `details.field`), resolves role steps (organization + role name) and
 * default users, and writes the process and its steps in one transaction. The same code again
 * replaces the definition while no dossier uses it; once dossiers use it, only a definition with
 * the same steps (stepCode, kind and signType in order) is accepted and updates the rows in
 * place, anything else is 409 PROCESS_IN_USE.
 */
export async function createProcess(
  deps: Pick<AppDeps, 'db' | 'clock'>,
  tenant: TenantRow,
  organizationCode: string,
  definition: unknown,
): Promise<{ process: ProcessView; outcome: ProcessOutcome }> {
  const parsed = parseProcessDefinition(definition);
  return inTransaction(deps.db, async (trx) => {
    const organization = await organizationByCode(trx, tenant.id, organizationCode);
    const steps = await resolveSteps(trx, tenant.id, parsed);
    const now = isoNow(deps.clock);
    const fields = { name: parsed.name, document_classes: JSON.stringify(parsed.documentClasses) };
    const existing = await loadProcess(trx, organization.id, parsed.code);
    let outcome: ProcessOutcome = 'created';
    let processId: number;
    if (existing === undefined) {
      processId = await insertProcess(trx, {
        ...fields,
        tenant_id: tenant.id,
        organization_id: organization.id,
        code: parsed.code,
        created_at: now,
        updated_at: now,
      });
    } else {
      processId = existing.process.id;
      if (!(await processInUse(trx, processId))) {
        outcome = 'replaced';
        await deleteSteps(trx, processId);
      } else if (sameShape(existing.steps, steps)) {
        outcome = 'updated';
        for (const [index, step] of steps.entries()) {
          await updateStep(trx, existing.steps[index]!.id, step);
        }
      } else {
        throw new DomainError(
          'PROCESS_IN_USE',
          `Process ${parsed.code} is used by dossiers: its steps (stepCode, kind, signType in order) cannot change; load it under a new code`,
          { field: 'code' },
        );
      }
      await updateProcess(trx, processId, { ...fields, updated_at: now });
    }
    if (outcome !== 'updated') {
      await insertSteps(trx, processId, steps);
    }
    const saved = await loadProcess(trx, organization.id, parsed.code);
    return {
      outcome,
      process: {
        id: processId,
        code: parsed.code,
        name: parsed.name,
        documentClasses: parsed.documentClasses,
        steps: saved!.steps.map(stepView),
      },
    };
  });
}

/** Processes of a tenant, or of one organization of it, by organization code and code. */
export async function listProcesses(
  db: Db,
  tenant: TenantRow,
  organizationCode?: string,
): Promise<ListedProcess[]> {
  const organization =
    organizationCode === undefined
      ? undefined
      : await organizationByCode(db, tenant.id, organizationCode);
  const rows = await findProcesses(db, { tenantId: tenant.id, organizationId: organization?.id });
  const steps = await stepsOfProcesses(
    db,
    rows.map((row) => row.id),
  );
  return rows.map((row) => ({
    id: row.id,
    tenantCode: row.tenant_code,
    organizationCode: row.organization_code,
    code: row.code,
    name: row.name,
    documentClasses: documentClassesOf(row),
    steps: (steps.get(row.id) ?? []).map(stepView),
    createdAt: row.created_at,
    updatedAt: row.updated_at,
  }));
}
