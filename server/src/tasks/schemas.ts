import { z } from '@hono/zod-openapi';
import { DossierStatusSchema, FileItemSchema } from '../dossiers/schemas';
import {
  dateRangeBounds,
  envelope,
  isoDateTime,
  queryInteger,
  withDateRange,
} from '../http/openapi';

/** Task list paging (document 1, "Limits"): default 20, at most 100. */
export const taskPageSize = { default: 20, max: 100 } as const;

export const taskListStatuses = [
  'pending',
  'approved',
  'rejected',
  'expired',
  'completed',
  'all',
] as const;
export type TaskListStatus = (typeof taskListStatuses)[number];

/** An optional text filter; an empty value counts as absent. */
const optionalText = (description: string) =>
  z
    .string()
    .max(255)
    .optional()
    .transform((value) => value || undefined)
    .openapi({ description });

export const TaskListQuery = withDateRange(
  z.object({
    status: z
      .string()
      .transform((value) => value.toLowerCase())
      .pipe(z.enum(taskListStatuses))
      .optional()
      .openapi({
        type: 'string',
        enum: [...taskListStatuses],
        default: 'all',
        description:
          'pending; approved, rejected, expired; completed = approved + rejected + expired; all = pending + completed, newest first',
      }),
    page: queryInteger.optional().openapi({ type: 'integer', default: 1, minimum: 1 }),
    pageSize: queryInteger.pipe(z.number().max(taskPageSize.max)).optional().openapi({
      type: 'integer',
      default: taskPageSize.default,
      minimum: 1,
      maximum: taskPageSize.max,
    }),
    ...dateRangeBounds({
      from: 'Pending: assignedAt from; handled: actionAt from',
      to: 'Pending: assignedAt up to; handled: actionAt up to',
    }),
    documentId: optionalText('Exact dossier code'),
    keyword: optionalText(
      'Text of the dossier title or the step name, case- and diacritics-insensitive ("nguyen van anh" finds "Nguyễn Văn Ánh")',
    ),
  }),
);

export type TaskListFilter = z.output<typeof TaskListQuery>;

export const TaskCodeParam = z.object({
  taskCode: z
    .string()
    .min(1)
    .max(64)
    .openapi({ param: { name: 'taskCode', in: 'path' } }),
});

export const TaskDocument = z
  .object({
    folderId: z.number().int().openapi({ description: 'Deep link /folders?id={folderId}' }),
    documentId: z.string().openapi({
      description: 'Empty when the dossier was not created through the integration API',
    }),
    documentUuid: z.string(),
    documentTitle: z.string(),
    transactionId: z.string().optional(),
    ecmClassCode: z.string().optional(),
    status: DossierStatusSchema,
    requiredCount: z.number().int(),
    signedCount: z.number().int(),
    createdAt: isoDateTime,
  })
  .openapi('TaskDocument');

export const TaskItem = z
  .object({
    taskId: z.number().int().openapi({ description: 'Deep link /tasks?id={taskId}' }),
    taskCode: z.string(),
    stepCode: z.string(),
    stepName: z.string(),
    signType: z.enum(['digital_signature', 'image_signature', 'app_submit', 'notification']),
    status: z.enum(['PENDING', 'APPROVED', 'REJECTED', 'EXPIRED']),
    assignedAt: isoDateTime,
    expireAt: isoDateTime
      .optional()
      .openapi({ description: 'Absent when the step has no deadline' }),
    actionAt: isoDateTime.optional().openapi({ description: 'Only on handled records' }),
    comment: z.string().optional(),
    document: TaskDocument,
  })
  .openapi('TaskItem');

export const TaskList = z
  .object({
    items: z.array(TaskItem),
    page: z.number().int(),
    pageSize: z.number().int(),
    total: z.number().int().openapi({ description: 'Every match, independent of paging' }),
  })
  .openapi('TaskList');

export const HistoryItem = z
  .object({
    taskId: z.number().int(),
    taskCode: z.string(),
    stepCode: z.string(),
    stepName: z.string(),
    action: z.enum(['NEXT', 'REJECT', 'OVERDUE']),
    actionLabel: z.string(),
    actionAt: isoDateTime,
    comment: z.string().optional(),
    actorName: z.string().optional(),
    actorUsername: z.string().optional().openapi({ description: 'Internal-account steps only' }),
    actorEmail: z.string().optional(),
    actorPhone: z.string().optional(),
  })
  .openapi('HistoryItem');

export const Assignee = z
  .object({
    email: z.string().optional(),
    phone: z.string().optional(),
    identityNumber: z.string().optional(),
    taxCode: z.string().optional(),
    username: z.string().optional(),
    name: z.string().optional(),
    roleCode: z.string().optional(),
    roleName: z.string().optional(),
  })
  .openapi('TaskAssignee', {
    description:
      'Guest step: email, phone, identityNumber, taxCode. Internal step: username, name, email, phone. Role-based step: roleCode, roleName, plus the internal fields once someone took it.',
  });

export const TaskDetail = TaskItem.extend({
  assignee: Assignee,
  files: z.array(FileItemSchema),
  attachments: z.array(FileItemSchema),
  history: z.array(HistoryItem),
}).openapi('TaskDetail');

export const DossierHistory = z
  .object({
    folderId: z.number().int(),
    documentId: z.string(),
    documentUuid: z.string(),
    documentTitle: z.string(),
    transactionId: z.string().nullable(),
    status: DossierStatusSchema,
    requiredCount: z.number().int(),
    signedCount: z.number().int(),
    history: z.array(HistoryItem),
  })
  .openapi('DossierHistory');

export const TaskListEnvelope = envelope(TaskList);
export const TaskDetailEnvelope = envelope(TaskDetail);
export const DossierHistoryEnvelope = envelope(DossierHistory);

export type TaskItemValue = z.output<typeof TaskItem>;
export type HistoryItemValue = z.output<typeof HistoryItem>;
export type AssigneeValue = z.output<typeof Assignee>;
