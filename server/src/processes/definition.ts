import { type ZodError, z } from 'zod';
import type { SignType, StepKind } from '../db/schema';
import { validationError } from '../errors/domainError';

/**
 * The process definition file the operator loads (`admin process create --file process.json`),
 * documented in docs/process-definitions.md. The schema checks everything that needs no
 * database; roles and users are resolved by the service.
 */

export const stepKinds = ['guest', 'phone_guest', 'internal', 'role'] as const satisfies StepKind[];
export const signTypes = [
  'digital_signature',
  'image_signature',
  'app_submit',
  'notification',
] as const satisfies SignType[];

/** At most this many steps: a dossier has at most 50 signers, so more steps could never run. */
export const maxSteps = 50;
/** The longest step deadline accepted. */
export const maxDeadlineSeconds = 366 * 24 * 3600;

/** Labels of the two actions when the definition names none (Vietnamese, as signers see them). */
export const defaultApproveLabels: Record<SignType, string> = {
  digital_signature: 'Ký',
  image_signature: 'Ký',
  app_submit: 'Phê duyệt',
  notification: 'Đã xem',
};
export const defaultRejectLabel = 'Từ chối';

const durationPattern = /^P(?:(\d+)W)?(?:(\d+)D)?(?:T(?:(\d+)H)?(?:(\d+)M)?(?:(\d+)S)?)?$/;

/**
 * An ISO 8601 duration in weeks, days, hours, minutes and seconds (`P3D`, `PT48H`, `P1DT12H`)
 * as seconds; undefined when the text is not one. Years and months are refused: their length
 * varies.
 */
export function durationSeconds(text: string): number | undefined {
  const match = durationPattern.exec(text);
  if (!match || text === 'P' || text.endsWith('T')) return undefined;
  const [weeks, days, hours, minutes, seconds] = match.slice(1).map((part) => Number(part ?? 0));
  return (
    ((((weeks ?? 0) * 7 + (days ?? 0)) * 24 + (hours ?? 0)) * 60 + (minutes ?? 0)) * 60 +
    (seconds ?? 0)
  );
}

const deadline = z.string().transform((text, context) => {
  const seconds = durationSeconds(text.trim());
  if (seconds === undefined) {
    context.addIssue({
      code: 'custom',
      message:
        'must be an ISO 8601 duration in weeks, days, hours, minutes or seconds, e.g. "P3D" or "PT48H" (no years or months)',
    });
    return z.NEVER;
  }
  if (seconds <= 0 || seconds > maxDeadlineSeconds) {
    context.addIssue({ code: 'custom', message: 'must be longer than zero and at most P366D' });
    return z.NEVER;
  }
  return seconds;
});

/** An identifier as partners send it back (`processDefCode`, `stepCode`, `ecmClassCode`). */
const code = (max: number) =>
  z.string().trim().min(1, 'must not be empty').max(max, `must be at most ${max} characters`);

/** A text people read: trimmed and in Unicode NFC, so Vietnamese compares and prints alike. */
const text = (max: number) => code(max).transform((value) => value.normalize('NFC'));

const StepSchema = z
  .strictObject({
    stepCode: code(64),
    name: text(255),
    kind: z.enum(stepKinds),
    signType: z.enum(signTypes),
    deadline: deadline.nullish(),
    actionLabels: z
      .strictObject({ approve: text(100).optional(), reject: text(100).optional() })
      .optional(),
    organizationCode: code(255).optional(),
    roleName: code(255).optional(),
    defaultUsername: code(255).optional(),
  })
  .superRefine((step, context) => {
    const misplaced = (field: string, message: string) =>
      context.addIssue({ code: 'custom', path: [field], message });
    if (step.kind === 'role') {
      if (step.organizationCode === undefined)
        misplaced('organizationCode', 'is required for a role step');
      else if (step.roleName === undefined) misplaced('roleName', 'is required for a role step');
    } else if (step.organizationCode !== undefined) {
      misplaced('organizationCode', 'is only for role steps');
    } else if (step.roleName !== undefined) {
      misplaced('roleName', 'is only for role steps');
    }
    if (step.kind !== 'internal' && step.defaultUsername !== undefined) {
      misplaced('defaultUsername', 'is only for internal steps');
    }
  })
  .transform((step) => ({
    stepCode: step.stepCode,
    name: step.name,
    kind: step.kind,
    signType: step.signType,
    deadlineSeconds: step.deadline ?? null,
    approveLabel: step.actionLabels?.approve ?? defaultApproveLabels[step.signType],
    rejectLabel: step.actionLabels?.reject ?? defaultRejectLabel,
    organizationCode: step.organizationCode ?? null,
    roleName: step.roleName ?? null,
    defaultUsername: step.defaultUsername ?? null,
  }));

/** Reports the first repeated value of `values` at `path.<index>[.key]`. */
function refuseRepeats(
  context: z.RefinementCtx,
  values: string[],
  path: (index: number) => (string | number)[],
  what: string,
): void {
  const seen = new Set<string>();
  for (const [index, value] of values.entries()) {
    if (seen.has(value)) {
      context.addIssue({ code: 'custom', path: path(index), message: `${what} ${value} repeats` });
      return;
    }
    seen.add(value);
  }
}

export const ProcessDefinitionSchema = z
  .strictObject({
    code: code(255),
    name: text(500),
    documentClasses: z.array(code(255)).min(1, 'must list at least one ecmClassCode').max(50),
    steps: z
      .array(StepSchema)
      .min(1, 'must list at least one step')
      .max(maxSteps, `must list at most ${maxSteps} steps`),
  })
  .superRefine((definition, context) => {
    refuseRepeats(context, definition.documentClasses, (i) => ['documentClasses', i], 'class');
    refuseRepeats(
      context,
      definition.steps.map((step) => step.stepCode),
      (i) => ['steps', i, 'stepCode'],
      'stepCode',
    );
  });

export type ProcessDefinition = z.output<typeof ProcessDefinitionSchema>;
export type StepDefinition = ProcessDefinition['steps'][number];

/** The first problem, with `details.field` pointing at the offending key (unknown keys too). */
function definitionError(error: ZodError): Error {
  const [issue] = error.issues;
  if (issue?.code === 'unrecognized_keys') {
    const [key] = issue.keys;
    const located = { ...issue, path: [...issue.path, key ?? ''], message: 'is not a known key' };
    return validationError(new z.ZodError([located]));
  }
  return validationError(error);
}

/** Checks a parsed definition file; 400 VALIDATION_ERROR with `details.field` on the first problem. */
export function parseProcessDefinition(input: unknown): ProcessDefinition {
  const parsed = ProcessDefinitionSchema.safeParse(input);
  if (!parsed.success) throw definitionError(parsed.error);
  return parsed.data;
}
