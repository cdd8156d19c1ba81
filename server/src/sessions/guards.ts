import type { MiddlewareHandler } from 'hono';
import { contractSecurity, credentialAreas, integrationSecurity } from '../auth/areas';
import { authenticate } from '../auth/authenticate';
import { requirePermission } from '../auth/permissions';
import { type RateLimiter, rateLimit } from '../auth/rateLimit';
import type { AppEnv } from '../context';
import { pageCredentialHeader, requirePageCredential } from './access';
import { isTaskSession } from './queries';

/** The steps also take the signing page's credential (from the link exchange). */
export const stepSecurity: Record<string, string[]>[] = [
  ...contractSecurity,
  ...integrationSecurity.filter((scheme) => !('ApiKey' in scheme)),
  { SigningPage: [] },
];

/** A task's signer: the web app's Bearer token, a partner token, or a key bound to them. */
export const taskSigningSecurity: Record<string, string[]>[] = [
  ...contractSecurity,
  ...integrationSecurity.filter((scheme) => !('ApiKey' in scheme)),
];

/** Who may call the signing-session endpoints, as middleware chains. */
export interface SessionGuards {
  /** A partner credential holding `signing:initiate` (the handler checks the contract's scope). */
  partner: MiddlewareHandler<AppEnv>[];
  /** A task's signer: holds no contract permission; the session or task must be theirs. */
  taskSigner: MiddlewareHandler<AppEnv>[];
  /**
   * A session's step: the page credential of this very session (X-Signing-Token) when sent,
   * else a task signer for a task's session, else a partner.
   */
  step: MiddlewareHandler<AppEnv>;
}

export function sessionGuards(limiter: RateLimiter): SessionGuards {
  const partner = [
    authenticate(credentialAreas.contracts),
    rateLimit(limiter, 'api'),
    requirePermission('signing:initiate'),
  ];
  const page = [rateLimit(limiter, 'api'), requirePageCredential];
  // A task's signer holds no contract permission: stepContext checks the session is theirs.
  const taskSigner = [authenticate(credentialAreas.taskSigning), rateLimit(limiter, 'api')];
  const step: MiddlewareHandler<AppEnv> = async (c, next) => {
    const chain =
      c.req.header(pageCredentialHeader) !== undefined
        ? page
        : (await isTaskSession(c.get('deps').db, c.req.param('sessionId')))
          ? taskSigner
          : partner;
    const run = async (index: number): Promise<void> => {
      const middleware = chain[index];
      if (!middleware) {
        await next();
        return;
      }
      await middleware(c, () => run(index + 1));
    };
    await run(0);
  };
  return { partner, taskSigner, step };
}
