import { CodedError } from '@esign/shared';
import { HTTPException } from 'hono/http-exception';
import { requestId } from 'hono/request-id';
import type { UnofficialStatusCode } from 'hono/utils/http-status';
import { RateLimiter } from './auth/rateLimit';
import { authRoutes } from './auth/routes';
import type { AppDeps } from './context';
import { contractRoutes } from './contracts/routes';
import { developmentOcspRoutes } from './dev/caRoutes';
import { developmentTsaRoutes } from './dev/tsaRoutes';
import { directoryRoutes } from './directory/routes';
import { fileRoutes } from './dossiers/fileRoutes';
import { dossierRoutes } from './dossiers/routes';
import { DomainError } from './errors/domainError';
import { bodyRefusalOf, guardBodies } from './http/bodyLimit';
import { docsRoutes } from './http/docs';
import { answerFor, errorAnswer } from './http/errorStatuses';
import { createRouter } from './http/openapi';
import { countRequest } from './metrics';
import { operationsRoutes } from './operations/routes';
import { clientClosedRequest, isClientAbort } from './platform/clientAbort';
import { discardNodeBody } from './platform/nodeBody';
import { redactCredentials } from './platform/redaction';
import { badRequestTarget, undecodablePath } from './requestTarget';
import { agentKeyRoutes } from './sessions/agentKeyRoutes';
import { sessionRoutes } from './sessions/routes';
import { taskRoutes } from './tasks/routes';
import { webRoutes } from './web/routes';
import { registerWebhookEvents, webhookRoutes } from './webhooks/routes';

export interface AppOptions {
  /** The limits to apply (the counts live in the database); the configured ones otherwise. */
  limiter?: RateLimiter;
}

/** Hono's own refusals (a body that is not JSON, a wrong content type) as the spec's errors. */
function fromHttpException(error: HTTPException): DomainError {
  if (error.status === 415) {
    return new DomainError('UNSUPPORTED_MEDIA_TYPE', 'Send the body as application/json');
  }
  if (error.status === 413) return new DomainError('PAYLOAD_TOO_LARGE', error.message);
  if (error.status === 400) return new DomainError('INVALID_JSON', error.message);
  return new DomainError('BAD_REQUEST', error.message);
}

/** The whole HTTP application, testable with `app.request()` and no socket. */
export function buildApp(deps: AppDeps, options: AppOptions = {}) {
  const limiter = options.limiter ?? new RateLimiter(deps.config.rateLimits);
  const app = createRouter();

  app.use(requestId());
  // The request line holds no field a secret travels under (its path is redacted below, and the
  // logger's streamWrite hook still runs over it): pino's key-path redaction, which costs several
  // times the rest of the line, is left out of this one line.
  const requestLog = deps.logger.child({}, { redact: [] });
  app.use(async (c, next) => {
    const logger = deps.logger.child({ requestId: c.get('requestId') });
    c.set('deps', deps);
    c.set('logger', logger);
    const started = performance.now();
    await next();
    if (c.req.method === 'HEAD') discardNodeBody(c.res);
    const ms = performance.now() - started;
    // By route pattern: the raw path holds ids and tokens.
    countRequest(c.req.method, c.req.routePath, c.res.status, ms);
    const target = new URL(c.req.url);
    requestLog.info(
      {
        requestId: c.get('requestId'),
        method: c.req.method,
        // The signing page's links hold their token in the path, presigned URLs in the query.
        path: redactCredentials(`${target.pathname}${target.search}`),
        route: c.req.routePath,
        status: c.res.status,
        ms: Math.round(ms),
      },
      'request',
    );
  });
  app.use(guardBodies());
  app.use(async (c, next) => {
    // Hono would route `%zz` as if it were text; the spec's 400 says what is wrong instead.
    const problem = undecodablePath(new URL(c.req.url).pathname);
    if (problem) throw badRequestTarget(problem);
    await next();
  });

  app.onError((error, c) => {
    // A refused body is answered as such, whatever its reader made of the cut-off stream.
    const refused = bodyRefusalOf(c);
    const coded =
      refused ??
      (error instanceof CodedError
        ? error
        : error instanceof HTTPException
          ? fromHttpException(error)
          : null);
    if (!coded && isClientAbort(error, c.req.raw)) {
      // Nobody is left to answer: not a failure of ours, and no 500 in the logs.
      c.get('logger')?.info({ reason: error.message }, 'client aborted the request');
      return c.body(null, clientClosedRequest as UnofficialStatusCode);
    }
    const answer = answerFor(coded ?? error);
    if (answer.status === 500) c.get('logger')?.error({ err: error }, 'unhandled error');
    for (const [name, value] of Object.entries(answer.headers)) c.header(name, value);
    return c.json(answer.body, answer.status);
  });

  app.notFound((c) => {
    const answer = errorAnswer(
      new DomainError('NOT_FOUND', `No route for ${c.req.method} ${c.req.path}`),
    );
    return c.json(answer.body, answer.status);
  });

  app.route('/', operationsRoutes());
  // People land in the web application; partners find the API reference at /api/docs.
  app.get('/', (c) => c.redirect('/app/dashboard', 302));
  app.route('/app', webRoutes(limiter));
  app.route('/api/auth', authRoutes(limiter));
  app.route('/api/integration/directory', directoryRoutes(limiter));
  app.route('/api/integration', dossierRoutes(limiter));
  app.route('/api/integration', taskRoutes(limiter));
  app.route('/api', fileRoutes(limiter));
  app.route('/api', contractRoutes(limiter));
  app.route('/api', sessionRoutes(limiter));
  app.route('/api', webhookRoutes(limiter));
  app.route('/api', developmentTsaRoutes(limiter));
  app.route('/api', developmentOcspRoutes(limiter));
  app.route('/', agentKeyRoutes(limiter));

  app.doc31('/api/openapi.json', {
    openapi: '3.1.0',
    info: {
      title: `${deps.config.serviceName} API`,
      version: '1.0',
      description:
        'Electronic contract signing service: authentication, the integration API (dossiers, files, tasks, history, directory, webhook test), the contract API and the webhooks it sends.',
    },
    servers: [{ url: deps.config.publicUrl }],
    tags: [
      { name: 'Authentication', description: 'Sessions and partner access tokens' },
      { name: 'Dossiers', description: 'Signing dossiers and their files (endpoints 1–5)' },
      { name: 'Tasks and history', description: 'Signing tasks and approval history (6–8)' },
      { name: 'Directory', description: 'Organizations, roles and users of a tenant (9–16)' },
      { name: 'Contracts', description: 'Contracts: upload, list, send, cancel, download' },
      {
        name: 'Signing sessions',
        description: 'Signing a contract: initiate, OTP, confirm, USB token, reject, verify',
      },
      { name: 'Webhooks', description: 'Webhook test, sandbox receiver and the events sent' },
      { name: 'Signing', description: 'PDF signatures: the development timestamp authority' },
    ],
  });
  registerWebhookEvents(app.openAPIRegistry);
  app.openAPIRegistry.registerComponent('securitySchemes', 'ApiKey', {
    type: 'apiKey',
    in: 'header',
    name: 'X-API-Key',
  });
  // The access token of login, refresh and login-server: the contract API accepts it.
  app.openAPIRegistry.registerComponent('securitySchemes', 'Bearer', {
    type: 'http',
    scheme: 'bearer',
    bearerFormat: 'JWT',
  });
  // The signing page's credential for one session's steps (POST /api/signing/page-credential).
  app.openAPIRegistry.registerComponent('securitySchemes', 'SigningPage', {
    type: 'apiKey',
    in: 'header',
    name: 'X-Signing-Token',
  });
  app.openAPIRegistry.registerComponent('securitySchemes', 'PartnerToken', {
    type: 'apiKey',
    in: 'header',
    name: 'x-access-token',
  });
  app.route('/api/docs', docsRoutes());
  return app;
}

export type App = ReturnType<typeof buildApp>;
