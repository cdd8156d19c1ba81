import { postgresOf } from './sqlParts';

/**
 * Tenancy, directory and credentials. A tenant is the root of an organization tree; codes of
 * organizations and roles are indexed but not unique because legacy data repeats them (the
 * spec's *_AMBIGUOUS errors exist for that). Case-insensitive identity columns are stored
 * normalised (`*_key`) because SQLite's lower() only folds ASCII.
 */
export const foundation = `
CREATE TABLE tenants (
  id INTEGER PRIMARY KEY,
  code TEXT NOT NULL,
  name TEXT NOT NULL,
  developer_email TEXT,
  developer_phone TEXT,
  created_at TEXT NOT NULL
);
CREATE INDEX tenants_code ON tenants(code);

CREATE TABLE organizations (
  id INTEGER PRIMARY KEY,
  tenant_id INTEGER NOT NULL REFERENCES tenants(id),
  parent_id INTEGER REFERENCES organizations(id),
  code TEXT NOT NULL,
  name TEXT NOT NULL,
  type INTEGER NOT NULL DEFAULT 1,
  status INTEGER NOT NULL DEFAULT 1,
  address TEXT,
  phone TEXT,
  deleted_at TEXT,
  created_at TEXT NOT NULL,
  updated_at TEXT NOT NULL
);
CREATE INDEX organizations_tenant_code ON organizations(tenant_id, code);
CREATE INDEX organizations_parent ON organizations(parent_id);
CREATE INDEX organizations_tenant_updated ON organizations(tenant_id, updated_at);

CREATE TABLE roles (
  id INTEGER PRIMARY KEY,
  tenant_id INTEGER NOT NULL REFERENCES tenants(id),
  organization_id INTEGER NOT NULL REFERENCES organizations(id),
  code TEXT NOT NULL,
  name TEXT NOT NULL,
  is_department_head INTEGER NOT NULL DEFAULT 0,
  status INTEGER NOT NULL DEFAULT 1,
  created_at TEXT NOT NULL,
  updated_at TEXT NOT NULL
);
CREATE INDEX roles_organization_name ON roles(organization_id, name);
CREATE INDEX roles_tenant_code ON roles(tenant_id, code);
CREATE INDEX roles_tenant_updated ON roles(tenant_id, updated_at);

CREATE TABLE role_permissions (
  role_id INTEGER NOT NULL REFERENCES roles(id) ON DELETE CASCADE,
  permission TEXT NOT NULL,
  PRIMARY KEY (role_id, permission)
) WITHOUT ROWID;

CREATE TABLE users (
  id INTEGER PRIMARY KEY,
  tenant_id INTEGER REFERENCES tenants(id),
  organization_id INTEGER REFERENCES organizations(id),
  code TEXT,
  username TEXT NOT NULL,
  username_key TEXT NOT NULL,
  email TEXT,
  email_key TEXT,
  name TEXT,
  phone TEXT,
  identity_number TEXT,
  tax_code TEXT,
  address TEXT,
  gender TEXT,
  status INTEGER NOT NULL,
  type TEXT NOT NULL CHECK (type IN ('internal', 'external')),
  is_super_admin INTEGER NOT NULL DEFAULT 0,
  password_hash TEXT,
  created_at TEXT NOT NULL,
  updated_at TEXT NOT NULL
);
CREATE UNIQUE INDEX users_username_key ON users(username_key);
CREATE UNIQUE INDEX users_email_key ON users(email_key) WHERE email_key IS NOT NULL;
CREATE INDEX users_tenant_code ON users(tenant_id, code);
CREATE INDEX users_tenant_updated ON users(tenant_id, updated_at);
CREATE INDEX users_tenant_identity ON users(tenant_id, identity_number);
CREATE INDEX users_tenant_phone ON users(tenant_id, phone);

CREATE TABLE memberships (
  user_id INTEGER NOT NULL REFERENCES users(id),
  organization_id INTEGER NOT NULL REFERENCES organizations(id),
  role_id INTEGER NOT NULL REFERENCES roles(id),
  created_at TEXT NOT NULL,
  PRIMARY KEY (user_id, organization_id)
) WITHOUT ROWID;
CREATE INDEX memberships_role ON memberships(role_id);
CREATE INDEX memberships_organization ON memberships(organization_id);

CREATE TABLE api_keys (
  id INTEGER PRIMARY KEY,
  public_id TEXT NOT NULL UNIQUE,
  kind TEXT NOT NULL CHECK (kind IN ('organization', 'global', 'legacy')),
  tenant_id INTEGER REFERENCES tenants(id),
  organization_id INTEGER REFERENCES organizations(id),
  user_id INTEGER REFERENCES users(id),
  secret_hash TEXT NOT NULL UNIQUE,
  expires_at TEXT,
  revoked_at TEXT,
  last_used_at TEXT,
  created_at TEXT NOT NULL
);

CREATE TABLE refresh_tokens (
  id INTEGER PRIMARY KEY,
  user_id INTEGER NOT NULL REFERENCES users(id),
  family_id TEXT NOT NULL,
  token_hash TEXT NOT NULL UNIQUE,
  expires_at TEXT NOT NULL,
  used_at TEXT,
  revoked_at TEXT,
  created_at TEXT NOT NULL
);
CREATE INDEX refresh_tokens_family ON refresh_tokens(family_id);

CREATE TABLE embedding_origins (
  id INTEGER PRIMARY KEY,
  tenant_id INTEGER NOT NULL REFERENCES tenants(id),
  origin TEXT NOT NULL,
  created_at TEXT NOT NULL,
  UNIQUE (tenant_id, origin)
);

CREATE TABLE webhook_subscriptions (
  id TEXT PRIMARY KEY,
  tenant_id INTEGER NOT NULL REFERENCES tenants(id),
  organization_id INTEGER NOT NULL REFERENCES organizations(id),
  url TEXT NOT NULL,
  events TEXT NOT NULL,
  secret_encrypted TEXT NOT NULL,
  active INTEGER NOT NULL DEFAULT 1,
  created_at TEXT NOT NULL,
  updated_at TEXT NOT NULL
);
CREATE INDEX webhook_subscriptions_organization ON webhook_subscriptions(organization_id, active);
`;

/** The same schema on PostgreSQL, translated by the common conventions. */
export const foundationPostgres = postgresOf(foundation);
