/**
 * Every permission the service knows, `resource:action`. Roles hold them; `*` holds all,
 * including ones added later. The README's table says which one guards which endpoint.
 */
export const permissionCatalog = {
  'organization:view': 'Read organizations of the directory',
  'role:view': 'Read roles of the directory',
  'user:view': 'Read users of the directory',
  'user:manage': 'Create, update, lock and bulk-sync users',
  'document:create': 'Create signing dossiers',
  'document:start': 'Start dossiers created with disableStart',
  'document:view': 'Look up dossiers, their files and history',
  'task:view': 'List and read signing tasks',
  'webhook:test': 'Send webhook.test to the organization subscriptions',
  'contract:create': 'Create contracts',
  'contract:view': 'Read the contracts one created, download them',
  'contract:view-all': 'Read and download every contract of the tenant',
  'contract:send': 'Send contracts for signing',
  'contract:cancel': 'Cancel draft and signing contracts',
  'signing:initiate': 'Open signing sessions',
} as const;

export type Permission = keyof typeof permissionCatalog;

export const allPermissions = Object.keys(permissionCatalog) as Permission[];

export function isKnownPermission(value: string): value is Permission {
  return value === '*' || Object.hasOwn(permissionCatalog, value);
}
