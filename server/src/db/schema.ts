import type { Generated } from 'kysely';

/** Row types of every table, as Kysely sees them. Timestamps are ISO 8601 UTC strings. */
export interface TenantsTable {
  id: Generated<number>;
  code: string;
  name: string;
  developer_email: string | null;
  developer_phone: string | null;
  created_at: string;
}

export interface OrganizationsTable {
  id: Generated<number>;
  tenant_id: number;
  parent_id: number | null;
  code: string;
  name: string;
  type: number;
  status: number;
  address: string | null;
  phone: string | null;
  deleted_at: string | null;
  created_at: string;
  updated_at: string;
}

export interface RolesTable {
  id: Generated<number>;
  tenant_id: number;
  organization_id: number;
  code: string;
  name: string;
  is_department_head: number;
  status: number;
  created_at: string;
  updated_at: string;
}

export interface RolePermissionsTable {
  role_id: number;
  permission: string;
}

export type UserType = 'internal' | 'external';

export interface UsersTable {
  id: Generated<number>;
  tenant_id: number | null;
  organization_id: number | null;
  code: string | null;
  username: string;
  username_key: string;
  email: string | null;
  email_key: string | null;
  name: string | null;
  phone: string | null;
  identity_number: string | null;
  tax_code: string | null;
  address: string | null;
  gender: string | null;
  status: number;
  type: UserType;
  is_super_admin: number;
  password_hash: string | null;
  created_at: string;
  updated_at: string;
}

export interface MembershipsTable {
  user_id: number;
  organization_id: number;
  role_id: number;
  created_at: string;
}

export type ApiKeyKind = 'organization' | 'global' | 'legacy';

export interface ApiKeysTable {
  id: Generated<number>;
  public_id: string;
  kind: ApiKeyKind;
  tenant_id: number | null;
  organization_id: number | null;
  user_id: number | null;
  secret_hash: string;
  expires_at: string | null;
  revoked_at: string | null;
  last_used_at: string | null;
  created_at: string;
}

export interface RefreshTokensTable {
  id: Generated<number>;
  user_id: number;
  family_id: string;
  token_hash: string;
  expires_at: string;
  used_at: string | null;
  revoked_at: string | null;
  created_at: string;
}

export interface EmbeddingOriginsTable {
  id: Generated<number>;
  tenant_id: number;
  origin: string;
  created_at: string;
}

export interface WebhookSubscriptionsTable {
  id: string;
  tenant_id: number;
  organization_id: number;
  url: string;
  /** JSON array of event names */
  events: string;
  secret_encrypted: string;
  active: number;
  created_at: string;
  updated_at: string;
}

export interface Database {
  tenants: TenantsTable;
  organizations: OrganizationsTable;
  roles: RolesTable;
  role_permissions: RolePermissionsTable;
  users: UsersTable;
  memberships: MembershipsTable;
  api_keys: ApiKeysTable;
  refresh_tokens: RefreshTokensTable;
  embedding_origins: EmbeddingOriginsTable;
  webhook_subscriptions: WebhookSubscriptionsTable;
}
