import { AGENT_TICKET_KEYS_PATH } from '@esign/shared';
import { createRoute } from '@hono/zod-openapi';
import { type RateLimiter, rateLimit } from '../auth/rateLimit';
import { createRouter, errorResponses, jsonContent } from '../http/openapi';
import { agentTicketKeySet } from './agentTickets';
import { AgentTicketKeySet } from './schemas';

/**
 * GET /.well-known/esign-agent-keys.json (mounted at the root by app.ts): the public keys of the
 * desktop agent's signing tickets, which agents fetch once per server and pin.
 */
export function agentKeyRoutes(limiter: RateLimiter) {
  const router = createRouter();
  const keys = createRoute({
    tags: ['Signing sessions'],
    security: [],
    middleware: [rateLimit(limiter, 'api')] as const,
    method: 'get',
    path: AGENT_TICKET_KEYS_PATH,
    operationId: 'agentTicketKeys',
    summary: 'The public keys of the desktop agent’s signing tickets (JWKS)',
    description:
      'ES256 keys: the one signing tickets now and the next one (AGENT_TICKET_KEY_GENERATION + 1), so that agents which pinned this set on first use keep accepting tickets across one rotation.',
    responses: {
      200: jsonContent(AgentTicketKeySet, 'The key set'),
      ...errorResponses(['RATE_LIMITED']),
    },
  });
  router.openapi(keys, (c) => {
    c.header('Cache-Control', 'public, max-age=300');
    c.header('Access-Control-Allow-Origin', '*');
    return c.json(agentTicketKeySet(c.get('deps')), 200);
  });
  return router;
}
