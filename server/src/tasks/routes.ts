import { createRoute } from '@hono/zod-openapi';
import { credentialAreas, integrationSecurity } from '../auth/areas';
import { authenticate } from '../auth/authenticate';
import { type RateLimiter, rateLimit } from '../auth/rateLimit';
import { DocumentIdParam } from '../dossiers/schemas';
import { requirePermissionOrSigner } from '../dossiers/scope';
import {
  createRouter,
  envelopeOf,
  errorResponses,
  guardErrors,
  jsonContent,
} from '../http/openapi';
import type { Permission } from '../tenancy/permissionCatalog';
import {
  DossierHistoryEnvelope,
  TaskCodeParam,
  TaskDetailEnvelope,
  TaskListEnvelope,
  TaskListQuery,
} from './schemas';
import { dossierHistory, listTasks, taskDetail, taskScopeOf } from './service';

/** Endpoints 6, 7 and 8 (tasks and history), mounted under /api/integration by app.ts. */
export function taskRoutes(limiter: RateLimiter) {
  const router = createRouter();

  const guarded = (permission: Permission) => ({
    tags: ['Tasks and history'],
    security: integrationSecurity,
    middleware: [
      authenticate(credentialAreas.integration),
      rateLimit(limiter, 'api'),
      requirePermissionOrSigner(permission),
    ],
  });

  const list = createRoute({
    ...guarded('task:view'),
    method: 'get',
    path: '/tasks',
    operationId: 'listTasks',
    summary: "The caller's signing tasks (6)",
    description:
      'Pending records are tasks in which the caller takes part (directly, by a role held, or by delegation); handled records are the turns the caller handled, so one multi-signer step can appear twice. With X-API-Key: the key organization and its bound user. No tasks: 200 with total 0.',
    request: { query: TaskListQuery },
    responses: {
      200: jsonContent(TaskListEnvelope, 'One page of task items'),
      ...errorResponses(guardErrors, ['VALIDATION_ERROR']),
    },
  });
  router.openapi(list, async (c) => {
    const deps = c.get('deps');
    const scope = await taskScopeOf(deps, c.get('principal'));
    return c.json(envelopeOf(c, await listTasks(deps, scope, c.req.valid('query'))), 200);
  });

  const detail = createRoute({
    ...guarded('task:view'),
    method: 'get',
    path: '/tasks/{taskCode}',
    operationId: 'getTaskByCode',
    summary: 'One task with its assignee, files and history (7)',
    description: 'Unknown or out-of-scope taskCode: 404 TASK_NOT_FOUND.',
    request: { params: TaskCodeParam },
    responses: {
      200: jsonContent(TaskDetailEnvelope, 'The task item with assignee, files, history'),
      ...errorResponses(guardErrors, ['VALIDATION_ERROR', 'TASK_NOT_FOUND']),
    },
  });
  router.openapi(detail, async (c) => {
    const deps = c.get('deps');
    const scope = await taskScopeOf(deps, c.get('principal'));
    const data = await taskDetail(deps, scope, { code: c.req.valid('param').taskCode });
    return c.json(envelopeOf(c, data), 200);
  });

  const history = createRoute({
    ...guarded('document:view'),
    method: 'get',
    path: '/documents/{documentId}/history',
    operationId: 'getDossierHistory',
    summary: 'Approval history of a dossier, oldest first (8)',
    description: 'Unknown or out-of-scope documentId: 404 DOCUMENT_NOT_FOUND.',
    request: { params: DocumentIdParam },
    responses: {
      200: jsonContent(DossierHistoryEnvelope, 'The dossier state and every history record'),
      ...errorResponses(guardErrors, ['DOCUMENT_NOT_FOUND']),
    },
  });
  router.openapi(history, async (c) => {
    const data = await dossierHistory(c.get('deps'), c.get('principal'), {
      documentId: c.req.valid('param').documentId,
    });
    return c.json(envelopeOf(c, data), 200);
  });

  return router;
}
