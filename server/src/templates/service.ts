import fs from 'node:fs/promises';
import { Readable } from 'node:stream';
import { buffer } from 'node:stream/consumers';
import type { AppDeps } from '../context';
import { type Db, inTransaction } from '../db/database';
import { DomainError, errors } from '../errors/domainError';
import {
  fillTemplate,
  readFormFields,
  TemplatePdfError,
  type TemplatePdfProblem,
  type TemplateValue,
  TemplateValueError,
} from '../pdf/fillTemplate';
import { isoNow } from '../platform/clock';
import type { StoredFile } from '../storage/fileStore';
import type { TenantRow } from '../tenancy/resolveTenant';
import { organizationByCode } from '../tenancy/service';
import {
  findTemplates,
  insertTemplate,
  type TemplateRow,
  templateByCode,
  templateFieldsOf,
  updateTemplate,
} from './queries';

/** Largest template file accepted, as for downloaded files (50 MiB). */
export const maxTemplateBytes = 50 * 1024 * 1024;
/** Longest text one `templateData` value may carry. */
export const maxTemplateValueLength = 10_000;

export interface TemplateView {
  id: number;
  tenantCode: string;
  organizationCode: string;
  code: string;
  name: string;
  /** Names of the fillable fields: the keys `templateData` may use. */
  fields: string[];
  sha256: string;
  size: number;
  createdAt: string;
  updatedAt: string;
}

function view(row: TemplateRow, tenantCode: string, organizationCode: string): TemplateView {
  return {
    id: row.id,
    tenantCode,
    organizationCode,
    code: row.code,
    name: row.name,
    fields: templateFieldsOf(row),
    sha256: row.sha256,
    size: row.size,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
  };
}

const pdfProblems: Record<TemplatePdfProblem, string> = {
  NOT_PDF: 'TEMPLATE_NOT_PDF',
  ENCRYPTED: 'TEMPLATE_PDF_ENCRYPTED',
  NO_FORM_FIELDS: 'TEMPLATE_WITHOUT_FORM_FIELDS',
};

function checkedText(value: string, field: string, max: number): string {
  const trimmed = value.trim().normalize('NFC');
  if (trimmed === '') throw errors.validation(field, `${field} must not be empty`, 'TOO_SMALL');
  if (trimmed.length > max) {
    throw errors.validation(field, `${field} must be at most ${max} characters`, 'TOO_BIG');
  }
  return trimmed;
}

/** The bytes of the file at `pdfPath`, at most maxTemplateBytes. */
async function readTemplateFile(pdfPath: string): Promise<Buffer> {
  const handle = await fs.open(pdfPath, 'r').catch((error: NodeJS.ErrnoException) => {
    throw new DomainError('TEMPLATE_FILE_UNREADABLE', `Cannot read ${pdfPath}: ${error.code}`, {
      field: 'file',
    });
  });
  try {
    const { size } = await handle.stat();
    if (size > maxTemplateBytes) {
      throw new DomainError('TEMPLATE_TOO_LARGE', 'A template may hold at most 50 MiB', {
        field: 'file',
      });
    }
    return await handle.readFile();
  } finally {
    await handle.close();
  }
}

/**
 * Registers (or replaces: same code in the same organization) a fillable PDF template. The file
 * must be a PDF with at least one fillable AcroForm field (400 TEMPLATE_NOT_PDF,
 * TEMPLATE_PDF_ENCRYPTED, TEMPLATE_WITHOUT_FORM_FIELDS otherwise); its bytes go to the file
 * store and its field names to the row. Replacing is safe: dossiers hold their own rendered copy.
 */
export async function registerTemplate(
  deps: Pick<AppDeps, 'db' | 'clock' | 'files'>,
  tenant: TenantRow,
  organizationCode: string,
  input: { code: string; name: string; pdfPath: string },
): Promise<{ template: TemplateView; replaced: boolean }> {
  const code = checkedText(input.code, 'code', 255);
  const name = checkedText(input.name, 'name', 255);
  const bytes = await readTemplateFile(input.pdfPath);
  let fields: string[];
  try {
    fields = (await readFormFields(bytes)).map((field) => field.name);
  } catch (error) {
    if (!(error instanceof TemplatePdfError)) throw error;
    throw new DomainError(pdfProblems[error.problem], error.message, { field: 'file' });
  }
  const stored = await deps.files.put(Readable.from(bytes));
  try {
    const result = await inTransaction(deps.db, async (trx) => {
      const organization = await organizationByCode(trx, tenant.id, organizationCode);
      const existing = await templateByCode(trx, organization.id, code);
      const now = isoNow(deps.clock);
      const content = {
        name,
        sha256: stored.sha256,
        size: stored.size,
        fields: JSON.stringify(fields),
        updated_at: now,
      };
      const row = existing
        ? await updateTemplate(trx, existing.id, content)
        : await insertTemplate(trx, {
            ...content,
            tenant_id: tenant.id,
            organization_id: organization.id,
            code,
            created_at: now,
          });
      return { template: view(row, tenant.code, organization.code), replaced: !!existing };
    });
    deps.files.keep(stored);
    return result;
  } catch (error) {
    await deps.files.remove(stored);
    throw error;
  }
}

/** Templates of a tenant, or of one organization of it, by organization code and code. */
export async function listTemplates(
  db: Db,
  tenant: TenantRow,
  organizationCode?: string,
): Promise<TemplateView[]> {
  const organization =
    organizationCode === undefined
      ? undefined
      : await organizationByCode(db, tenant.id, organizationCode);
  const rows = await findTemplates(db, { tenantId: tenant.id, organizationId: organization?.id });
  return rows.map((row) => view(row, row.tenant_code, row.organization_code));
}

/**
 * `templateData` as the form filler takes it: absent or null is no data; otherwise an object
 * whose values are strings, numbers, booleans or null (400 VALIDATION_ERROR at the entry).
 */
function templateValues(templateData: unknown, at: string): Record<string, TemplateValue> {
  if (templateData === undefined || templateData === null) return {};
  if (typeof templateData !== 'object' || Array.isArray(templateData)) {
    throw errors.validation(
      at,
      `${at} must be an object of field names and values`,
      'INVALID_TYPE',
    );
  }
  const values: Record<string, TemplateValue> = {};
  for (const [key, value] of Object.entries(templateData)) {
    const field = `${at}.${key}`;
    if (value !== null && !['string', 'number', 'boolean'].includes(typeof value)) {
      throw errors.validation(
        field,
        `${field} must be a string, number, boolean or null`,
        'INVALID_TYPE',
      );
    }
    if (typeof value === 'string' && value.length > maxTemplateValueLength) {
      throw errors.validation(
        field,
        `${field} must be at most ${maxTemplateValueLength} characters`,
        'TOO_BIG',
      );
    }
    values[key] = value as TemplateValue;
  }
  return values;
}

/**
 * Renders a template of the organization with `templateData` into a new flattened PDF, written
 * through deps.files.put. The caller owns the result: deps.files.remove(stored) when its
 * transaction fails, deps.files.keep(stored) after it commits.
 *
 * `field` locates the file item in the caller's input: the item (`files.0`) or its
 * `templateCode` (`files.0.templateCode`); errors point at `<item>.templateCode` (400
 * TEMPLATE_NOT_FOUND) or `<item>.templateData.<key>` (400 VALIDATION_ERROR for a value that is
 * not a string, number, boolean or null; TEMPLATE_FIELD_UNKNOWN for a key that names no field;
 * TEMPLATE_DATA_INVALID for a value the field cannot show).
 */
export async function renderTemplate(
  deps: Pick<AppDeps, 'db' | 'files'>,
  organizationId: number,
  templateCode: string,
  templateData: unknown,
  field: string,
): Promise<StoredFile> {
  const item = field.endsWith('.templateCode') ? field.slice(0, -'.templateCode'.length) : field;
  const template = await templateByCode(deps.db, organizationId, templateCode);
  if (!template) {
    throw new DomainError('TEMPLATE_NOT_FOUND', `No template ${templateCode} in the organization`, {
      field: `${item}.templateCode`,
    });
  }
  const values = templateValues(templateData, `${item}.templateData`);
  const opened = await deps.files.open(template.sha256);
  const source = await buffer(opened.stream);
  let rendered: Uint8Array;
  try {
    rendered = await fillTemplate(source, values);
  } catch (error) {
    if (!(error instanceof TemplateValueError)) throw error;
    throw new DomainError(
      error.reason === 'UNKNOWN_FIELD' ? 'TEMPLATE_FIELD_UNKNOWN' : 'TEMPLATE_DATA_INVALID',
      `${item}.templateData.${error.key}: ${error.message}`,
      { field: `${item}.templateData.${error.key}` },
    );
  }
  return deps.files.put(Readable.from(Buffer.from(rendered)));
}
