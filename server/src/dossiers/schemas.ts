import { z } from '@hono/zod-openapi';
import {
  dateRangeBounds,
  envelope,
  isoDateTime,
  queryInteger,
  withDateRange,
} from '../http/openapi';

/**
 * Dossier creation input and the outputs of endpoints 1–4, as the spec's field tables say. Every
 * rule that needs only the request lives here, so a failure names its field
 * (`details.field`, e.g. `files.0.fileUrl`, `signers.2.taxCode`); rules that need the process
 * (step kinds, classes) live in the service.
 */

/** Limits of the field tables; `files[]` has none in the spec (see docs/decisions.md, "Dossiers and files"). */
export const creationLimits = {
  files: 50,
  attachments: 50,
  signers: 50,
  fileUrl: 2048,
  /** The whole JSON body (templateData and metadata included). */
  bodyBytes: 1024 * 1024,
} as const;

/** A required text: present, not blank. */
const text = (max: number) =>
  z
    .string()
    .max(max)
    .refine((value) => value.trim() !== '', 'must not be empty');

/** An optional text where an empty string counts as absent. */
const optionalText = (max: number) =>
  z
    .string()
    .max(max)
    .optional()
    .transform((value) => (value === undefined || value.trim() === '' ? undefined : value));

const jsonObject = z.record(z.string(), z.unknown());

/** What both kinds of file item may carry; the kind (`source`) decides what is required. */
function fileFields(source: 'url' | 'template') {
  const unused = `Not used with \`${source}\``;
  return {
    fileUrl: z
      .string()
      .max(creationLimits.fileUrl)
      .optional()
      .openapi({
        description: source === 'url' ? 'HTTPS, PDF, at most 50 MiB, answered within 30 s' : unused,
      }),
    templateCode: optionalText(255).openapi({
      description: source === 'template' ? 'A template code of the organization' : unused,
    }),
    templateData: jsonObject.optional().openapi({
      description: source === 'template' ? 'Values of the template fields' : unused,
    }),
    title: optionalText(255),
    ecmClassCode: optionalText(255).openapi({
      description: 'Class of this file; required when the process signs several classes',
    }),
  };
}

const FileFromUrl = z
  .object({
    source: z.literal('url').openapi({ description: 'An existing PDF, fetched by the server' }),
    ...fileFields('url'),
  })
  .superRefine((file, context) => {
    if (file.fileUrl === undefined || file.fileUrl.trim() === '') {
      context.addIssue({
        code: 'custom',
        path: ['fileUrl'],
        message: 'is required when source is url',
      });
    }
  })
  // The refinement makes fileUrl required; the generated schema cannot see that.
  .openapi('DossierFileFromUrl', { required: ['source', 'fileUrl'] });

const FileFromTemplate = z
  .object({
    source: z
      .literal('template')
      .openapi({ description: 'A template of the organization, filled' }),
    ...fileFields('template'),
  })
  .superRefine((file, context) => {
    if (file.templateCode === undefined) {
      context.addIssue({
        code: 'custom',
        path: ['templateCode'],
        message: 'is required when source is template',
      });
    }
  })
  .openapi('DossierFileFromTemplate', { required: ['source', 'templateCode'] });

/** Checked first, so a missing or unknown `source` is reported as such (not as a union miss). */
const FileSource = z.object({ source: z.enum(['url', 'template']) });

/** A `files[]` or `attachments[]` item: `oneOf` by `source` in the OpenAPI document. */
export const FileInput = z
  .preprocess(
    (value, context) => {
      for (const issue of FileSource.safeParse(value).error?.issues ?? []) {
        // The issue as FileSource reported it (code, path, message), for this item.
        context.issues.push({ ...issue, input: value } as (typeof context.issues)[number]);
      }
      return value;
    },
    z.discriminatedUnion('source', [FileFromUrl, FileFromTemplate]),
  )
  .openapi('DossierFileInput');

export const SignerInput = z
  .object({
    stepCode: text(64).openapi({ description: 'A step code of the process' }),
    fullName: optionalText(255),
    identityNumber: z
      .string()
      .regex(/^\d{9,12}$/, 'must be 9 to 12 digits')
      .optional(),
    taxCode: z
      .string()
      .regex(/^\d{10}(-?\d{3})?$/, 'must be 10 digits, or 10 digits plus 3 branch digits')
      .optional(),
    email: z.email('must be a valid e-mail address').max(255).optional(),
    phone: z
      .string()
      .regex(/^(?=.*\d)[\d+\- ]{8,20}$/, 'must be 8 to 20 characters of digits, +, - and space')
      .optional(),
    username: optionalText(255).openapi({
      description: 'Internal username: exactly that person takes the turn',
    }),
    order: z.number().int().optional().openapi({
      description: 'Order among the signers of the same stepCode; default: position in the array',
    }),
  })
  .superRefine((signer, context) => {
    if (signer.identityNumber !== undefined && signer.taxCode !== undefined) {
      context.addIssue({
        code: 'custom',
        path: ['taxCode'],
        message: 'send only one of identityNumber and taxCode',
      });
    }
  })
  .openapi('DossierSignerInput');

export const DossierCreateBody = z
  .object({
    documentId: text(255).openapi({
      description: "Caller's code, unique in the organization; the idempotency key",
    }),
    documentTitle: optionalText(500).openapi({ description: 'Defaults to documentId' }),
    processDefCode: text(255),
    ecmClassCode: optionalText(255).openapi({
      description: 'Class of the dossier itself; not used as a file class',
    }),
    disableStart: z.boolean().optional(),
    files: z.array(FileInput).min(1).max(creationLimits.files),
    attachments: z.array(FileInput).max(creationLimits.attachments).optional(),
    signers: z.array(SignerInput).max(creationLimits.signers),
    metadata: jsonObject.optional().openapi({
      description: 'Free data echoed in webhooks; the service adds tenantCode',
    }),
  })
  .openapi('DossierCreateRequest');

export type DossierCreateInput = z.output<typeof DossierCreateBody>;
export type FileInputValue = z.output<typeof FileInput>;
export type SignerInputValue = z.output<typeof SignerInput>;

export const FileItemSchema = z
  .object({
    id: z.number().int(),
    fileUuid: z.string(),
    title: z.string(),
    type: z.enum(['MAIN', 'ATTACHMENT']),
    ecmClassCode: z.string().optional().openapi({ description: 'Lookup, listing, task detail' }),
    size: z.number().int().optional().openapi({ description: 'Lookup, listing, task detail' }),
    mimeType: z.string().optional().openapi({ description: 'Lookup, listing, task detail' }),
    url: z.string().openapi({ description: 'Presigned, valid 24 hours, newest version' }),
    downloadUrl: z.string().openapi({ description: 'Relative path of endpoint 5; never expires' }),
  })
  .openapi('FileItem');

/** The spec's dossier states. */
export const DossierStatusSchema = z.enum([
  'PENDING',
  'PENDING_SIGN',
  'IN_PROGRESS',
  'COMPLETED',
  'REJECTED',
  'EXPIRED',
]);

export const DossierCreated = z
  .object({
    transactionId: z.string().nullable(),
    documentId: z.string(),
    documentTitle: z.string(),
    folderId: z.number().int(),
    documentUuid: z.string(),
    files: z.array(FileItemSchema),
    attachments: z.array(FileItemSchema),
    status: z.enum(['PENDING_SIGN', 'PENDING']),
    createdAt: isoDateTime,
  })
  .openapi('DossierCreated');

export const DossierStarted = z
  .object({
    documentId: z.string(),
    documentUuid: z.string(),
    transactionId: z.string(),
    status: z.literal('PENDING_SIGN'),
  })
  .openapi('DossierStarted');

export const SignerView = z
  .object({
    stepName: z.string(),
    stepCode: z.string(),
    status: z.enum(['SIGNED', 'PENDING', 'REJECTED']),
    signedAt: isoDateTime.nullable(),
    email: z.string().optional(),
    phone: z.string().optional(),
    identityNumber: z.string().optional(),
    taxCode: z.string().optional(),
    username: z.string().optional(),
    roleCode: z.string().optional(),
    roleName: z.string().optional(),
  })
  .openapi('DossierSigner');

export const DossierLookup = z
  .object({
    documentId: z.string(),
    documentUuid: z.string(),
    transactionId: z.string().nullable(),
    status: DossierStatusSchema,
    signedCount: z.number().int(),
    requiredCount: z.number().int(),
    files: z.array(FileItemSchema),
    attachments: z.array(FileItemSchema),
    signers: z.array(SignerView),
    metadata: jsonObject,
    createdAt: isoDateTime,
    completedAt: isoDateTime.nullable(),
  })
  .openapi('DossierLookup');

export const DossierFileList = z
  .object({
    documentId: z.string(),
    documentUuid: z.string(),
    files: z.array(FileItemSchema),
    attachments: z.array(FileItemSchema),
  })
  .openapi('DossierFileList');

export const DocumentIdParam = z.object({
  documentId: z
    .string()
    .openapi({ param: { name: 'documentId', in: 'path' }, description: "Caller's dossier code" }),
});

export const DossierCreatedEnvelope = envelope(DossierCreated);
export const DossierStartedEnvelope = envelope(DossierStarted);
export const DossierLookupEnvelope = envelope(DossierLookup);
export const DossierFileListEnvelope = envelope(DossierFileList);

/** Dossier list paging, as the task list's (document 1, "Limits"): default 20, at most 100. */
export const dossierPageSize = { default: 20, max: 100 } as const;

/** An optional text filter of a list; an empty value counts as absent. */
const listText = z
  .string()
  .max(255)
  .optional()
  .transform((value) => (value === undefined || value.trim() === '' ? undefined : value.trim()));

/**
 * The filters of a dossier list, the task list's (endpoint 6) applied to dossiers: `status` a
 * dossier state (any letter case; `all` or absent: every state), `fromDate`/`toDate` bound
 * createdAt, `documentId` exact, `keyword` a case-insensitive, diacritics-folded substring of
 * the title or the documentId. Newest first.
 */
export const DossierListQuery = withDateRange(
  z.object({
    status: z
      .string()
      .transform((value) => value.toUpperCase())
      .pipe(z.union([DossierStatusSchema, z.literal('ALL')]))
      .optional()
      .transform((value) => (value === 'ALL' ? undefined : value)),
    page: queryInteger.optional(),
    pageSize: queryInteger.pipe(z.number().max(dossierPageSize.max)).optional(),
    ...dateRangeBounds(),
    documentId: listText,
    keyword: listText,
  }),
);

export type DossierListFilter = z.output<typeof DossierListQuery>;
