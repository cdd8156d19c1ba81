import type { ApiKeyKind } from '../db/schema';

/** The user an operation is done as. */
export interface Actor {
  id: number;
  tenantId: number | null;
  username: string;
  isSuperAdmin: boolean;
}

/** Who is calling, after the credential was checked. */
export type Principal =
  | {
      kind: 'apiKey';
      keyId: number;
      keyKind: Exclude<ApiKeyKind, 'legacy'>;
      tenantId: number | null;
      organizationId: number | null;
      actor: Actor | null;
    }
  | { kind: 'accessToken'; actor: Actor }
  | { kind: 'partnerToken'; actor: Actor };

export type CredentialKind = Principal['kind'];

/** A stable name of the credential, for rate limiting and logs (never the secret). */
export function principalKey(principal: Principal): string {
  return principal.kind === 'apiKey'
    ? `key:${principal.keyId}`
    : `${principal.kind}:${principal.actor.id}`;
}
