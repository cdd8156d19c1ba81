import { postgresOf } from './sqlParts';

/**
 * Outside signers (external accounts) are per tenant: one citizen id or tax code may be the login
 * name of an external account in each tenant it signs for. Login names and e-mails are therefore
 * unique within a tenant (super-administrators, with no tenant, count as tenant 0), and unique in
 * the whole system among internal accounts (staff and super-administrators). That an internal
 * login name or e-mail is used by no account at all, external ones of other tenants included, and
 * that a login name is not another account's e-mail, are checked by the directory code
 * (assertIdentityFree), which indexes cannot express. The plain indexes keep login by
 * "login name or e-mail" (no tenant) an index lookup.
 */
export const tenantLogins = `
DROP INDEX users_username_key;
DROP INDEX users_email_key;
CREATE UNIQUE INDEX users_tenant_username_key ON users(COALESCE(tenant_id, 0), username_key);
CREATE UNIQUE INDEX users_tenant_email_key ON users(COALESCE(tenant_id, 0), email_key)
  WHERE email_key IS NOT NULL;
CREATE UNIQUE INDEX users_internal_username_key ON users(username_key) WHERE type = 'internal';
CREATE UNIQUE INDEX users_internal_email_key ON users(email_key)
  WHERE type = 'internal' AND email_key IS NOT NULL;
CREATE INDEX users_login_username ON users(username_key);
CREATE INDEX users_login_email ON users(email_key) WHERE email_key IS NOT NULL;
`;

/** PostgreSQL reads the same text (no type or dialect-specific syntax in it). */
export const tenantLoginsPostgres = postgresOf(tenantLogins);
