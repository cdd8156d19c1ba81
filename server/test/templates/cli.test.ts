import { execFile } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { localStoreOf } from '../../src/storage/localFileStore';
import { runCli } from '../admin/runCli';
import { expectBadArguments } from '../processes/fixtures';
import { createHarness, type Harness } from '../support/harness';
import { exampleTemplateFile, makePdf, repoRoot, writeTemp } from './fixtures';

jest.setTimeout(120_000);

describe('admin template create / list: registering examples/hop-dong-mau.pdf end to end', () => {
  let h: Harness;
  const cli = (command: string) => runCli(h.dataDir, command);
  const sha256 = (bytes: Buffer) => crypto.createHash('sha256').update(bytes).digest('hex');

  beforeAll(async () => {
    h = createHarness();
    expect((await cli('tenant create --code DEMO --name "Công ty Demo"')).code).toBe(0);
    expect((await cli('org create --tenant DEMO --code CN_HN --name "Chi nhánh"')).code).toBe(0);
  });
  afterAll(() => h.close());

  it('registers the template with --json: id, organization, code, name, fields, sha256, size; exit 0', async () => {
    const bytes = fs.readFileSync(exampleTemplateFile);
    const result = await cli(
      'template create --tenant DEMO --org DEMO --code HD_MAU --name "Hợp đồng mẫu" --file examples/hop-dong-mau.pdf --json',
    );
    expect(result.code).toBe(0);
    expect(result.json()).toEqual({
      id: 1,
      organizationCode: 'DEMO',
      code: 'HD_MAU',
      name: 'Hợp đồng mẫu',
      fields: ['tenHopDong', 'hoTen', 'soCccd', 'ngayKy', 'ghiChu', 'dongY'],
      sha256: sha256(bytes),
      size: bytes.length,
    });
    // The bytes are in the server's file store, where rendering reads them.
    expect(fs.readFileSync(localStoreOf(h.deps.files).pathOf(sha256(bytes))).equals(bytes)).toBe(
      true,
    );
  });

  it('registering the same code again replaces it and says so', async () => {
    const result = await cli(
      `template create --tenant DEMO --org DEMO --code HD_MAU --name "Hợp đồng mẫu v2" --file ${exampleTemplateFile}`,
    );
    expect(result.code).toBe(0);
    expect(result.stdout).toMatch(
      /^Replaced template HD_MAU "Hợp đồng mẫu v2" of DEMO \(tenant DEMO\), id 1, \d+ bytes\.\nFields for templateData: tenHopDong, hoTen, soCccd, ngayKy, ghiChu, dongY\.\n$/,
    );
  });

  it('lists the templates of the tenant or of one organization', async () => {
    expect(
      (
        await cli(
          `template create --tenant DEMO --org CN_HN --code CN --name "Mẫu chi nhánh" --file ${exampleTemplateFile}`,
        )
      ).code,
    ).toBe(0);
    const all = await cli('template list --tenant DEMO --json');
    expect(all.code).toBe(0);
    const listed = all.json<{ templates: Record<string, unknown>[] }>().templates;
    expect(listed.map((t) => [t.organizationCode, t.code, t.name])).toEqual([
      ['CN_HN', 'CN', 'Mẫu chi nhánh'],
      ['DEMO', 'HD_MAU', 'Hợp đồng mẫu v2'],
    ]);
    const one = await cli('template list --tenant DEMO --org CN_HN');
    expect(one.code).toBe(0);
    expect(one.stdout.split('\n')[0]).toMatch(
      /^ORGANIZATION\s+CODE\s+NAME\s+FIELDS\s+SIZE\s+UPDATED$/,
    );
    expect(one.stdout).toContain('Mẫu chi nhánh');
    expect(one.stdout).not.toContain('HD_MAU');
  });

  it('a file that cannot be a template exits 1 with its code', async () => {
    const notPdf = await cli(
      `template create --tenant DEMO --org DEMO --code X --name X --file ${path.join(repoRoot, 'examples/process.json')} --json`,
    );
    expect(notPdf.code).toBe(1);
    expect(notPdf.json<{ error: { code: string } }>().error.code).toBe('TEMPLATE_NOT_PDF');
    const noForm = await cli(
      `template create --tenant DEMO --org DEMO --code X --name X --file ${writeTemp(h.dataDir, 'plain.pdf', await makePdf())}`,
    );
    expect(noForm.code).toBe(1);
    expect(noForm.stderr).toMatch(/^admin: TEMPLATE_WITHOUT_FORM_FIELDS: /);
  });

  it('bad arguments exit 2 before the database is touched', async () => {
    const cases: [string, RegExp][] = [
      ['template create --tenant DEMO --org DEMO --code X --name X', /--file is required/],
      [
        'template create --tenant DEMO --org DEMO --code "A B" --name X --file examples/hop-dong-mau.pdf',
        /--code must be 1 to 64 characters without spaces/,
      ],
      [
        'template create --tenant DEMO --org DEMO --code X --name X --file nope.pdf',
        /--file .*nope\.pdf: no such file/,
      ],
      ['template list', /template list: --tenant is required/],
    ];
    await expectBadArguments(h.dataDir, cases);
  });
});

describe('examples/hop-dong-mau.pdf', () => {
  it('is what scripts/make-example-template.ts writes, byte for byte', async () => {
    const target = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'tpl-')), 'x.pdf');
    await promisify(execFile)(
      process.execPath,
      ['--import', 'tsx', 'scripts/make-example-template.ts', target],
      { cwd: repoRoot },
    );
    expect(fs.readFileSync(target).equals(fs.readFileSync(exampleTemplateFile))).toBe(true);
    fs.rmSync(path.dirname(target), { recursive: true, force: true });
  });
});
