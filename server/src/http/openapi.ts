import { OpenAPIHono, type RouteConfig, z } from '@hono/zod-openapi';
import type { Context } from 'hono';
import type { AppEnv } from '../context';
import { DomainError, validationError } from '../errors/domainError';
import { type ErrorStatus, statusOfCode } from './errorStatuses';

/**
 * A router whose zod schemas both validate and document: every domain builds its routes on
 * one of these and `app.ts` mounts them. A failed validation throws, so one handler shapes it.
 */
export function createRouter(): OpenAPIHono<AppEnv> {
  const router = new OpenAPIHono<AppEnv>({
    defaultHook: (result, c) => {
      if (result.success) return;
      if (result.target === 'query') {
        const repeated = Object.entries(c.req.queries()).find(([, values]) => values.length > 1);
        if (repeated) throw repeatedQueryParameter(repeated[0]);
      }
      throw validationError(result.error);
    },
  });
  const register = router.openapi;
  router.openapi = ((route, handler, hook) =>
    register(withTransportAnswers(route), handler, hook)) as typeof register;
  return router;
}

/**
 * A query parameter given twice (`?page=1&page=2`) is refused, not guessed at: 400
 * VALIDATION_ERROR naming it, details.code REPEATED.
 */
function repeatedQueryParameter(name: string): DomainError {
  return new DomainError('VALIDATION_ERROR', `${name}: must be given once`, {
    field: name,
    detailCode: 'REPEATED',
  });
}

/**
 * What the HTTP layer may answer for any operation before its own checks, added to the route's
 * documented answers so that every answer the server can give is listed for its operation:
 * 431 and 408 (headers over Node's limit, a request too slow: serve.ts), 400 BAD_REQUEST_TARGET (an undecodable path,
 * app.ts), 400 VALIDATION_ERROR for a path or query parameter (an over-long id, a repeated
 * parameter), 413 PAYLOAD_TOO_LARGE for a body over the route's limit (http/bodyLimit), 503
 * DATABASE_BUSY when a transaction still collides with others after its retries (PostgreSQL).
 */
function withTransportAnswers<R extends RouteConfig>(route: R): R {
  const { params, query, body } = route.request ?? {};
  refuseNulCharacters(route);
  const answers: ErrorCodes[] = [
    ['BAD_REQUEST_TARGET', 'REQUEST_TIMEOUT', 'HEADERS_TOO_LARGE', 'DATABASE_BUSY'],
    ...(params || query ? [['VALIDATION_ERROR']] : []),
    ...(body && !route.responses[413] ? [['PAYLOAD_TOO_LARGE']] : []),
  ];
  const own = route.responses as Record<string, ResponseConfig>;
  for (const [status, response] of Object.entries(errorResponses(...answers))) {
    own[status] = mergedAnswer(own[status], response as ResponseConfig);
  }
  return route;
}

type ResponseConfig = RouteConfig['responses'][string];

/**
 * U+0000 in any text of a path, a query or a JSON body is refused (400 VALIDATION_ERROR naming
 * the field): no name, title or key has one, and PostgreSQL's text cannot hold it, so the same
 * input gets the same answer on either database instead of a 500 on one of them.
 */
function refuseNulCharacters(route: RouteConfig): void {
  const request = route.request;
  if (request === undefined) return;
  const refined = <T>(schema: T): T =>
    schema instanceof z.ZodType ? (schema.superRefine(reportNul) as T) : schema;
  if (request.params) request.params = refined(request.params);
  if (request.query) request.query = refined(request.query);
  const json = request.body?.content['application/json'];
  if (json !== undefined && 'schema' in json) json.schema = refined(json.schema);
}

function reportNul(value: unknown, context: z.RefinementCtx, path: PropertyKey[] = []): void {
  if (typeof value === 'string') {
    if (value.includes('\u0000')) {
      context.addIssue({ code: 'custom', path, message: 'must not contain the character U+0000' });
    }
  } else if (Array.isArray(value)) {
    value.forEach((item, index) => {
      reportNul(item, context, [...path, index]);
    });
  } else if (typeof value === 'object' && value !== null) {
    for (const [key, item] of Object.entries(value)) reportNul(item, context, [...path, key]);
  }
}

/** A documented error answer with more codes: the enum of both, or the new one alone. */
function mergedAnswer(known: ResponseConfig | undefined, added: ResponseConfig): ResponseConfig {
  const codes = (answer: ResponseConfig | undefined): string[] => {
    const media = answer && 'content' in answer ? answer.content?.['application/json'] : undefined;
    const schema = media && 'schema' in media ? media.schema : undefined;
    return schema instanceof z.ZodObject && schema.shape.code instanceof z.ZodEnum
      ? (schema.shape.code.options as string[])
      : [];
  };
  if (!known) return added;
  const all = [...codes(known), ...codes(added).filter((code) => !codes(known).includes(code))];
  if (all.length === codes(known).length) return known;
  return { ...known, content: { 'application/json': { schema: errorBodyWithCodes(all) } } };
}

export const ErrorBodySchema = z
  .object({
    statusCode: z.number().int().openapi({ description: 'The HTTP status, repeated' }),
    message: z.string(),
    error: z.string().openapi({ description: 'Reason phrase of the status', example: 'Not Found' }),
    code: z.string().openapi({ description: "The spec's error code", example: 'FILE_NOT_FOUND' }),
    details: z
      .object({
        field: z
          .string()
          .optional()
          .openapi({ description: 'The input at fault, e.g. `files.0.fileUrl`' }),
        code: z.string().optional(),
        triesLeft: z.number().int().min(0).optional().openapi({
          description:
            'OTP_INVALID: how many more wrong codes are taken before the session locks or the signer must wait',
        }),
      })
      .optional(),
  })
  .openapi('Error');

const errorDescriptions: Record<ErrorStatus, string> = {
  400: 'Invalid input',
  401: 'Not authenticated',
  403: 'Insufficient permission or tenant mismatch',
  404: 'Not found or outside the caller scope',
  408: 'The request did not arrive in time (headers or body too slow)',
  409: 'Conflict',
  410: 'Gone',
  413: 'Request body or fetched file too large',
  415: 'Unsupported media type',
  422: 'Business rule not met',
  429: 'Rate limit exceeded',
  431: 'Request header fields too large (over 16 KB together)',
  500: 'Internal server error',
  502: 'A server fetching a file for the request failed',
  503: 'Service unavailable',
};

/** The `code` values an operation can answer; the status of each is the edge table's. */
export type ErrorCodes = readonly string[];

/** What every route behind `authenticate`, `rateLimit` and a permission can answer first. */
export const guardErrors = [
  'UNAUTHORIZED',
  'API_KEY_LEGACY_NOT_SUPPORTED',
  'FORBIDDEN',
  'RATE_LIMITED',
] as const satisfies ErrorCodes;

/** What a route with a JSON body answers before its handler: bad JSON, media type, schema. */
export const jsonBodyErrors = [
  'VALIDATION_ERROR',
  'INVALID_JSON',
  'UNSUPPORTED_MEDIA_TYPE',
] as const satisfies ErrorCodes;

/** `tenantCode` resolution (tenancy/resolveTenant): partner login and the directory. */
export const tenantCodeErrors = [
  'TENANT_CODE_REQUIRED',
  'TENANT_CODE_AMBIGUOUS',
  'TENANT_CODE_MISMATCH',
  'TENANT_CODE_NOT_FOUND',
] as const satisfies ErrorCodes;

/** Sent with every 429 (auth/rateLimit), so a generated client can wait exactly that long. */
const retryAfter = {
  'Retry-After': {
    description: 'Seconds until the rate-limit window ends',
    required: true,
    schema: { type: 'integer' as const, minimum: 1, maximum: 60 },
  },
};

/**
 * Sent with a 503 that names a busy resource (a full conversion queue, every PDF reader busy):
 * when to try again.
 */
const retryAfterBusy = {
  'Retry-After': {
    description: 'Seconds to wait before trying again (sent when the service is busy)',
    required: false,
    schema: { type: 'integer' as const, minimum: 1, maximum: 3600 },
  },
};

/**
 * One schema per list of codes, shared by every route answering with that list (most share the
 * guards' 401, 403 and 429): hundreds of routes' copies were memory held from start to exit.
 */
const errorBodies = new Map<string, z.ZodType>();

function errorBodyWithCodes(codes: string[]): z.ZodType {
  const key = JSON.stringify(codes);
  let schema = errorBodies.get(key);
  if (!schema) {
    schema = ErrorBodySchema.extend({ code: z.enum(codes as [string, ...string[]]) });
    errorBodies.set(key, schema);
  }
  return schema;
}

/**
 * The error responses of a route, for the OpenAPI document: each status with the `code` values
 * the route can answer (an enum in the schema), merged from several lists in order, e.g.
 * `errorResponses(guardErrors, ['DOCUMENT_NOT_FOUND'])`. A 429 documents Retry-After,
 * a 503 the Retry-After its busy answers send.
 */
export function errorResponses(...lists: ErrorCodes[]) {
  const merged = new Map<ErrorStatus, string[]>();
  for (const code of lists.flat()) {
    const status = statusOfCode(code);
    if (status === 500)
      throw new Error(`Error code ${code} has no status in http/errorStatuses.ts`);
    const known = merged.get(status) ?? [];
    if (!known.includes(code)) merged.set(status, [...known, code]);
  }
  return Object.fromEntries(
    [...merged].map(([status, codes]) => [
      status,
      {
        description: errorDescriptions[status],
        ...(status === 429 ? { headers: retryAfter } : {}),
        ...(status === 503 ? { headers: retryAfterBusy } : {}),
        content: { 'application/json': { schema: errorBodyWithCodes(codes) } },
      },
    ]),
  );
}

/** An ISO 8601 instant (`format: date-time`), as the one clock writes them. */
export const isoDateTime = z.iso.datetime({ offset: true });

/** The OpenAPI shape of a query bound that takes a date-time or a bare calendar date. */
export const dateOrDateTime = {
  anyOf: [
    { type: 'string' as const, format: 'date-time' },
    { type: 'string' as const, format: 'date' },
  ],
};

/**
 * `fromDate` / `toDate` of a list: an ISO 8601 date-time with `Z` or an offset, or a calendar
 * date (UTC); a bare date as upper bound covers its whole day. Normalised to UTC.
 */
function queryDateBound(endOfDay: boolean) {
  return z
    .union([isoDateTime, z.iso.date()], { error: 'must be an ISO 8601 date or date-time' })
    .transform((value) =>
      value.length === 10
        ? `${value}T${endOfDay ? '23:59:59.999' : '00:00:00.000'}Z`
        : new Date(value).toISOString(),
    )
    .openapi({ ...dateOrDateTime, example: '2026-11-25T00:00:00Z' });
}

/**
 * The `fromDate` / `toDate` fields of a list query, both optional (spread them into the query's
 * object where they belong in the documented parameter order); `described` says what they bound.
 * Pair with `withDateRange`, which refuses a range that runs backwards.
 */
export function dateRangeBounds(described?: { from: string; to: string }) {
  const fromDate = queryDateBound(false).optional();
  const toDate = queryDateBound(true).optional();
  return described
    ? {
        fromDate: fromDate.openapi({ description: described.from }),
        toDate: toDate.openapi({ description: described.to }),
      }
    : { fromDate, toDate };
}

/**
 * A list query with `dateRangeBounds`: a `toDate` before `fromDate` is a 400 VALIDATION_ERROR on
 * `toDate` ("must not be before fromDate"), the same for every list.
 */
export function withDateRange<
  T extends z.ZodType<{ fromDate?: string | undefined; toDate?: string | undefined }>,
>(query: T) {
  return query.superRefine((value, context) => {
    if (value.fromDate && value.toDate && value.fromDate > value.toDate) {
      context.addIssue({
        code: 'custom',
        path: ['toDate'],
        message: 'must not be before fromDate',
      });
    }
  });
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
    timestamp: isoDateTime,
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
