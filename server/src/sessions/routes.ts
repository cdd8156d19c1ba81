import type { RateLimiter } from '../auth/rateLimit';
import { createRouter } from '../http/openapi';
import { sessionGuards } from './guards';
import { initiateRoutes } from './initiateRoutes';
import { linkRoutes } from './linkRoutes';
import { stepRoutes } from './stepRoutes';
import { tokenRoutes } from './tokenRoutes';
import { verifyRoutes } from './verifyRoutes';

/**
 * The signing-session endpoints, mounted under /api by app.ts, one file per resource: opening
 * a session (initiateRoutes), a signing page's links (linkRoutes), the OTP, confirm and reject
 * steps (stepRoutes), the USB token's steps (tokenRoutes), verification (verifyRoutes); the
 * agent's keys are mounted at the root (agentKeyRoutes). The steps take either a partner
 * credential holding `signing:initiate` whose scope holds the contract, or the page credential
 * of this very session (X-Signing-Token): guards.ts.
 *
 * The handlers' modules load with the first request that needs them: they bring the signing
 * stack (ASN.1 and CMS libraries, PDF signing), which would otherwise cost every start memory.
 */
export function sessionRoutes(limiter: RateLimiter) {
  const guards = sessionGuards(limiter);
  return createRouter()
    .route('/', initiateRoutes(guards))
    .route('/', linkRoutes(limiter))
    .route('/', stepRoutes(guards))
    .route('/', tokenRoutes(guards))
    .route('/', verifyRoutes(limiter));
}
