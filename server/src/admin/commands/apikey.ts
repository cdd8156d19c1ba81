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
  type Args,
  type Command,
  flagOptions,
  listCommand,
  type Outcome,
  valueOptions,
} from '../command';
import { readSecret } from '../secretInput';

function expiryOf(args: Args, now: Date): string | null {
  const raw = args.optionalText('expires');
  return raw === undefined ? null : args.check(() => keyExpiry(raw, now));
}

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
  {
    name: 'apikey create',
    options: { ...valueOptions('tenant', 'org', 'user', 'expires'), ...flagOptions('global') },
    prepare: (args, now) => {
      const expiresAt = expiryOf(args, now);
      if (args.flag('global')) {
        args.forbid(['tenant', 'org'], '--global (a global key belongs to no tenant)');
        const login = args.optionalText('user') ?? null;
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
      const tenantCode = args.text('tenant');
      const request = {
        organizationCode: args.text('org'),
        login: args.text('user'),
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
  },
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
  {
    name: 'apikey revoke',
    options: valueOptions('id'),
    prepare: (args) => {
      const id = args.positiveInteger('id');
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
  },
  {
    name: 'apikey import-legacy',
    options: valueOptions('tenant', 'org', 'user', 'key'),
    prepare: (args) => {
      const tenantCode = args.text('tenant');
      const organizationCode = args.text('org');
      const login = args.text('user');
      const rawKey = args.text('key');
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
  },
];
