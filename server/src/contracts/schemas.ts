import { z } from '@hono/zod-openapi';
import {
  dateRangeBounds,
  envelope,
  isoDateTime,
  queryInteger,
  withDateRange,
} from '../http/openapi';
import { isEmailAddress, normalizePhone } from '../notify/outbox';

/**
 * Contract API inputs and outputs (spec 03, "Contract"). Every rule that needs only the request
 * lives here, so a failure names its field (`details.field`, e.g. `signers.1.order`); rules that
 * need the tenant or the clock (contract type, deadline) live in the service.
 */

export const contractStatuses = [
  'draft',
  'signing',
  'completed',
  'rejected',
  'expired',
  'cancelled',
] as const;
export const signerRoles = ['signer', 'viewer'] as const;
export const signerStatuses = ['waiting', 'invited', 'signed', 'rejected'] as const;
export const signingMethods = ['usb_token', 'cloud_hsm', 'otp_sms', 'image_signature'] as const;

export const contractLimits = { signers: 50, title: 255, description: 2000, reason: 1000 } as const;

/** Contract list paging (document 1, "Limits": general lists). */
export const contractPageSize = { default: 20, max: 100 } as const;

/** A required string, trimmed, not empty, at most `max` characters. */
export const requiredText = (max: number) =>
  z
    .string({ error: (issue) => (issue.input === undefined ? 'is required' : 'must be a string') })
    .trim()
    .min(1, 'must not be empty')
    .max(max);

/**
 * Where a signer's visible signature goes: a box in points from the page's bottom-left corner,
 * on `page` (1-based; default the last page). Absent: the default box at the bottom of the last
 * page, one per signer in turn.
 */
export const SignaturePlacement = z.object({
  page: z.number().int().min(1).optional(),
  x: z.number().min(0).max(14_400),
  y: z.number().min(0).max(14_400),
  width: z.number().min(40).max(600),
  height: z.number().min(20).max(400),
});
export type SignaturePlacement = z.output<typeof SignaturePlacement>;

export const SignerInput = z.object({
  name: requiredText(255),
  email: z
    .string({ error: 'is required' })
    .trim()
    .refine(isEmailAddress, 'must be an e-mail address'),
  phone: z
    .string()
    .optional()
    .nullable()
    .transform((value, context) => {
      if (value === undefined || value === null || value.trim() === '') return null;
      const phone = normalizePhone(value);
      if (phone === null) {
        context.addIssue({ code: 'custom', message: 'must be 8 to 15 digits, optionally with +' });
        return z.NEVER;
      }
      return phone;
    }),
  role: z.enum(signerRoles).default('signer'),
  order: z.number({ error: 'must be a positive integer' }).int().min(1),
  placement: SignaturePlacement.optional(),
  identityNumber: z
    .string()
    .trim()
    .regex(
      /^(\d{9,12}|[A-Za-z]{1,2}\d{7,8})$/,
      'must be a CMND/CCCD number (9 to 12 digits) or a passport number',
    )
    .nullish()
    .transform((value) => value ?? null),
  taxCode: z
    .string()
    .trim()
    .regex(/^\d{10}(-?\d{3})?$/, 'must be 10 digits, or 10 digits plus 3 branch digits')
    .nullish()
    .transform((value) => value ?? null),
});
export type SignerInput = z.output<typeof SignerInput>;

/** The NFC, trimmed, lower-case form two e-mails are compared in. */
export function emailKey(email: string): string {
  return email.normalize('NFC').trim().toLowerCase();
}

/**
 * `signers`: 1 to 50 items, e-mails unique (letter case ignored), at least one `signer`, and the
 * signers' orders running 1..n without a gap (equal orders sign in parallel). Viewers take no
 * turn; their order is kept as given.
 */
export const SignersInput = z
  .array(SignerInput)
  .min(1, 'must name at least one signer')
  .max(contractLimits.signers)
  .superRefine((signers, context) => {
    const seen = new Map<string, number>();
    for (const [index, signer] of signers.entries()) {
      const key = emailKey(signer.email);
      if (seen.has(key)) {
        context.addIssue({
          code: 'custom',
          path: [index, 'email'],
          message: `repeats the e-mail of signers.${seen.get(key)}`,
        });
        return;
      }
      seen.set(key, index);
    }
    const orders = signers.filter((signer) => signer.role === 'signer').map((s) => s.order);
    if (orders.length === 0) {
      context.addIssue({
        code: 'custom',
        path: [],
        message: 'must hold at least one role "signer"',
      });
      return;
    }
    const distinct = new Set(orders);
    const highest = Math.max(...orders);
    for (let order = 1; order <= highest; order++) {
      if (distinct.has(order)) continue;
      const index = signers.findIndex((s) => s.role === 'signer' && s.order > order);
      context.addIssue({
        code: 'custom',
        path: [index, 'order'],
        message: `signing orders must run 1..n without a gap; no signer has order ${order}`,
      });
      return;
    }
  });

/** The text fields of the multipart form, as strings. */
export const ContractCreateFields = z.object({
  title: requiredText(contractLimits.title),
  contractTypeId: z
    .string({ error: 'is required' })
    .trim()
    .regex(/^[1-9]\d{0,8}$/, 'must be a positive integer')
    .transform(Number),
  expiredAt: isoDateTime
    .optional()
    .refine((value) => value !== undefined, 'is required')
    .transform((value) => new Date(value!).toISOString()),
  signers: z
    .string({ error: 'is required' })
    .transform((raw, context) => {
      try {
        return JSON.parse(raw) as unknown;
      } catch {
        context.addIssue({ code: 'custom', message: 'must be a JSON array of signer items' });
        return z.NEVER;
      }
    })
    .pipe(SignersInput),
  description: z
    .string()
    .max(contractLimits.description)
    .optional()
    .transform((value) => (value === undefined || value.trim() === '' ? null : value.trim())),
  acceptInvalidSignatures: z
    .enum(['true', 'false'], { error: 'must be "true" or "false"' })
    .optional()
    .transform((value) => value === 'true'),
});
export type ContractCreateFields = z.output<typeof ContractCreateFields>;

/** The multipart body, for the OpenAPI document (the route reads it as a stream). */
export const contractCreateBodySchema = {
  type: 'object' as const,
  required: ['file', 'title', 'contractTypeId', 'expiredAt', 'signers'],
  properties: {
    file: {
      type: 'string' as const,
      format: 'binary',
      description:
        '.pdf (checked to be a readable, unencrypted PDF within the PDF limits, without active content; signatures it carries are verified) or .docx (converted to PDF by LibreOffice); at most 50 MB',
    },
    title: { type: 'string' as const, maxLength: contractLimits.title },
    contractTypeId: {
      type: 'integer' as const,
      minimum: 1,
      description: 'A contract type of the tenant; every tenant has 1 "Hợp đồng"',
    },
    expiredAt: {
      type: 'string' as const,
      format: 'date-time',
      description: 'Signing deadline, ISO 8601 with Z or an offset, in the future',
    },
    signers: {
      type: 'string' as const,
      description:
        'JSON array of {name, email, phone?, role? ("signer" default, or "viewer"), order, placement?, identityNumber?, taxCode?}; e-mails unique; the signers\' orders run 1..n, equal orders sign in parallel. placement {page?, x, y, width, height} (points from the bottom-left corner; page default the last) places the visible signature; default a box at the bottom of the last page, one per signer. identityNumber (CMND/CCCD, 9 to 12 digits, or a passport number) and taxCode (MST) are compared with what the signing certificate carries: a certificate naming another number is refused (SIGNER_IDENTITY_MISMATCH).',
      example:
        '[{"name":"Nguyễn Văn An","email":"an@example.com","phone":"0912345678","role":"signer","order":1}]',
    },
    description: { type: 'string' as const, maxLength: contractLimits.description },
    acceptInvalidSignatures: {
      type: 'string' as const,
      enum: ['true', 'false'],
      default: 'false',
      description:
        'A PDF that already carries signatures has them verified at upload; one that is not valid refuses the upload (422 EXISTING_SIGNATURE_INVALID) unless this is "true". The contract shows them in existingSignatures either way.',
    },
  },
};

export const ContractCreated = z
  .object({
    id: z.string(),
    title: z.string(),
    status: z.literal('draft'),
    fileUrl: z.string().openapi({
      description: 'Where the original PDF downloads (GET, same credential)',
    }),
  })
  .openapi('ContractCreated');

export const ContractIdParam = z.object({
  id: z
    .string()
    .max(64)
    .openapi({ param: { name: 'id', in: 'path' }, description: 'The contract id' }),
});

export const ExistingSignature = z
  .object({
    fieldName: z.string(),
    signerName: z
      .string()
      .nullable()
      .openapi({ description: "The signer certificate's common name, else the signature's /Name" }),
    signedAt: isoDateTime
      .nullable()
      .openapi({ description: "The timestamp's time, else the signature's /M" }),
    isValid: z.boolean(),
    integrityCheck: z.enum(['passed', 'failed']),
    certificateStatus: z.enum(['valid', 'expired', 'revoked', 'untrusted', 'unknown']),
    timestampVerified: z.boolean(),
    modifiedAfterSigning: z.enum(['none', 'allowed', 'disallowed']).openapi({
      description: 'What the uploaded file changed after this signature',
    }),
    certificateSubject: z.string().nullable(),
    problems: z.array(z.string()).openapi({ description: 'Why it is not valid, in English' }),
  })
  .openapi('ContractExistingSignature', {
    description:
      'A signature the uploaded PDF already carried, as verified at upload (GET /api/signing/verify verifies the newest version again)',
  });

export type ExistingSignature = z.output<typeof ExistingSignature>;

const Signer = z
  .object({
    name: z.string(),
    email: z.string(),
    phone: z.string().nullable(),
    role: z.enum(signerRoles),
    order: z.number().int(),
    status: z.enum(signerStatuses).openapi({
      description: 'waiting (turn not come), invited (e-mailed, may sign), signed, rejected',
    }),
    signedAt: isoDateTime.nullable(),
    method: z.enum(signingMethods).nullable(),
    identityNumber: z.string().nullable(),
    taxCode: z.string().nullable(),
  })
  .openapi('ContractSigner');

const ContractStatusSchema = z.enum(contractStatuses).openapi('ContractStatus', {
  description: 'cancelled is the state after DELETE',
});

export const ContractListItem = z
  .object({
    id: z.string(),
    title: z.string(),
    status: ContractStatusSchema,
    createdAt: isoDateTime,
    expiredAt: isoDateTime,
    signers: z.array(Signer),
  })
  .openapi('ContractListItem');

export const ContractListEnvelope = envelope(z.array(ContractListItem)).extend({
  meta: z.object({
    page: z.number().int(),
    limit: z.number().int(),
    total: z.number().int(),
    totalPages: z.number().int(),
  }),
});

const AuditEvent = z
  .object({
    seq: z.number().int(),
    action: z.string().openapi({
      description:
        "created, sent, viewed, downloaded, cancelled, expired, invitation_resent (the web app sent a signer's invitation again); the signing steps add session_initiated, otp_sent, otp_failed, signed, rejected, completed",
    }),
    at: isoDateTime,
    actor: z.object({
      kind: z.enum(['user', 'signer', 'system']),
      name: z.string(),
    }),
    clientAddress: z.string().nullable(),
    userAgent: z.string().nullable(),
    details: z.record(z.string(), z.unknown()),
    hash: z.string().openapi({ description: 'SHA-256 (hex) of the event and the previous hash' }),
  })
  .openapi('ContractAuditEvent');

export const ContractDetail = ContractListItem.extend({
  description: z.string().nullable(),
  contractType: z.object({ id: z.number().int(), name: z.string() }),
  fileName: z.string().openapi({ description: 'The uploaded file name' }),
  fileUrl: z.string(),
  signedFileUrl: z.string().nullable().openapi({ description: 'null until a signature exists' }),
  createdBy: z.object({ name: z.string(), email: z.string().nullable() }),
  sentAt: isoDateTime.nullable(),
  completedAt: isoDateTime.nullable(),
  rejectedAt: isoDateTime.nullable(),
  cancelledAt: isoDateTime.nullable(),
  cancelReason: z.string().nullable(),
  existingSignatures: z.array(ExistingSignature).openapi({
    description:
      'The signatures the uploaded PDF already carried, as verified at upload; [] for none',
  }),
  auditTrail: z.array(AuditEvent),
}).openapi('ContractDetail');

export const ContractListQuery = withDateRange(
  z.object({
    page: queryInteger.optional().openapi({ type: 'integer', default: 1, minimum: 1 }),
    limit: queryInteger.pipe(z.number().max(contractPageSize.max)).optional().openapi({
      type: 'integer',
      default: contractPageSize.default,
      minimum: 1,
      maximum: contractPageSize.max,
    }),
    status: z.enum(contractStatuses).optional(),
    search: z
      .string()
      .max(255)
      .optional()
      .transform((value) => (value?.trim() ? value.trim() : undefined))
      .openapi({
        description: 'Part of the title; letter case and Vietnamese diacritics ignored',
      }),
    ...dateRangeBounds({ from: 'createdAt from', to: 'createdAt up to' }),
    sortBy: z.enum(['createdAt', 'title', 'expiredAt', 'status']).default('createdAt'),
    order: z
      .string()
      .transform((value) => value.toUpperCase())
      .pipe(z.enum(['ASC', 'DESC']))
      .default('DESC')
      .openapi({ type: 'string', enum: ['ASC', 'DESC'], default: 'DESC' }),
  }),
);
export type ContractListQuery = z.output<typeof ContractListQuery>;

export const ContractSent = z
  .object({ id: z.string(), status: z.literal('signing'), sentAt: isoDateTime })
  .openapi('ContractSent');

export const CancelBody = z
  .object({
    reason: requiredText(contractLimits.reason),
  })
  .openapi('ContractCancelBody');

export const ContractCancelled = z
  .object({
    id: z.string(),
    status: z.literal('cancelled'),
    cancelledAt: isoDateTime,
    reason: z.string(),
  })
  .openapi('ContractCancelled');

export const downloadTypes = ['original', 'signed', 'audit'] as const;
export type DownloadType = (typeof downloadTypes)[number];

export const DownloadQuery = z.object({
  type: z.enum(downloadTypes).default('original'),
});

export const ContractCreatedEnvelope = envelope(ContractCreated);
export const ContractDetailEnvelope = envelope(ContractDetail);
export const ContractSentEnvelope = envelope(ContractSent);
export const ContractCancelledEnvelope = envelope(ContractCancelled);
