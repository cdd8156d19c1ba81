import { z } from '@hono/zod-openapi';
import { MemberSchema } from '../auth/schemas';
import { dateOrDateTime, isoDateTime, queryBoolean, queryInteger } from '../http/openapi';

/** Directory lists: page from 1, pageSize default 50, at most 200 (spec "Limits"). */
export const directoryPageSize = { default: 50, max: 200 } as const;
/** Bulk user sync: at most 200 rows per request. */
export const bulkUserLimit = 200;
/** Member rows per user: at most 50. */
export const memberLimit = 50;

/** `tenantCode` as sent; an empty value counts as absent so a global key gets TENANT_CODE_REQUIRED. */
const tenantCode = z
  .string()
  .max(255)
  .optional()
  .transform((value) => value || undefined)
  .openapi({
    description:
      'Tenant code: required with a global key; with an organization key optional and must match',
  });

const dateOnly = /^\d{4}-\d{2}-\d{2}$/;

/** `YYYY-MM-DD` naming a real day (no 2026-02-30). */
function isCalendarDate(value: string): boolean {
  const parsed = new Date(`${value}T00:00:00Z`);
  return !Number.isNaN(parsed.getTime()) && parsed.toISOString().startsWith(value);
}

/**
 * An ISO 8601 instant of a query (`updatedFrom`, `updatedTo`): a date-time with `Z` or an offset,
 * or a calendar date (UTC). `endOfDay` makes a bare date cover its whole day, for upper bounds.
 */
function queryInstant(endOfDay: boolean) {
  return z
    .string()
    .refine(
      (value) =>
        (dateOnly.test(value) && isCalendarDate(value)) || isoDateTime.safeParse(value).success,
      'must be an ISO 8601 date or date-time with offset',
    )
    .transform((value) => {
      if (!dateOnly.test(value)) return new Date(value).toISOString();
      return `${value}${endOfDay ? 'T23:59:59.999Z' : 'T00:00:00.000Z'}`;
    })
    .openapi({ ...dateOrDateTime, example: '2026-01-31T00:00:00Z' });
}

/** A non-negative integer of a query string (legacy statuses and types may be any value). */
const queryCode = z
  .string()
  .regex(/^\d+$/, 'must be a non-negative integer')
  .transform(Number)
  .openapi({ type: 'integer', minimum: 0 });

const pageSize = queryInteger.pipe(z.number().max(directoryPageSize.max)).optional().openapi({
  type: 'integer',
  default: directoryPageSize.default,
  minimum: 1,
  maximum: directoryPageSize.max,
});

const commonQuery = {
  tenantCode,
  q: z.string().max(255).optional().openapi({ description: 'Case-insensitive substring' }),
  updatedFrom: queryInstant(false).optional(),
  updatedTo: queryInstant(true).optional(),
  page: queryInteger.optional().openapi({ type: 'integer', default: 1, minimum: 1 }),
  pageSize,
};

const exact = (description: string) =>
  z.string().min(1).max(255).optional().openapi({ description });

export const OrganizationQuery = z.object({
  ...commonQuery,
  code: exact('Organization code, exact'),
  parentCode: exact('Direct children of this organization'),
  status: queryCode.optional(),
  type: queryCode.optional(),
});

export const RoleQuery = z.object({
  ...commonQuery,
  code: exact('Role code, exact (most roles share a default code)'),
  organizationCode: exact('Roles of this organization'),
  status: queryCode.optional(),
  isDepartmentHead: queryBoolean.optional().openapi({ type: 'boolean' }),
});

export const UserQuery = z.object({
  ...commonQuery,
  code: exact('User code, exact'),
  username: exact('Login name, exact (letter case ignored)'),
  email: exact('E-mail, exact (letter case ignored)'),
  phone: exact('Phone, exact'),
  identityNumber: exact('Identity number, exact'),
  organizationCode: exact('Users holding a role in this organization'),
  roleCode: exact('Users holding a role with this code'),
  roleName: exact('Users holding a role with this name'),
  status: z
    .enum(['1', '2', '3', '4'])
    .transform(Number)
    .optional()
    .openapi({
      type: 'integer',
      enum: [1, 2, 3, 4],
      description: '1 waiting, 2 active, 3 locked, 4 awaiting activation',
    }),
  hasCode: queryBoolean
    .optional()
    .openapi({ type: 'boolean', description: 'false: only users without a code' }),
});

export const TenantQuery = z.object({ tenantCode });

export const UserCodeParam = z.object({
  code: z
    .string()
    .min(1)
    .openapi({ param: { name: 'code', in: 'path' }, example: 'NV001' }),
});

const listOf = <T extends z.ZodType>(item: T, name: string) =>
  z
    .object({
      items: z.array(item),
      page: z.number().int(),
      pageSize: z.number().int(),
      total: z.number().int().openapi({ description: 'All matches, independent of paging' }),
    })
    .openapi(name);

export const OrganizationSchema = z
  .object({
    code: z.string(),
    name: z.string(),
    parentCode: z
      .string()
      .nullable()
      .openapi({ description: 'Null for the tenant root or a parent outside the tenant' }),
    type: z.number().int(),
    status: z
      .number()
      .int()
      .openapi({ description: '1 active, 2 stopped, 3 temporarily locked; old data may differ' }),
    address: z.string().nullable(),
    phone: z.string().nullable(),
  })
  .openapi('DirectoryOrganization');

export const RoleSchema = z
  .object({
    code: z.string(),
    name: z.string(),
    organizationCode: z
      .string()
      .nullable()
      .openapi({ description: 'Null when the owning organization is soft-deleted' }),
    isDepartmentHead: z.boolean(),
    status: z.number().int(),
  })
  .openapi('DirectoryRole');

export const UserSchema = z
  .object({
    code: z.string().nullable().openapi({ description: 'Null for accounts made in the web app' }),
    username: z.string(),
    name: z.string().nullable(),
    email: z.string().nullable(),
    phone: z.string().nullable(),
    identityNumber: z.string().nullable(),
    taxCode: z.string().nullable(),
    address: z.string().nullable(),
    gender: z.string().nullable(),
    status: z
      .number()
      .int()
      .openapi({ description: '1 waiting, 2 active, 3 locked, 4 awaiting activation' }),
    type: z.enum(['internal', 'external']),
    members: z.array(MemberSchema),
    createdAt: isoDateTime,
    updatedAt: isoDateTime,
  })
  .openapi('DirectoryUser');

export const OrganizationList = listOf(OrganizationSchema, 'DirectoryOrganizationList');
export const RoleList = listOf(RoleSchema, 'DirectoryRoleList');
export const UserList = listOf(UserSchema, 'DirectoryUserList');

export const MemberInputSchema = z
  .object({
    organizationCode: z.string().min(1).max(255),
    roleCode: z.string().max(255).optional().openapi({ description: 'Safe only when unique' }),
    roleName: z.string().max(255).optional().openapi({ description: 'Preferred' }),
  })
  .openapi('DirectoryMemberInput');

const optionalText = (max: number) => z.string().trim().max(max).nullable().optional();

/** Profile fields any write may carry; `null` clears a field on update. */
const profileFields = {
  name: optionalText(255),
  phone: optionalText(32),
  identityNumber: optionalText(32),
  taxCode: optionalText(32),
  address: optionalText(500),
  gender: optionalText(32),
  members: z.array(MemberInputSchema).max(memberLimit).optional(),
};

const identityFields = {
  email: z.email().max(255),
  username: z
    .string()
    .trim()
    .min(1)
    .max(255)
    .optional()
    .openapi({ description: 'Defaults to the e-mail' }),
};

const userCode = z.string().trim().min(1).max(64);

/** What `createUser` accepts (the operator CLI may leave `code` out). */
export const UserInputSchema = z.object({
  code: userCode.optional(),
  ...identityFields,
  ...profileFields,
});

/** A creation row, and a bulk row: `code` is the sync key and required. */
export const UserRowSchema = UserInputSchema.extend({ code: userCode });

export const UserCreateBody = UserRowSchema.extend({ tenantCode }).openapi('DirectoryUserCreate');

export const UserUpdateSchema = z.object({
  email: identityFields.email.optional().openapi({ description: 'Fixed: only the current value' }),
  username: identityFields.username.openapi({ description: 'Fixed: only the current value' }),
  ...profileFields,
});

export const UserUpdateBody = UserUpdateSchema.extend({ tenantCode }).openapi(
  'DirectoryUserUpdate',
);

export const UserStatusBody = z
  .object({
    tenantCode,
    status: z
      .number()
      .int()
      .refine((value) => value === 2 || value === 3, 'only 2 (active) or 3 (locked)')
      .openapi({ enum: [2, 3] }),
  })
  .openapi('DirectoryUserStatus');

export const UserBulkBody = z
  .object({
    tenantCode,
    users: z
      .array(
        // Rows are checked one by one by the service, so a bad row fails alone.
        z
          .record(z.string(), z.unknown())
          .openapi({ $ref: '#/components/schemas/DirectoryUserRow' } as never),
      )
      .min(1)
      .max(bulkUserLimit),
  })
  .openapi('DirectoryUserBulk');

export const DirectoryUserRow = UserRowSchema.openapi('DirectoryUserRow');

export const BulkRowResultSchema = z
  .object({
    code: z.string().nullable(),
    action: z.enum(['created', 'updated', 'failed']),
    errorCode: z.string().optional(),
    message: z.string().optional(),
  })
  .openapi('DirectoryUserBulkRow');

export const BulkResultSchema = z
  .object({
    total: z.number().int(),
    created: z.number().int(),
    updated: z.number().int(),
    failed: z.number().int(),
    results: z.array(BulkRowResultSchema),
  })
  .openapi('DirectoryUserBulkResult');

export type OrganizationQueryInput = z.infer<typeof OrganizationQuery>;
export type RoleQueryInput = z.infer<typeof RoleQuery>;
export type UserQueryInput = z.infer<typeof UserQuery>;
export type OrganizationItem = z.infer<typeof OrganizationSchema>;
export type RoleItem = z.infer<typeof RoleSchema>;
export type UserView = z.infer<typeof UserSchema>;
export type MemberInput = z.input<typeof MemberInputSchema>;
export type UserPatch = z.infer<typeof UserUpdateSchema>;
export type BulkRowResult = z.infer<typeof BulkRowResultSchema>;
export type BulkResult = z.infer<typeof BulkResultSchema>;
