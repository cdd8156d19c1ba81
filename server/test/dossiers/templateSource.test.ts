import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { registerTemplate } from '../../src/templates/service';
import {
  hdldBody,
  openWorld,
  reply,
  rowCounts,
  storedFiles,
  uniquePdf,
  type World,
} from './fixtures';

/** `source: template` items of endpoint 1: rendered, stored and downloadable like fetched ones. */

const examplePdf = path.join(__dirname, '..', '..', '..', 'examples', 'hop-dong-mau.pdf');

let world: World;
let scratch: string;
beforeAll(async () => {
  world = await openWorld();
  scratch = fs.mkdtempSync(path.join(os.tmpdir(), 'esign-template-source-'));
  await registerTemplate(world.h.deps, world.acmeTenant, 'ACME', {
    code: 'HD_MAU',
    name: 'Hợp đồng mẫu',
    pdfPath: examplePdf,
  });
});
afterAll(async () => {
  fs.rmSync(scratch, { recursive: true, force: true });
  await world.close();
});

function pdfText(bytes: Buffer): string {
  const file = path.join(scratch, `${Date.now()}-${Math.random()}.pdf`);
  fs.writeFileSync(file, bytes);
  return execFileSync('pdftotext', ['-enc', 'UTF-8', file, '-'], { encoding: 'utf8' });
}

describe('files[] item with source template', () => {
  it('renders the template with templateData; the download shows the Vietnamese text', async () => {
    const body = hdldBody(world, {
      files: [
        {
          source: 'template',
          templateCode: 'HD_MAU',
          templateData: {
            hoTen: 'Nguyễn Văn Ánh',
            tenHopDong: 'Hợp đồng lao động',
            soCccd: 1099012345,
          },
        },
      ],
    });
    const [status, answer] = await reply<{
      data: { files: { title: string; type: string; downloadUrl: string }[] };
    }>(await world.create(body));
    expect(status).toBe(201);
    const file = answer.data.files[0]!;
    expect([file.title, file.type]).toEqual(['HD_MAU', 'MAIN']);
    const download = await world.h.request('GET', file.downloadUrl, {
      headers: { 'X-API-Key': world.key },
    });
    expect(download.status).toBe(200);
    const text = pdfText(Buffer.from(await download.arrayBuffer()));
    expect(text).toContain('Nguyễn Văn Ánh');
    expect(text).toContain('Hợp đồng lao động');
    expect(text).toContain('1099012345');
  });

  it('an attachment from a template keeps its title and sent class', async () => {
    const body = hdldBody(world, {
      attachments: [
        {
          source: 'template',
          templateCode: 'HD_MAU',
          title: 'Phụ lục mẫu',
          ecmClassCode: 'PHU_LUC',
          templateData: { hoTen: 'Trần Thị Bảo' },
        },
      ],
    });
    const [status, answer] = await reply<{ data: { folderId: number } }>(await world.create(body));
    expect(status).toBe(201);
    const row = await world.h.deps.db
      .selectFrom('dossier_files')
      .select(['kind', 'title', 'ecm_class_code'])
      .where('dossier_id', '=', answer.data.folderId)
      .where('kind', '=', 'ATTACHMENT')
      .executeTakeFirstOrThrow();
    expect(row).toEqual({ kind: 'ATTACHMENT', title: 'Phụ lục mẫu', ecm_class_code: 'PHU_LUC' });
  });

  it('an unknown templateCode: 400 TEMPLATE_NOT_FOUND with the item field, nothing written', async () => {
    const before = await rowCounts(world.h);
    const stored = storedFiles(world.h);
    const [status, error] = await reply(
      await world.create(
        hdldBody(world, {
          files: [
            { source: 'url', fileUrl: world.serve(uniquePdf('first')) },
            { source: 'template', templateCode: 'KHONG_CO' },
          ],
        }),
      ),
    );
    expect({ status, code: error.code, field: error.details?.field }).toEqual({
      status: 400,
      code: 'TEMPLATE_NOT_FOUND',
      field: 'files.1.templateCode',
    });
    expect(await rowCounts(world.h)).toEqual(before);
    expect(storedFiles(world.h)).toEqual(stored);
  });

  it('a templateData value that is not text, number, boolean or null: 400 with its field', async () => {
    const [status, error] = await reply(
      await world.create(
        hdldBody(world, {
          files: [
            { source: 'template', templateCode: 'HD_MAU', templateData: { hoTen: { a: 1 } } },
          ],
        }),
      ),
    );
    expect({ status, field: error.details?.field }).toEqual({
      status: 400,
      field: 'files.0.templateData.hoTen',
    });
  });

  it("another organization's template is unknown", async () => {
    const [status, error] = await reply(
      await world.create(
        {
          ...hdldBody(world),
          signers: [{ stepCode: 'GUEST', email: 'beta.template@example.com' }],
          files: [{ source: 'template', templateCode: 'HD_MAU' }],
        },
        world.beta.orgKey,
      ),
    );
    expect({ status, code: error.code }).toEqual({ status: 400, code: 'TEMPLATE_NOT_FOUND' });
  });
});
