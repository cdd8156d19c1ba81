import { OpenAPIHono, z } from '@hono/zod-openapi';
import type { Context } from 'hono';
import type { AppEnv } from '../context';
import { validationError } from '../errors/apiError';

/**
 * A router whose zod schemas both validate and document: every domain builds its routes on
 * one of these and `app.ts` mounts them. A failed validation throws, so one handler shapes it.
 */
export function createRouter(): OpenAPIHono<AppEnv> {
  return new OpenAPIHono<AppEnv>({
    defaultHook: (result) => {
      if (!result.success) throw validationError(result.error);
    },
  });
}

export const ErrorBodySchema = z
  .object({
    statusCode: z.number().int(),
    message: z.string(),
    error: z.string(),
    code: z.string(),
    details: z.object({ field: z.string().optional(), code: z.string().optional() }).optional(),
  })
  .openapi('Error');

const errorDescriptions: Record<number, string> = {
  400: 'Invalid input',
  401: 'Not authenticated',
  403: 'Insufficient permission or tenant mismatch',
  404: 'Not found or outside the caller scope',
  409: 'Conflict',
  413: 'Request body too large',
  429: 'Rate limit exceeded',
};

export type ErrorStatus = keyof typeof errorDescriptions;

/** The error responses of a route, for the OpenAPI document. */
export function errorResponses(...statuses: ErrorStatus[]) {
  return Object.fromEntries(
    statuses.map((status) => [
      status,
      {
        description: errorDescriptions[status] ?? 'Error',
        content: { 'application/json': { schema: ErrorBodySchema } },
      },
    ]),
  );
}

/**
 * The body of a REST envelope: `statusCode` 200 in the body even where the HTTP status is 201
 * (the spec's dossier creation and partner login), `timestamp` from the one clock.
 */
export function envelopeOf<T>(c: Context<AppEnv>, data: T, message?: string) {
  return {
    statusCode: 200,
    ...(message !== undefined ? { message } : {}),
    data,
    timestamp: c.get('deps').clock.now().toISOString(),
  };
}

/** The REST envelope of the integration and contract APIs. */
export function envelope<T extends z.ZodType>(data: T) {
  return z.object({
    statusCode: z.number().int(),
    message: z.string().optional(),
    data,
    timestamp: z.string(),
  });
}

export function jsonContent<T extends z.ZodType>(schema: T, description: string) {
  return { description, content: { 'application/json': { schema } } };
}

/** Query flags arrive as strings; only `true` and `false` are booleans. */
export const queryBoolean = z.enum(['true', 'false']).transform((value) => value === 'true');

/** A positive integer given in a query string. */
export const queryInteger = z
  .string()
  .regex(/^\d+$/, 'must be a positive integer')
  .transform(Number)
  .pipe(z.number().int().min(1));

export const isoDateTime = z.iso.datetime({ offset: true });
