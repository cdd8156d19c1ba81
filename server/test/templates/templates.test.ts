import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { PDFDocument, PDFName } from 'pdf-lib';
import { localStoreOf } from '../../src/storage/localFileStore';
import { listTemplates, registerTemplate, renderTemplate } from '../../src/templates/service';
import type { TenantRow } from '../../src/tenancy/resolveTenant';
import { createOrganization } from '../../src/tenancy/service';
import { refusal } from '../processes/fixtures';
import { createHarness, type Harness, seedTenant } from '../support/harness';
import {
  choiceForm,
  darkPixels,
  encryptedPdf,
  exampleTemplateFile,
  makePdf,
  pdffonts,
  pdftotext,
  writeTemp,
} from './fixtures';

jest.setTimeout(60_000);

const exampleFields = ['tenHopDong', 'hoTen', 'soCccd', 'ngayKy', 'ghiChu', 'dongY'];

/** Every file under the store root except temp files. */
function storedFiles(h: Harness): string[] {
  const root = localStoreOf(h.deps.files).root;
  return (fs.readdirSync(root, { recursive: true }) as string[])
    .filter((name) => !name.startsWith('tmp'))
    .filter((name) => fs.statSync(path.join(root, name)).isFile());
}

async function tenantWorld(h: Harness) {
  const seeded = await seedTenant(h, 'DEMO');
  const tenant = (await h.deps.db
    .selectFrom('tenants')
    .selectAll()
    .where('id', '=', seeded.tenantId)
    .executeTakeFirstOrThrow()) as TenantRow;
  const branch = await createOrganization(h.deps.db, tenant, h.now(), {
    code: 'CN_HN',
    name: 'Chi nhánh Hà Nội',
  });
  return { tenant, rootId: seeded.rootOrganizationId, branchId: branch.id };
}

describe('Template registration: a fillable PDF (AcroForm) per organization and code', () => {
  let h: Harness;
  let tenant: TenantRow;
  const register = (code: string, pdfPath: string, organizationCode = 'DEMO') =>
    registerTemplate(h.deps, tenant, organizationCode, { code, name: 'Hợp đồng mẫu', pdfPath });
  const file = (name: string, bytes: Uint8Array | string) => writeTemp(h.dataDir, name, bytes);

  beforeAll(async () => {
    h = createHarness();
    ({ tenant } = await tenantWorld(h));
  });
  afterAll(() => h.close());

  it('stores the bytes in the file store (content-addressed) and records the field names', async () => {
    const bytes = fs.readFileSync(exampleTemplateFile);
    const { template, replaced } = await register('HD_MAU', exampleTemplateFile);
    expect(replaced).toBe(false);
    expect(template).toEqual({
      id: expect.any(Number),
      tenantCode: 'DEMO',
      organizationCode: 'DEMO',
      code: 'HD_MAU',
      name: 'Hợp đồng mẫu',
      fields: exampleFields,
      sha256: crypto.createHash('sha256').update(bytes).digest('hex'),
      size: bytes.length,
      createdAt: h.now(),
      updatedAt: h.now(),
    });
    expect(fs.readFileSync(localStoreOf(h.deps.files).pathOf(template.sha256)).equals(bytes)).toBe(
      true,
    );
    const row = await h.deps.db
      .selectFrom('templates')
      .selectAll()
      .where('id', '=', template.id)
      .executeTakeFirstOrThrow();
    expect(JSON.parse(row.fields)).toEqual(exampleFields);
  });

  it('the same code again replaces the template: same id, new bytes and fields', async () => {
    const { template: first } = await register('THAY', exampleTemplateFile);
    h.clock.advance(1000);
    const other = file('choice.pdf', await makePdf(choiceForm));
    const { template, replaced } = await register('THAY', other);
    expect(replaced).toBe(true);
    expect(template.id).toBe(first.id);
    expect(template.fields).toEqual(['maSo', 'thanhPho', 'gioiTinh']);
    expect(template.sha256).not.toBe(first.sha256);
    expect([template.createdAt, template.updatedAt]).toEqual([first.createdAt, h.now()]);
  });

  it('a file that is not a PDF: 400 TEMPLATE_NOT_PDF, nothing stored', async () => {
    const before = storedFiles(h);
    expect(
      await refusal(() => register('X', file('form.docx', 'PK\u0003\u0004 not a pdf'))),
    ).toMatchObject({ status: 400, code: 'TEMPLATE_NOT_PDF', field: 'file' });
    expect(storedFiles(h)).toEqual(before);
  });

  it('a damaged PDF (the right first bytes, no document behind them): 400 TEMPLATE_NOT_PDF', async () => {
    expect(
      await refusal(() => register('X', file('damaged.pdf', '%PDF-1.7\n%garbage\n'))),
    ).toMatchObject({ status: 400, code: 'TEMPLATE_NOT_PDF' });
  });

  it('a PDF without a form: 400 TEMPLATE_WITHOUT_FORM_FIELDS', async () => {
    const before = storedFiles(h);
    const plain = file('plain.pdf', await makePdf());
    expect(await refusal(() => register('X', plain))).toMatchObject({
      status: 400,
      code: 'TEMPLATE_WITHOUT_FORM_FIELDS',
      field: 'file',
    });
    expect(storedFiles(h)).toEqual(before);
  });

  it('a form with nothing to fill (only a push button): 400 TEMPLATE_WITHOUT_FORM_FIELDS', async () => {
    const buttonOnly = await makePdf((form, page) =>
      form.createButton('ok').addToPage('OK', page, { x: 20, y: 20, width: 50, height: 20 }),
    );
    expect(await refusal(() => register('X', file('button.pdf', buttonOnly)))).toMatchObject({
      status: 400,
      code: 'TEMPLATE_WITHOUT_FORM_FIELDS',
    });
  });

  it('an encrypted PDF: 400 TEMPLATE_PDF_ENCRYPTED', async () => {
    const locked = file('locked.pdf', await encryptedPdf());
    expect(await refusal(() => register('X', locked))).toMatchObject({
      status: 400,
      code: 'TEMPLATE_PDF_ENCRYPTED',
      field: 'file',
    });
  });

  it('code and name must not be blank; code at most 255 characters', async () => {
    expect(await refusal(() => register(' ', exampleTemplateFile))).toMatchObject({
      status: 400,
      code: 'VALIDATION_ERROR',
      field: 'code',
    });
    expect(await refusal(() => register('C'.repeat(256), exampleTemplateFile))).toMatchObject({
      field: 'code',
    });
    expect(
      await refusal(() =>
        registerTemplate(h.deps, tenant, 'DEMO', {
          code: 'N',
          name: '',
          pdfPath: exampleTemplateFile,
        }),
      ),
    ).toMatchObject({ status: 400, code: 'VALIDATION_ERROR', field: 'name' });
  });

  it('an unknown organization: 404 ORGANIZATION_CODE_NOT_FOUND, and the bytes stored meanwhile are removed', async () => {
    const before = storedFiles(h);
    const fresh = file('fresh.pdf', await makePdf(choiceForm));
    expect(await refusal(() => register('X', fresh, 'NOPE'))).toMatchObject({
      status: 404,
      code: 'ORGANIZATION_CODE_NOT_FOUND',
    });
    expect(storedFiles(h)).toEqual(before);
  });

  it('lists the templates of the tenant or of one organization', async () => {
    await register('CN', exampleTemplateFile, 'CN_HN');
    const all = await listTemplates(h.deps.db, tenant);
    expect(all.map((t) => [t.organizationCode, t.code])).toEqual([
      ['CN_HN', 'CN'],
      ['DEMO', 'HD_MAU'],
      ['DEMO', 'THAY'],
    ]);
    expect((await listTemplates(h.deps.db, tenant, 'CN_HN')).map((t) => t.code)).toEqual(['CN']);
  });
});

describe('Template rendering: templateData filled with an embedded Unicode font, then flattened', () => {
  let h: Harness;
  let rootId: number;
  let branchId: number;
  const data = {
    tenHopDong: 'Hợp đồng thuê nhà số 01',
    hoTen: 'Nguyễn Văn Ánh',
    soCccd: '001099012345',
    ngayKy: '25/11/2026',
  };
  const render = (templateData: unknown, code = 'HD_MAU', field = 'files.0.templateCode') =>
    renderTemplate(h.deps, rootId, code, templateData, field);
  const renderedPath = (sha256: string) => localStoreOf(h.deps.files).pathOf(sha256);

  beforeAll(async () => {
    h = createHarness();
    const world = await tenantWorld(h);
    rootId = world.rootId;
    branchId = world.branchId;
    await registerTemplate(h.deps, world.tenant, 'DEMO', {
      code: 'HD_MAU',
      name: 'Hợp đồng mẫu',
      pdfPath: exampleTemplateFile,
    });
    await registerTemplate(h.deps, world.tenant, 'DEMO', {
      code: 'LUA_CHON',
      name: 'Lựa chọn',
      pdfPath: writeTemp(h.dataDir, 'choice.pdf', await makePdf(choiceForm)),
    });
  });
  afterAll(() => h.close());

  it('prints Vietnamese text exactly as sent: pdftotext reads "Nguyễn Văn Ánh" and "Hợp đồng"', async () => {
    const stored = await render(data);
    const text = await pdftotext(renderedPath(stored.sha256));
    expect(text).toContain('Nguyễn Văn Ánh');
    expect(text).toContain('Hợp đồng thuê nhà số 01');
    expect(text).toContain('001099012345');
    expect(text).toContain('25/11/2026');
    // The label printed beside the value comes from the template itself.
    expect(text).toMatch(/Bên B \(họ và tên\):\s+Nguyễn Văn Ánh/);
  });

  it('text sent decomposed (NFD) is printed composed (NFC)', async () => {
    const stored = await render({ hoTen: 'Nguyễn Văn Ánh'.normalize('NFD') });
    const text = await pdftotext(renderedPath(stored.sha256));
    expect(text).toContain('Nguyễn Văn Ánh'.normalize('NFC'));
  });

  it('no fillable field remains: the form is flattened and the AcroForm removed', async () => {
    const stored = await render(data);
    const doc = await PDFDocument.load(fs.readFileSync(renderedPath(stored.sha256)));
    expect(doc.catalog.get(PDFName.of('AcroForm'))).toBeUndefined();
    expect(doc.getForm().getFields()).toHaveLength(0);
    expect(doc.getPage(0).node.Annots()).toBeUndefined();
  });

  it('the font is DejaVu Sans, embedded as a subset, and every font of the result is embedded', async () => {
    const stored = await render(data);
    const fonts = await pdffonts(renderedPath(stored.sha256));
    expect(fonts.length).toBeGreaterThan(0);
    expect(fonts.every((font) => font.embedded)).toBe(true);
    expect(fonts.filter((font) => /^[A-Z]{6}\+DejaVuSans$/.test(font.name))).not.toHaveLength(0);
    expect(fonts.map((font) => font.name)).not.toContain('Helvetica');
  });

  it('numbers and booleans print as text; true ticks a check box, false leaves it empty', async () => {
    const ticked = await render({ soCccd: 1234567890, ngayKy: false, dongY: true });
    const text = await pdftotext(renderedPath(ticked.sha256));
    expect(text).toMatch(/Số CCCD:\s+1234567890/);
    expect(text).toMatch(/Ngày ký:\s+false/);
    const empty = await render({ dongY: false });
    // The check box of examples/hop-dong-mau.pdf: 14 × 14 points at (60, 410) on an A4 page.
    const box = { x: 60, y: 410, width: 14, height: 14, pageHeight: 841.89 };
    const tickedPixels = await darkPixels(renderedPath(ticked.sha256), box);
    const emptyPixels = await darkPixels(renderedPath(empty.sha256), box);
    expect(tickedPixels).toBeGreaterThan(emptyPixels + 10);
  });

  it('null or a missing key leaves a field empty', async () => {
    const stored = await render({ hoTen: null, tenHopDong: 'Hợp đồng' });
    const text = await pdftotext(renderedPath(stored.sha256));
    expect(text).toMatch(/Tên văn bản:\s+Hợp đồng\n/);
    expect(text).toMatch(/Bên B \(họ và tên\):\s*\n/);
    expect(await render(undefined)).toMatchObject({ size: expect.any(Number) });
  });

  it('choice fields take one of their options', async () => {
    const stored = await render({ thanhPho: 'Đà Nẵng', gioiTinh: 'Nữ', maSo: 'AB123' }, 'LUA_CHON');
    const text = await pdftotext(renderedPath(stored.sha256));
    expect(text).toContain('Đà Nẵng');
    expect(text).toContain('AB123');
  });

  it('the result goes through the file store; equal input gives equal bytes', async () => {
    const first = await render({ ...data, ghiChu: 'Dòng một\nDòng hai' });
    const second = await render({ ...data, ghiChu: 'Dòng một\nDòng hai' });
    expect(first.created).toBe(true);
    expect(second).toEqual({ sha256: first.sha256, size: first.size, created: false });
    const bytes = fs.readFileSync(renderedPath(first.sha256));
    expect(crypto.createHash('sha256').update(bytes).digest('hex')).toBe(first.sha256);
    expect(bytes.subarray(0, 5).toString('latin1')).toBe('%PDF-');
    h.deps.files.keep(first);
    h.deps.files.keep(second);
    // A caller's rollback deletes what its put created.
    const alone = await render({ hoTen: 'Chỉ một lần' });
    expect(await h.deps.files.remove(alone)).toBe(true);
    expect(fs.existsSync(renderedPath(alone.sha256))).toBe(false);
  });

  it('an unknown template (or one of another organization): 400 TEMPLATE_NOT_FOUND at files.N.templateCode', async () => {
    for (const field of ['files.1.templateCode', 'files.1']) {
      expect(await refusal(() => render(data, 'KHONG_CO', field))).toMatchObject({
        status: 400,
        code: 'TEMPLATE_NOT_FOUND',
        field: 'files.1.templateCode',
      });
    }
    expect(
      await refusal(() => renderTemplate(h.deps, branchId, 'HD_MAU', data, 'attachments.0')),
    ).toMatchObject({ code: 'TEMPLATE_NOT_FOUND', field: 'attachments.0.templateCode' });
  });

  it('templateData is an object of strings, numbers, booleans or null: else 400 VALIDATION_ERROR at the entry', async () => {
    expect(await refusal(() => render(['Nguyễn Văn Ánh']))).toMatchObject({
      status: 400,
      code: 'VALIDATION_ERROR',
      field: 'files.0.templateData',
    });
    expect(await refusal(() => render('hoTen=An'))).toMatchObject({
      field: 'files.0.templateData',
    });
    for (const value of [{ ho: 'Nguyễn' }, ['Nguyễn'], 'x'.repeat(10_001)]) {
      expect(await refusal(() => render({ ...data, hoTen: value }))).toMatchObject({
        status: 400,
        code: 'VALIDATION_ERROR',
        field: 'files.0.templateData.hoTen',
      });
    }
  });

  it('a key that names no field of the template: 400 TEMPLATE_FIELD_UNKNOWN (a typo must not leave a blank in a contract)', async () => {
    const refused = await refusal(() => render({ ...data, hoten: 'Nguyễn Văn Ánh' }));
    expect(refused).toMatchObject({
      status: 400,
      code: 'TEMPLATE_FIELD_UNKNOWN',
      field: 'files.0.templateData.hoten',
    });
    expect(refused.message).toContain('hoTen');
  });

  it('a value the field cannot show: 400 TEMPLATE_DATA_INVALID', async () => {
    const cases: [string, Record<string, unknown>, string][] = [
      ['HD_MAU', { dongY: 'có' }, 'dongY'],
      ['HD_MAU', { hoTen: 'Nguyễn 漢' }, 'hoTen'],
      ['LUA_CHON', { maSo: 'ABCDEF' }, 'maSo'],
      ['LUA_CHON', { thanhPho: 'Huế' }, 'thanhPho'],
      ['LUA_CHON', { gioiTinh: 'Khác' }, 'gioiTinh'],
      ['LUA_CHON', { gioiTinh: true }, 'gioiTinh'],
    ];
    for (const [code, templateData, key] of cases) {
      expect(await refusal(() => render(templateData, code))).toMatchObject({
        status: 400,
        code: 'TEMPLATE_DATA_INVALID',
        field: `files.0.templateData.${key}`,
      });
    }
  });
});
