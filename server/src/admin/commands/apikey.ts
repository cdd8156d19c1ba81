import { z } from 'zod';
import {
  type IssuedBoundKey,
  importLegacyKeyOf,
  issueGlobalKey,
  issueOrganizationKey,
  keyExpiry,
  revokeApiKey,
} from '../../auth/apiKeys';
import { listApiKeys, userStatus } from '../../auth/queries';
import { tenantByCode } from '../../tenancy/resolveTenant';
import {
  type Command,
  command,
  forbiddenWith,
  listCommand,
  type Outcome,
  option,
  requiredWhen,
} from '../command';
import { readSecret } from '../secretInput';

/** The key appears here and nowhere else: not in logs, not in `apikey list`. */
function issuedOutcome(issued: IssuedBoundKey, description: string, warnings: string[]): Outcome {
  const owner = issued.owner;
  if (owner && owner.status !== userStatus.active) {
    warnings.push(
      `warning: ${owner.username} is not active (status ${owner.status}); the key is refused until the account is active.`,
    );
  }
  return {
    json: { id: issued.id, key: issued.key },
    lines: [
      `${description}, id ${issued.id}.`,
      'API key (shown once, store it now; it cannot be displayed again):',
      issued.key,
    ],
    warnings,
  };
}

function expiryText(expiresAt: string | null): string {
  return expiresAt === null ? 'never expires' : `expires ${expiresAt}`;
}

export const apikeyCommands: Command[] = [
  command({
    name: 'apikey create',
    options: z
      .object({
        tenant: option.text.optional(),
        org: option.text.optional(),
        user: option.text.optional(),
        expires: option.text.optional(),
        global: option.flag,
      })
      .superRefine(
        forbiddenWith('global', ['tenant', 'org'], '--global (a global key belongs to no tenant)'),
      )
      .superRefine(requiredWhen('global', false, ['tenant', 'org', 'user'])),
    prepare: (options, { now, check, required }) => {
      const raw = options.expires;
      // The expiry is judged against the clock of this run, so it is checked here.
      const expiresAt = raw === undefined ? null : check(() => keyExpiry(raw, now));
      if (options.global) {
        const login = options.user ?? null;
        return async (deps) => {
          const issued = await issueGlobalKey(deps, { login, expiresAt });
          const warnings: string[] = [];
          if (issued.owner?.is_super_admin) {
            warnings.push(
              `warning: the key is bound to the system super-administrator ${issued.owner.username}; it acts system-wide (spec rule 7). Prefer a tenant administrator.`,
            );
          }
          const binding = issued.owner ? `bound to ${issued.owner.username}` : 'bound to no user';
          return issuedOutcome(
            issued,
            `Created global API key ${binding}, ${expiryText(expiresAt)}`,
            warnings,
          );
        };
      }
      const tenantCode = required(options.tenant, 'tenant');
      const request = {
        organizationCode: required(options.org, 'org'),
        login: required(options.user, 'user'),
        expiresAt,
      };
      return async (deps) => {
        const tenant = await tenantByCode(deps.db, tenantCode);
        const issued = await issueOrganizationKey(deps, tenant, request);
        return issuedOutcome(
          issued,
          `Created organization API key for ${request.organizationCode} of tenant ${tenant.code}, bound to ${issued.owner?.username}, ${expiryText(expiresAt)}`,
          [],
        );
      };
    },
  }),
  listCommand({
    name: 'apikey list',
    key: 'apiKeys',
    header: ['ID', 'KIND', 'TENANT', 'ORGANIZATION', 'USER', 'CREATED', 'EXPIRES', 'REVOKED'],
    list: listApiKeys,
    row: (key) => [
      key.id,
      key.kind,
      key.tenantCode,
      key.organizationCode,
      key.username,
      key.createdAt,
      key.expiresAt,
      key.revokedAt,
    ],
  }),
  command({
    name: 'apikey revoke',
    options: z.object({ id: option.positiveInteger }),
    prepare: ({ id }) => {
      return async (deps) => {
        const result = await revokeApiKey(deps, id);
        return {
          json: { ...result },
          lines: [
            result.alreadyRevoked
              ? `API key ${id} was already revoked at ${result.revokedAt}; nothing changed.`
              : `Revoked API key ${id} at ${result.revokedAt}.`,
          ],
        };
      };
    },
  }),
  command({
    name: 'apikey import-legacy',
    options: z.object({
      tenant: option.text,
      org: option.text,
      user: option.text,
      key: option.text,
    }),
    prepare: ({ tenant: tenantCode, org: organizationCode, user: login, key: rawKey }) => {
      return async (deps) => {
        const plaintext = await readSecret(rawKey);
        const tenant = await tenantByCode(deps.db, tenantCode);
        const id = await importLegacyKeyOf(deps, tenant, { organizationCode, login, plaintext });
        return {
          json: { id, kind: 'legacy' },
          lines: [
            `Recorded legacy key ${id} of ${organizationCode} (tenant ${tenant.code}) by hash only; requests with it get 401 API_KEY_LEGACY_NOT_SUPPORTED.`,
          ],
        };
      };
    },
  }),
];
