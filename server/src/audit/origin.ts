import type { Context } from 'hono';
import { findUserById } from '../auth/queries';
import { clientAddress } from '../auth/rateLimit';
import type { AppEnv } from '../context';
import type { Db } from '../db/database';
import type { AuditActor, AuditOrigin } from './subject';

/** User agents are kept for the trail, not as an unbounded input. */
const userAgentLimit = 512;

/** Where the request came from: the address (TRUST_PROXY decides) and the user agent. */
export function originOf(c: Context<AppEnv>): AuditOrigin {
  const userAgent = c.req.header('user-agent');
  return {
    clientAddress: clientAddress(c),
    userAgent: userAgent ? userAgent.slice(0, userAgentLimit) : null,
  };
}

/** An account as the trail names it: its name (else login), with its e-mail when it has one. */
export async function userActor(db: Db, userId: number, login: string): Promise<AuditActor> {
  const user = await findUserById(db, userId);
  const name = user?.name?.trim() || login;
  return { kind: 'user', userId, name: user?.email ? `${name} <${user.email}>` : name };
}
