import fs from 'node:fs';
import path from 'node:path';
import { z } from 'zod';
import type { AppDeps } from '../../context';
import { DomainError } from '../../errors/domainError';
import { parseProcessDefinition } from '../../processes/definition';
import { createProcess, listProcesses, type ProcessOutcome } from '../../processes/service';
import { type TenantRow, tenantByCode } from '../../tenancy/resolveTenant';
import { type Command, command, option, table } from '../command';

/** `--file PATH`: a regular file that exists, as an absolute path (exit 2 otherwise). */
export const existingFile = option.text
  .transform((value) => path.resolve(value))
  .superRefine((file, context) => {
    const stat = fs.statSync(file, { throwIfNoEntry: false });
    if (!stat?.isFile()) {
      const problem = stat ? 'not a regular file' : 'no such file';
      context.addIssue({ code: 'custom', message: `${file}: ${problem}`, input: file });
    }
  });

/**
 * `<group> list --tenant T [--org C]`: the rows of a tenant or of one of its organizations, as a
 * table for people and as `{ [key]: rows }` with --json.
 */
export function organizationListCommand<T>(spec: {
  name: string;
  key: string;
  header: string[];
  list(deps: AppDeps, tenant: TenantRow, organizationCode?: string): Promise<T[]>;
  row(item: T): (string | number | null)[];
}): Command {
  return command({
    name: spec.name,
    options: z.object({ tenant: option.text, org: option.text.optional() }),
    prepare: ({ tenant: tenantCode, org: organizationCode }) => {
      return async (deps) => {
        const tenant = await tenantByCode(deps.db, tenantCode);
        const items = await spec.list(deps, tenant, organizationCode);
        return { json: { [spec.key]: items }, lines: table(spec.header, items.map(spec.row)) };
      };
    },
  });
}

/** The definition file as JSON (a UTF-8 byte order mark is allowed); 400 INVALID_JSON otherwise. */
function readDefinition(file: string): unknown {
  const text = fs.readFileSync(file, 'utf8').replace(/^\uFEFF/, '');
  try {
    return JSON.parse(text) as unknown;
  } catch (error) {
    throw new DomainError('INVALID_JSON', `${file} is not JSON: ${(error as Error).message}`, {
      field: 'file',
    });
  }
}

function deadlineText(seconds: number | null): string | null {
  if (seconds === null) return null;
  const units: [number, string][] = [
    [86400, 'd'],
    [3600, 'h'],
    [60, 'min'],
  ];
  const unit = units.find(([size]) => seconds % size === 0);
  return unit ? `${seconds / unit[0]}${unit[1]}` : `${seconds}s`;
}

const outcomeText: Record<ProcessOutcome, string> = {
  created: 'Created process',
  replaced: 'Replaced the definition (no dossier used it yet) of process',
  updated: 'Updated in place (dossiers use it; same steps) process',
};

export const processCommands: Command[] = [
  command({
    name: 'process create',
    options: z.object({ tenant: option.text, org: option.text, file: existingFile }),
    prepare: ({ tenant: tenantCode, org: organizationCode, file }) => {
      const definition = readDefinition(file);
      // A bad definition is refused (exit 1, VALIDATION_ERROR) before the database is opened.
      parseProcessDefinition(definition);
      return async (deps) => {
        const tenant = await tenantByCode(deps.db, tenantCode);
        const { process: loaded, outcome } = await createProcess(
          deps,
          tenant,
          organizationCode,
          definition,
        );
        const [firstClass] = loaded.documentClasses;
        return {
          json: { ...loaded },
          lines: [
            `${outcomeText[outcome]} ${loaded.code} "${loaded.name}" in ${organizationCode} of tenant ${tenant.code}, id ${loaded.id}.`,
            loaded.documentClasses.length === 1
              ? `Document class: ${firstClass} (files inherit it).`
              : `Document classes: ${loaded.documentClasses.join(', ')} (every file must send ecmClassCode).`,
            ...table(
              ['#', 'STEP', 'KIND', 'SIGN TYPE', 'DEADLINE', 'NAME'],
              loaded.steps.map((step, index) => [
                index + 1,
                step.stepCode,
                step.kind,
                step.signType,
                deadlineText(step.deadlineSeconds),
                step.name,
              ]),
            ),
          ],
        };
      };
    },
  }),
  organizationListCommand({
    name: 'process list',
    key: 'processes',
    header: ['ORGANIZATION', 'CODE', 'NAME', 'CLASSES', 'STEPS', 'UPDATED'],
    list: (deps, tenant, organizationCode) => listProcesses(deps.db, tenant, organizationCode),
    row: (p) => [
      p.organizationCode,
      p.code,
      p.name,
      p.documentClasses.join(','),
      p.steps.map((step) => step.stepCode).join(' > '),
      p.updatedAt,
    ],
  }),
];
