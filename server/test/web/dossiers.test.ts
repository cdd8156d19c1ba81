import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { auditEventsOf } from '../../src/audit/queries';
import { dossierTrail } from '../../src/audit/subject';
import { pdfsig, pdfsigSignatures } from '../signing/pdf/corpus';
import { createDossier, createProcess, tinyPdf } from '../support/dossiers';
import { addUser } from '../support/harness';
import { useTaskWorld } from '../tasks/fixtures';
import { cookieFor, getPage, mainText, rowsOf, textOf } from './records';

jest.setTimeout(60_000);

/**
 * `/ho-so` and `/ho-so/{id}` over HTTP, in the task world (tests/tasks/fixtures.ts): hung sees
 * ACME's four dossiers (member of its root organization), minh only the two he takes part in
 * (by his role), BETA's administrator none of them. The list filters and searches as the API's
 * lists do (keyword folded), the page shows files with their preview element, turns, history
 * and downloads, and everything the viewer may not see is the one "not found" page.
 */
const context = useTaskWorld();
let hung: string;
let minh: string;
let beta: string;

beforeAll(async () => {
  const { h, world } = context;
  hung = await cookieFor(h, world.hung.row.id);
  minh = await cookieFor(h, world.minh.row.id);
  const betaAdmin = await h.deps.db
    .selectFrom('users')
    .select('id')
    .where('username', '=', 'admin.beta')
    .executeTakeFirstOrThrow();
  beta = await cookieFor(h, betaAdmin.id);
});

describe('the dossier list', () => {
  it('shows the dossiers the viewer may see, newest first, with state, progress and current step', async () => {
    const { h } = context;
    const page = await getPage(h, hung, '/app/ho-so');
    expect(page.status).toBe(200);
    const rows = rowsOf(page.html, 'dossier-table');
    expect(rows).toHaveLength(4);
    // d4 was created last (11:00); d1..d3 at 08:00 in creation order, newest id first.
    expect(rows[0]).toContain('Công văn nội bộ');
    expect(rows[0]).toContain('Tạo trên ứng dụng web');
    expect(rows[0]).toContain('Chờ ký');
    expect(rows[0]).toContain('Xử lý tờ trình');
    expect(rows.find((row) => row.includes('HD-001'))).toContain('Đang xử lý');
    expect(rows.find((row) => row.includes('BB-002'))).toContain('Bị từ chối');
    expect(rows.find((row) => row.includes('TT-003'))).toContain('Quá hạn');
    expect(rows.find((row) => row.includes('HD-001'))).toContain('2/4 lượt đã ký');
    expect(page.html).toContain('href="/app/ho-so/');
    expect(mainText(page.html)).toContain('4 kết quả');

    const minhRows = rowsOf((await getPage(h, minh, '/app/ho-so')).html, 'dossier-table');
    expect(minhRows.map((row) => row.split(' ')[0])).toHaveLength(2);
    expect(minhRows.join('\n')).toContain('HD-001');
    expect(minhRows.join('\n')).toContain('BB-002');
    expect(minhRows.join('\n')).not.toContain('TT-003');

    const betaPage = await getPage(h, beta, '/app/ho-so');
    expect(betaPage.status).toBe(200);
    expect(rowsOf(betaPage.html, 'dossier-table')).toEqual([]);
    expect(mainText(betaPage.html)).toContain('Bạn chưa có hồ sơ nào.');
  });

  it('searches with diacritics folded, by title or code, like the API', async () => {
    const { h } = context;
    for (const keyword of ['nguyen van anh', 'NGUYỄN VĂN ÁNH', 'hd-001']) {
      const page = await getPage(h, hung, `/app/ho-so?keyword=${encodeURIComponent(keyword)}`);
      const rows = rowsOf(page.html, 'dossier-table');
      expect(rows).toHaveLength(1);
      expect(rows[0]).toContain('Hợp đồng lao động Nguyễn Văn Ánh');
      // The field keeps what was typed.
      expect(page.html).toContain(`value="${keyword}"`);
    }
    const bien = rowsOf(
      (await getPage(h, hung, '/app/ho-so?keyword=bien%20ban')).html,
      'dossier-table',
    );
    expect(bien).toHaveLength(1);
    expect(bien[0]).toContain('Biên bản bàn giao thiết bị');
    const none = await getPage(h, hung, '/app/ho-so?keyword=kh%C3%B4ng%20c%C3%B3');
    expect(rowsOf(none.html, 'dossier-table')).toEqual([]);
    expect(mainText(none.html)).toContain('Không có hồ sơ nào phù hợp với bộ lọc.');
  });

  it('filters by state, exact code and creation day (a day in Vietnam), and refuses a bad filter in words', async () => {
    const { h } = context;
    for (const status of ['REJECTED', 'rejected']) {
      const rows = rowsOf(
        (await getPage(h, hung, `/app/ho-so?status=${status}`)).html,
        'dossier-table',
      );
      expect(rows).toHaveLength(1);
      expect(rows[0]).toContain('BB-002');
    }
    const exact = rowsOf(
      (await getPage(h, hung, '/app/ho-so?documentId=TT-003')).html,
      'dossier-table',
    );
    expect(exact).toHaveLength(1);
    expect(exact[0]).toContain('Tờ trình mua sắm');
    const prefix = rowsOf(
      (await getPage(h, hung, '/app/ho-so?documentId=TT')).html,
      'dossier-table',
    );
    expect(prefix).toEqual([]);
    // Created 2026-11-25 08:00 and 11:00 UTC: 15:00 and 18:00 in Vietnam, that same day.
    const day = await getPage(h, hung, '/app/ho-so?fromDate=2026-11-25&toDate=2026-11-25');
    expect(rowsOf(day.html, 'dossier-table')).toHaveLength(4);
    const next = await getPage(h, hung, '/app/ho-so?fromDate=2026-11-26');
    expect(rowsOf(next.html, 'dossier-table')).toEqual([]);
    // Empty fields are no filter.
    const blank = await getPage(h, hung, '/app/ho-so?keyword=&status=&fromDate=');
    expect(rowsOf(blank.html, 'dossier-table')).toHaveLength(4);

    const bad = await getPage(h, hung, '/app/ho-so?status=SIGNED&fromDate=25-11-2026');
    expect(bad.status).toBe(400);
    expect(mainText(bad.html)).toContain(
      'Bộ lọc chưa hợp lệ, vui lòng kiểm tra lại: Trạng thái, Tạo từ ngày',
    );
    const reversed = await getPage(h, hung, '/app/ho-so?fromDate=2026-11-26&toDate=2026-11-25');
    expect(reversed.status).toBe(400);
    expect(mainText(reversed.html)).toContain('Đến ngày');
  });

  it('pages with the filters kept', async () => {
    const { h } = context;
    const first = await getPage(h, hung, '/app/ho-so?pageSize=3&keyword=o');
    const rows = rowsOf(first.html, 'dossier-table');
    expect(rows).toHaveLength(3);
    expect(mainText(first.html)).toContain('Trang 1 / 2');
    expect(first.html).toContain('href="/app/ho-so?keyword=o&amp;pageSize=3&amp;page=2"');
    const second = await getPage(h, hung, '/app/ho-so?pageSize=3&keyword=o&page=2');
    expect(rowsOf(second.html, 'dossier-table')).toHaveLength(1);
    expect(mainText(second.html)).toContain('Trang 2 / 2');
    const tooBig = await getPage(h, hung, '/app/ho-so?pageSize=1000');
    expect(tooBig.status).toBe(400);
  });

  it('speaks English when asked', async () => {
    const { h } = context;
    const page = await h.request('GET', '/app/ho-so?status=REJECTED', {
      headers: { cookie: `${hung}; esign_lang=en` },
    });
    const html = await page.text();
    expect(html).toContain('<html lang="en">');
    expect(rowsOf(html, 'dossier-table')[0]).toContain('Rejected');
    expect(mainText(html)).toContain('Signing progress');
  });
});

describe('the dossier page', () => {
  it('shows the facts, the files with a same-origin preview, each turn and the history', async () => {
    const { h, world } = context;
    const page = await getPage(h, hung, `/app/ho-so/${world.d2.id}`);
    expect(page.status).toBe(200);
    const text = mainText(page.html);
    expect(text).toContain('Biên bản bàn giao thiết bị');
    expect(text).toContain('BB-002');
    expect(text).toContain('Hợp đồng lao động'); // the process
    expect(text).toContain('Bị từ chối');
    // Turns: the guest signed, hung rejected, the role step cancelled.
    expect(text).toContain('Bước 1: Khách hàng ký');
    expect(text).toContain('Công ty TNHH Bảo An');
    expect(text).toContain('Bước 2: Phê duyệt nội bộ');
    expect(text).toContain('Nguyễn Văn Hùng');
    expect(text).toContain('Đã từ chối');
    expect(text).toContain('Đã hủy');
    // History, oldest first, with the reason.
    const history = rowsOf(page.html, 'history');
    expect(history).toHaveLength(2);
    expect(history[0]).toContain('Ký');
    expect(history[1]).toContain('Không duyệt');
    expect(history[1]).toContain('Thiếu phụ lục');
    expect(history[1]).toContain('(hung)');
    // The file, its download and preview on this origin; the audit trail download.
    const preview =
      /<div class="pdf-preview" data-pdf-src="([^"]+)" data-pdf-title="([^"]+)">/.exec(page.html);
    expect(preview?.[1]).toMatch(new RegExp(`^/app/ho-so/${world.d2.id}/tep/[0-9a-f-]{36}/xem$`));
    expect(preview?.[2]).toBe('Xem trước: Hợp đồng');
    expect(page.html).toContain(`href="/app/ho-so/${world.d2.id}/nhat-ky"`);
    expect(page.html).toMatch(/<script src="\/app\/assets\/preview\.js(\?v=[0-9a-f]+)?" defer/);
  });

  it('tells the viewer when the dossier waits for them, with the task', async () => {
    const { h, world } = context;
    const d4 = await getPage(h, hung, `/app/ho-so/${world.d4.id}`);
    const task = (
      await h.deps.db
        .selectFrom('tasks')
        .select('id')
        .where('dossier_id', '=', world.d4.id)
        .executeTakeFirstOrThrow()
    ).id;
    expect(mainText(d4.html)).toContain('Hồ sơ này đang chờ bạn xử lý.');
    expect(d4.html).toContain(`href="/app/xu-ly-cong-viec/${task}"`);
    // d1 waits in hung's step too, but for lan's turn.
    const d1 = await getPage(h, hung, `/app/ho-so/${world.d1.id}`);
    expect(mainText(d1.html)).not.toContain('đang chờ bạn xử lý');
  });

  it("serves the file's newest version to the preview and as a download, recording each", async () => {
    const { h, world } = context;
    const page = await getPage(h, hung, `/app/ho-so/${world.d1.id}`);
    const src = /data-pdf-src="([^"]+)"/.exec(page.html)![1]!;
    const view = await h.request('GET', src, { headers: { cookie: hung } });
    expect(view.status).toBe(200);
    expect(view.headers.get('content-type')).toBe('application/pdf');
    expect(view.headers.get('cache-control')).toBe('private, no-store');
    const bytes = Buffer.from(await view.arrayBuffer());
    expect(bytes.subarray(0, 5).toString('latin1')).toBe('%PDF-');
    const download = await h.request('GET', src.replace(/\/xem$/, ''), {
      headers: { cookie: hung },
    });
    expect(download.status).toBe(200);
    expect(download.headers.get('content-disposition')).toContain('attachment');
    expect(Buffer.from(await download.arrayBuffer()).equals(bytes)).toBe(true);
    const trail = await auditEventsOf(h.deps.db, dossierTrail(world.d1.id));
    const [viewed, downloaded] = trail.slice(-2);
    expect(viewed).toMatchObject({
      action: 'viewed',
      actor_name: 'Nguyễn Văn Hùng <hung@acme.vn>',
    });
    expect(JSON.parse(viewed!.details)).toMatchObject({ via: 'web', kind: 'MAIN', version: 1 });
    expect(downloaded).toMatchObject({ action: 'downloaded' });
  });
});

describe('what the viewer may not see', () => {
  it('answers a dossier of another tenant, one out of scope and one that does not exist alike', async () => {
    const { h, world } = context;
    const unknown = await getPage(h, hung, '/app/ho-so/999999');
    expect(unknown.status).toBe(404);
    const expected = mainText(unknown.html);
    expect(expected).toContain('Không tìm thấy trang');
    for (const [cookie, id] of [
      [minh, world.d3.id],
      [minh, world.d4.id],
      [beta, world.d1.id],
    ] as const) {
      for (const suffix of ['', '/nhat-ky']) {
        const page = await getPage(h, cookie, `/app/ho-so/${id}${suffix}`);
        expect(page.status).toBe(404);
        expect(mainText(page.html)).toBe(expected);
      }
    }
    expect((await getPage(h, hung, '/app/ho-so/abc')).status).toBe(404);
  });

  it("refuses a file through another dossier's page, or of another tenant, as not found", async () => {
    const { h, world } = context;
    const d1 = await getPage(h, hung, `/app/ho-so/${world.d1.id}`);
    const fileUuid = /\/tep\/([0-9a-f-]{36})\/xem/.exec(d1.html)![1]!;
    const through = await getPage(h, hung, `/app/ho-so/${world.d2.id}/tep/${fileUuid}`);
    expect(through.status).toBe(404);
    expect(through.type).toContain('text/html');
    const foreign = await getPage(h, beta, `/app/ho-so/${world.d1.id}/tep/${fileUuid}/xem`);
    expect(foreign.status).toBe(404);
    expect(mainText(foreign.html)).toBe(
      mainText((await getPage(h, hung, '/app/ho-so/999999')).html),
    );
  });

  it('gives a signed-in person without document:view the same not-found page', async () => {
    const { h, world } = context;
    const nobody = await addUser(h, {
      tenantId: world.acme.id,
      organizationId: world.rootId,
      code: 'NOBODY',
      username: 'nobody',
      email: 'nobody@acme.vn',
      name: 'Không Quyền',
      status: 2,
      type: 'internal',
    });
    const cookie = await cookieFor(h, nobody.id);
    expect((await getPage(h, cookie, '/app/ho-so')).status).toBe(404);
    expect((await getPage(h, cookie, `/app/ho-so/${world.d1.id}`)).status).toBe(404);
  });

  it('an outside signer sees their own dossier only', async () => {
    const { h, world } = context;
    const anh = await h.deps.db
      .selectFrom('users')
      .select('id')
      .where('username', '=', '001203004005')
      .executeTakeFirstOrThrow();
    // A guest account waits until its holder sets a password; then it may sign in.
    await h.deps.db.updateTable('users').set({ status: 2 }).where('id', '=', anh.id).execute();
    const cookie = await cookieFor(h, anh.id);
    const rows = rowsOf((await getPage(h, cookie, '/app/ho-so')).html, 'dossier-table');
    expect(rows).toHaveLength(1);
    expect(rows[0]).toContain('HD-001');
    expect((await getPage(h, cookie, `/app/ho-so/${world.d1.id}`)).status).toBe(200);
    expect((await getPage(h, cookie, `/app/ho-so/${world.d2.id}`)).status).toBe(404);
  });
});

describe('the deep link /folders?id=', () => {
  it('leads to the dossier page, which decides what the viewer sees', async () => {
    const { h, world } = context;
    const link = await getPage(h, hung, `/app/folders?id=${world.d1.id}`);
    expect(link.status).toBe(303);
    expect(link.location).toBe(`/app/ho-so/${world.d1.id}`);
    expect((await getPage(h, beta, `/app/folders?id=${world.d1.id}`)).location).toBe(
      `/app/ho-so/${world.d1.id}`,
    );
    expect((await getPage(h, hung, '/app/folders?id=x')).status).toBe(404);
    expect((await getPage(h, hung, '/app/folders')).status).toBe(404);
    // Without a session: sign in first, then back to the link.
    const anonymous = await h.request('GET', `/app/folders?id=${world.d1.id}`);
    expect(anonymous.headers.get('location')).toBe(
      `/app/dang-nhap?next=${encodeURIComponent(`/app/folders?id=${world.d1.id}`)}`,
    );
  });
});

describe('a dossier with a signed file and an attachment', () => {
  it('names the signed copy and the attachment, each with its own download', async () => {
    const { h, world } = context;
    const process = await createProcess(h, {
      tenantId: world.acme.id,
      organizationId: world.rootId,
      code: 'PL',
      steps: [{ stepCode: 'A', kind: 'internal', signType: 'app_submit' }],
    });
    const dossier = await createDossier(h, process, {
      title: 'Phụ lục hợp đồng',
      signers: [{ stepCode: 'A', userId: world.lan.row.id }],
      files: [
        { title: 'Phụ lục 01' },
        { title: 'Bảng giá', kind: 'ATTACHMENT', content: tinyPdf('Bang gia') },
      ],
    });
    // A second version of the MAIN file, as a signature makes.
    await h.deps.db
      .insertInto('file_versions')
      .values({
        file_id: dossier.fileIds[0]!,
        version: 2,
        sha256: (
          await h.deps.db
            .selectFrom('file_versions')
            .select('sha256')
            .where('file_id', '=', dossier.fileIds[0]!)
            .executeTakeFirstOrThrow()
        ).sha256,
        size: 100,
        created_at: h.now(),
      })
      .execute();
    const page = await getPage(h, hung, `/app/ho-so/${dossier.id}`);
    const text = mainText(page.html);
    expect(text).toContain('Bản đã ký (phiên bản 2)');
    expect(text).toContain('Tải bản đã ký');
    expect(text).toContain('Tệp đính kèm, không ký');
    expect(textOf(page.html).match(/Xem trước/g) ?? []).toHaveLength(0);
    expect(page.html.match(/class="pdf-preview"/g)).toHaveLength(2);
  });
});

describe('a long list', () => {
  it('counts up to 1,000 matches, then says "more than" and pages on without a page count', async () => {
    const { h, world } = context;
    const now = h.now();
    // 1,001 dossiers written at once, as the bench does (only the list reads them).
    await h.deps.db
      .insertInto('dossiers')
      .values(
        Array.from({ length: 1001 }, (_, index) => ({
          uuid: `00000000-0000-4000-8000-${String(index).padStart(12, '0')}`,
          tenant_id: world.acme.id,
          organization_id: world.rootId,
          document_id: `LOAT-${index}`,
          title: `Hồ sơ hàng loạt ${index}`,
          process_id: world.memo.id,
          status: 'COMPLETED' as const,
          metadata: '{}',
          required_count: 1,
          created_at: now,
          updated_at: now,
        })),
      )
      .execute();
    const first = await getPage(h, hung, '/app/ho-so?keyword=hang%20loat');
    expect(rowsOf(first.html, 'dossier-table')).toHaveLength(20);
    const pager = textOf(/<nav class="pager"[\s\S]*?<\/nav>/.exec(first.html)![0]);
    expect(pager).toBe('Hơn 1.000 kết quả Trang 1 Trang sau');
    const last = await getPage(h, hung, '/app/ho-so?keyword=hang%20loat&page=51');
    expect(rowsOf(last.html, 'dossier-table')).toHaveLength(1);
    const lastPager = textOf(/<nav class="pager"[\s\S]*?<\/nav>/.exec(last.html)![0]);
    expect(lastPager).toBe('Hơn 1.000 kết quả Trang trước Trang 51');
    const exact = await getPage(h, hung, '/app/ho-so?keyword=hang%20loat%2099');
    // 99 and 990..999: eleven, counted exactly.
    expect(mainText(exact.html)).toContain('11 kết quả Trang 1 / 1');
  });
});

// Last: it moves the clock to real time (the TSA and the seal), which ends the sessions above.
describe('the audit trail download', () => {
  it('downloads the audit trail as a sealed PDF that pdfsig accepts', async () => {
    const { h, world } = context;
    // The TSA and the seal certificate live in real time.
    if (new Date() > h.clock.now()) h.clock.set(new Date());
    const fresh = await cookieFor(h, world.hung.row.id);
    const response = await h.request('GET', `/app/ho-so/${world.d2.id}/nhat-ky`, {
      headers: { cookie: fresh },
    });
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toBe('application/pdf');
    expect(response.headers.get('content-disposition')).toContain('nh%E1%BA%ADt%20k%C3%BD');
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'dossier-audit-'));
    try {
      const file = path.join(dir, 'audit.pdf');
      fs.writeFileSync(file, Buffer.from(await response.arrayBuffer()));
      const text = execFileSync('pdftotext', ['-layout', file, '-'], { encoding: 'utf8' });
      expect(text).toContain('Biên bản bàn giao thiết bị');
      expect(text).toContain('Từ chối');
      const [seal] = pdfsigSignatures(pdfsig(file));
      expect(seal).toMatchObject({ valid: true, total: true });
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
    expect(fs.readdirSync(h.deps.files.tempDir)).toEqual([]);
    const trail = await auditEventsOf(h.deps.db, dossierTrail(world.d2.id));
    expect(trail.at(-1)).toMatchObject({ action: 'downloaded' });
    expect(JSON.parse(trail.at(-1)!.details)).toEqual({ type: 'audit' });
  });
});
