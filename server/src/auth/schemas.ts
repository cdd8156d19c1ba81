import { z } from '@hono/zod-openapi';
import { isoDateTime } from '../http/openapi';

export const LoginBody = z
  .object({
    username: z.string().min(1).max(255).openapi({ description: 'E-mail or login name' }),
    password: z.string().min(1).max(1024),
  })
  .openapi('LoginRequest');

export const RefreshBody = z
  .object({ refreshToken: z.string().min(1).max(512) })
  .openapi('RefreshRequest');

export const LoginServerBody = z
  .object({
    secretKey: z
      .string()
      .min(1)
      .max(512)
      .openapi({ description: 'Server secret of the integration' }),
    cccd: z
      .string()
      .min(1)
      .max(20)
      .openapi({ description: 'National citizen id number of the user' }),
  })
  .openapi('LoginServerRequest');

export const SessionTokens = z
  .object({
    accessToken: z.string(),
    refreshToken: z.string(),
    expiresIn: z.number().int().openapi({ example: 3600 }),
  })
  .openapi('SessionTokens');

export const PartnerLoginBody = z
  .object({
    username: z.string().min(1).max(255),
    tenantCode: z.string().min(1).max(255).optional(),
  })
  .openapi('PartnerLoginRequest');

export const MemberSchema = z
  .object({
    organizationCode: z.string().nullable(),
    organizationName: z.string().nullable(),
    roleCode: z.string(),
    roleName: z.string(),
  })
  .openapi('Member');

export const PartnerLoginData = z
  .object({
    accessToken: z.string(),
    userInfo: z.object({
      id: z.number().int(),
      username: z.string(),
      name: z.string(),
      email: z.string(),
      phone: z.string(),
      identityNumber: z.string(),
      organizationId: z.number().int(),
      status: z.number().int(),
      type: z.string(),
      address: z.string().nullable(),
      avatar: z.string().nullable(),
      memberOf: z.array(MemberSchema),
      updatedAt: isoDateTime,
      defaultSignature: z.string().nullable(),
      imageSignatures: z.array(z.string()),
      backgroundSignatures: z.array(z.string()),
    }),
    permission: z.array(z.string()),
  })
  .openapi('PartnerLoginData');
