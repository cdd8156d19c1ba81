import type { Insertable, Selectable, Updateable } from 'kysely';
import type { Db } from '../db/database';
import { parseJsonColumn, StringList } from '../db/jsonColumn';
import type { TemplatesTable } from '../db/schema';

export type TemplateRow = Selectable<TemplatesTable>;

/** `templates.fields`: the JSON array of the template's fillable field names. */
export function templateFieldsOf(row: { fields: string }): string[] {
  return parseJsonColumn(StringList, 'templates.fields', row.fields);
}

export function templateByCode(
  db: Db,
  organizationId: number,
  code: string,
): Promise<TemplateRow | undefined> {
  return db
    .selectFrom('templates')
    .selectAll()
    .where('organization_id', '=', organizationId)
    .where('code', '=', code)
    .executeTakeFirst();
}

/** Template rows with their tenant and organization codes, of a tenant or of one organization. */
export function findTemplates(db: Db, filter: { tenantId: number; organizationId?: number }) {
  let query = db
    .selectFrom('templates')
    .innerJoin('tenants', 'tenants.id', 'templates.tenant_id')
    .innerJoin('organizations', 'organizations.id', 'templates.organization_id')
    .selectAll('templates')
    .select(['tenants.code as tenant_code', 'organizations.code as organization_code'])
    .where('templates.tenant_id', '=', filter.tenantId)
    .orderBy('organizations.code')
    .orderBy('templates.code');
  if (filter.organizationId !== undefined) {
    query = query.where('templates.organization_id', '=', filter.organizationId);
  }
  return query.execute();
}

export function insertTemplate(db: Db, row: Insertable<TemplatesTable>): Promise<TemplateRow> {
  return db.insertInto('templates').values(row).returningAll().executeTakeFirstOrThrow();
}

export function updateTemplate(
  db: Db,
  templateId: number,
  changes: Updateable<TemplatesTable>,
): Promise<TemplateRow> {
  return db
    .updateTable('templates')
    .set(changes)
    .where('id', '=', templateId)
    .returningAll()
    .executeTakeFirstOrThrow();
}
