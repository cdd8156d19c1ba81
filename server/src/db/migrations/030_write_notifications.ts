/**
 * Several instances on one PostgreSQL database each keep what authenticating a request reads
 * (platform/credentialCache.ts). A key revoked or a user locked through one instance must reach
 * the others' caches at once: a statement-level trigger on each of those tables sends the
 * table's name on the `esign_writes` channel, delivered at commit to every instance listening
 * (db/postgres.ts). The tables are platform/credentialCache.ts's, written out: a shipped
 * migration never changes. SQLite needs nothing: its processes see the file's `data_version` move.
 */
export const writeNotifications = `-- SQLite: nothing to do (PRAGMA data_version tells other processes' commits).
SELECT 1;`;

export const writeNotificationsPostgres = `CREATE FUNCTION esign_notify_write() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  PERFORM pg_notify('esign_writes', TG_TABLE_NAME);
  RETURN NULL;
END;
$$;
${['api_keys', 'users', 'memberships', 'roles', 'role_permissions', 'tenants']
  .map(
    (table) => `CREATE TRIGGER ${table}_notify_write AFTER INSERT OR UPDATE OR DELETE ON ${table}
  FOR EACH STATEMENT EXECUTE FUNCTION esign_notify_write();`,
  )
  .join('\n')}`;
