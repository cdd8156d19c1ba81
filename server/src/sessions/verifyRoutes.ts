import { createRoute } from '@hono/zod-openapi';
import { contractSecurity, credentialAreas } from '../auth/areas';
import { authenticate } from '../auth/authenticate';
import { requireAnyPermission } from '../auth/permissions';
import { type RateLimiter, rateLimit } from '../auth/rateLimit';
import { callerOf } from '../contracts/access';
import {
  createRouter,
  envelopeOf,
  errorResponses,
  guardErrors,
  jsonContent,
} from '../http/openapi';
import { pdfReadErrors } from '../pdf/signing/errors';
import { VerificationEnvelope, VerifyParam } from './schemas';

/** Loads with the first request that needs it: it brings the signing stack (see routes.ts). */
const verifyModule = () => import('./verify');

/** The verification of a contract's newest signed version, for whoever may read the contract. */
export function verifyRoutes(limiter: RateLimiter) {
  const router = createRouter();
  const verify = createRoute({
    tags: ['Signing sessions'],
    security: contractSecurity,
    middleware: [
      authenticate(credentialAreas.contracts),
      rateLimit(limiter, 'api'),
      requireAnyPermission(['contract:view', 'contract:view-all', 'signing:initiate']),
    ],
    method: 'get',
    path: '/signing/verify/{contractId}',
    operationId: 'verifyContractSignatures',
    summary: 'Verify the signatures of the newest signed version',
    description:
      'Every signature of the newest signed version, checked by the verification engine (integrity, certificate at the timestamp’s time, timestamp, changes after signing), named by the contract signer who made it. 404 CONTRACT_NOT_SIGNED before the first signature.',
    request: { params: VerifyParam },
    responses: {
      200: jsonContent(VerificationEnvelope, 'The verification result'),
      ...errorResponses(guardErrors, pdfReadErrors, ['CONTRACT_NOT_FOUND', 'CONTRACT_NOT_SIGNED']),
    },
  });
  router.openapi(verify, async (c) => {
    const { contractId } = c.req.valid('param');
    const { verifyContract } = await verifyModule();
    const data = await verifyContract(c.get('deps'), await callerOf(c), contractId);
    return c.json(envelopeOf(c, data), 200);
  });
  return router;
}
