import fs from 'node:fs';
import path from 'node:path';
import type { BrowserContext, Page } from 'playwright-core';
import { recordIssuedSecret } from '../../../test/support/runLog';
import { openWebSession } from '../../src/web/session/service';
import { type BrowserWorld, openBrowserWorld } from '../support/browser';
import { createDossier, dossierRow, openTask } from '../support/dossiers';
import { useTaskWorld } from '../tasks/fixtures';

jest.setTimeout(180_000);

/**
 * The dossier and task pages in Debian's Chromium against a real server, in the task world
 * (tests/tasks/fixtures.ts), as the people of that world use them: list, filter, search
 * without accents and open a dossier; approve from the task list; reject with a reason;
 * acknowledge; the history shows each; the deep links; another tenant's dossier is "not
 * found"; nothing wider than a 360 px phone. Screenshots of each page (vi and en, 1280 px and
 * 390 px) go to test/artifacts/web-dossiers/ (not committed).
 */
const context = useTaskWorld();
let world: BrowserWorld;

beforeAll(async () => {
  world = await openBrowserWorld(context.h);
});
afterAll(async () => {
  await world?.close();
});
afterEach(() => {
  // No script error and no CSP refusal on any page (a missing preview.js is a failed load, not an error).
  expect(world.takeErrors()).toEqual([]);
});

/** A browser context signed in as `userId` (its own session cookie), in a language and width. */
async function signedIn(
  userId: number,
  options: { width?: number; locale?: 'vi' | 'en' } = {},
): Promise<{ browser: BrowserContext; page: Page }> {
  const browser = await world.newContext(options);
  const { token } = await openWebSession(context.h.deps, { userId, credential: 'password' });
  recordIssuedSecret(token, 'web session cookie');
  await browser.addCookies([
    { name: 'esign_session', value: token, url: world.origin, httpOnly: true, sameSite: 'Lax' },
    ...(options.locale === 'en' ? [{ name: 'esign_lang', value: 'en', url: world.origin }] : []),
  ]);
  return { browser, page: await world.newPage(browser) };
}

const artifacts = path.resolve(__dirname, '../../../test/artifacts/web-dossiers');

/** A picture of the whole page as its viewer sees it. */
async function picture(page: Page, name: string): Promise<void> {
  fs.mkdirSync(artifacts, { recursive: true });
  await page.screenshot({ path: path.join(artifacts, `${name}.png`), fullPage: true });
}

/** Whether the body is wider than the window (something would scroll sideways). */
async function overflows(page: Page): Promise<number> {
  return page.evaluate(
    'document.documentElement.scrollWidth - document.documentElement.clientWidth',
  ) as Promise<number>;
}

/** The texts of the rows of a table. */
function rowTexts(page: Page, table: string): Promise<string[]> {
  return page.locator(`table.${table} tbody tr`).allTextContents();
}

describe('dossiers in the browser', () => {
  it('lists, filters, searches without accents and opens a dossier', async () => {
    const { world: tw } = context;
    const { browser, page } = await signedIn(tw.hung.row.id);
    try {
      await page.goto(`${world.origin}/app/ho-so`);
      expect(await page.locator('h1').textContent()).toBe('Hồ sơ');
      expect(await rowTexts(page, 'dossier-table')).toHaveLength(4);
      await picture(page, 'ho-so-vi-1280');

      await page.selectOption('#status', 'REJECTED');
      await Promise.all([
        page.waitForURL(/status=REJECTED/),
        page.click('.list-filters button[type=submit]'),
      ]);
      const rejected = await rowTexts(page, 'dossier-table');
      expect(rejected).toHaveLength(1);
      expect(rejected[0]).toContain('Biên bản bàn giao thiết bị');

      await page.goto(`${world.origin}/app/ho-so`);
      await page.fill('#keyword', 'nguyen van anh');
      await Promise.all([page.waitForURL(/keyword=/), page.press('#keyword', 'Enter')]);
      const found = await rowTexts(page, 'dossier-table');
      expect(found).toHaveLength(1);
      expect(found[0]).toContain('Hợp đồng lao động Nguyễn Văn Ánh');

      await Promise.all([
        page.waitForURL(new RegExp(`/app/ho-so/${tw.d1.id}$`)),
        page.click('a.row-title'),
      ]);
      expect(await page.locator('h1').textContent()).toBe('Hợp đồng lao động Nguyễn Văn Ánh');
      const preview = page.locator('.pdf-preview');
      expect(await preview.count()).toBe(1);
      const src = await preview.getAttribute('data-pdf-src');
      // The preview's address answers the PDF to this page's session, same origin.
      const bytes = await page.evaluate(
        `fetch(${JSON.stringify(src)}).then((r) => r.arrayBuffer()).then((b) => new TextDecoder().decode(new Uint8Array(b).slice(0, 5)))`,
      );
      expect(bytes).toBe('%PDF-');
      expect(await page.locator('ol.steps').textContent()).toContain('Đang chờ xử lý');
      // Times are written in the viewer's zone with the zone named.
      expect(await page.locator('table.history time').first().textContent()).toMatch(/GMT\+7$/);
      await picture(page, 'ho-so-chi-tiet-vi-1280');
    } finally {
      await browser.close();
    }
  });
});

describe('tasks in the browser', () => {
  it('approves a step from the task list; the dossier history shows it', async () => {
    const { h, world: tw } = context;
    const dossier = await createDossier(h, tw.memo, {
      title: 'Tờ trình mua máy in',
      signers: [{ stepCode: 'XL', userId: tw.hung.row.id }],
    });
    const { browser, page } = await signedIn(tw.hung.row.id);
    try {
      await page.goto(`${world.origin}/app/xu-ly-cong-viec`);
      await picture(page, 'xu-ly-cong-viec-vi-1280');
      const row = page.locator('table.task-table tbody tr', { hasText: 'Tờ trình mua máy in' });
      await Promise.all([
        page.waitForURL(/done=approved/),
        row.getByRole('button', { name: 'Duyệt', exact: true }).click(),
      ]);
      expect(await page.locator('.notice').textContent()).toContain('Đã duyệt công việc.');
      expect(
        await page.locator('table.task-table', { hasText: 'Tờ trình mua máy in' }).count(),
      ).toBe(0);
      expect((await dossierRow(h, dossier.id)).status).toBe('COMPLETED');

      await page.goto(`${world.origin}/app/ho-so/${dossier.id}`);
      const history = await rowTexts(page, 'history');
      expect(history).toHaveLength(1);
      expect(history[0]).toContain('Đồng ý');
      expect(history[0]).toContain('Nguyễn Văn Hùng');
    } finally {
      await browser.close();
    }
  });

  it('rejects with a reason from the task list, after confirming', async () => {
    const { h, world: tw } = context;
    const dossier = await createDossier(h, tw.memo, {
      title: 'Tờ trình đi công tác',
      signers: [{ stepCode: 'XL', userId: tw.hung.row.id }],
    });
    const { browser, page } = await signedIn(tw.hung.row.id);
    try {
      await page.goto(`${world.origin}/app/xu-ly-cong-viec`);
      const row = page.locator('table.task-table tbody tr', { hasText: 'Tờ trình đi công tác' });
      await row.locator('summary', { hasText: 'Từ chối' }).click();
      const reason = row.getByLabel('Lý do từ chối');
      await reason.fill('Chưa có kế hoạch chi tiết');
      await picture(page, 'xu-ly-cong-viec-tu-choi-vi-1280');
      const questions: string[] = [];
      page.once('dialog', (dialog) => {
        questions.push(dialog.message());
        void dialog.accept();
      });
      await Promise.all([
        page.waitForURL(/done=rejected/),
        row.getByRole('button', { name: 'Gửi từ chối' }).click(),
      ]);
      expect(questions[0]).toContain('không thể hoàn tác');
      expect(await page.locator('.notice').textContent()).toContain('Đã từ chối công việc.');
      expect((await dossierRow(h, dossier.id)).status).toBe('REJECTED');
      await page.goto(`${world.origin}/app/ho-so/${dossier.id}`);
      const history = await rowTexts(page, 'history');
      expect(history[0]).toContain('Từ chối');
      expect(history[0]).toContain('Chưa có kế hoạch chi tiết');
      expect(await page.locator('.page-head .badge').textContent()).toBe('Bị từ chối');
    } finally {
      await browser.close();
    }
  });

  it('acknowledges a notification step from its page, reached by the e-mail deep link', async () => {
    const { h, world: tw } = context;
    const dossier = await createDossier(h, tw.process, {
      title: 'Hợp đồng cộng tác viên',
      signers: [{ stepCode: 'DUYET', userId: tw.lan.row.id }],
    });
    // lan approves through her own page: then the KTT step (role, notification) opens.
    const lan = await signedIn(tw.lan.row.id);
    try {
      const lanTask = (await openTask(h, dossier.id))!.id;
      await lan.page.goto(`${world.origin}/app/tasks?id=${lanTask}`);
      expect(lan.page.url()).toBe(`${world.origin}/app/xu-ly-cong-viec/${lanTask}`);
      await lan.page.getByLabel('Ý kiến (không bắt buộc)').fill('Hồ sơ đầy đủ');
      await Promise.all([
        lan.page.waitForURL(/done=approved/),
        lan.page.getByRole('button', { name: 'Duyệt', exact: true }).click(),
      ]);
    } finally {
      await lan.browser.close();
    }
    const kttTask = (await openTask(h, dossier.id))!.id;
    const { browser, page } = await signedIn(tw.nga.row.id);
    try {
      await page.goto(`${world.origin}/app/tasks?id=${kttTask}`);
      expect(page.url()).toBe(`${world.origin}/app/xu-ly-cong-viec/${kttTask}`);
      await picture(page, 'cong-viec-vi-1280');
      await Promise.all([
        page.waitForURL(/done=acknowledged/),
        page.getByRole('button', { name: 'Xác nhận đã xem' }).click(),
      ]);
      expect(await page.locator('.notice').textContent()).toContain('Đã xác nhận bạn đã xem.');
      expect((await dossierRow(h, dossier.id)).status).toBe('COMPLETED');
      // The folder deep link leads to the dossier, whose history shows both actions.
      await page.goto(`${world.origin}/app/folders?id=${dossier.id}`);
      expect(page.url()).toBe(`${world.origin}/app/ho-so/${dossier.id}`);
      const history = await rowTexts(page, 'history');
      expect(history).toHaveLength(2);
      expect(history[0]).toContain('Hồ sơ đầy đủ');
      expect(history[1]).toContain('Đã xem');
      expect(history[1]).toContain('Đỗ Thị Nga');
    } finally {
      await browser.close();
    }
  });

  it("shows another tenant's dossier and task as not found", async () => {
    const { h, world: tw } = context;
    const betaAdmin = await h.deps.db
      .selectFrom('users')
      .select('id')
      .where('username', '=', 'admin.beta')
      .executeTakeFirstOrThrow();
    const { browser, page } = await signedIn(betaAdmin.id);
    try {
      const task = (await openTask(h, tw.d4.id))!.id;
      for (const target of [
        `/app/ho-so/${tw.d1.id}`,
        `/app/xu-ly-cong-viec/${task}`,
        `/app/tasks?id=${task}`,
        `/app/ho-so/999999`,
      ]) {
        const response = await page.goto(`${world.origin}${target}`);
        expect([target, response?.status()]).toEqual([target, 404]);
        expect(await page.locator('h1').textContent()).toBe('Không tìm thấy trang');
      }
      await picture(page, 'khong-tim-thay-vi-1280');
    } finally {
      await browser.close();
    }
  });
});

describe('the pages on a phone and in English', () => {
  it('nothing is wider than a 360 px screen; screenshots at 390 px and 1280 px, vi and en', async () => {
    const { h, world: tw } = context;
    const task = (await openTask(h, tw.d4.id))!.id;
    const pages = {
      'ho-so': '/app/ho-so',
      'ho-so-chi-tiet': `/app/ho-so/${tw.d2.id}`,
      'xu-ly-cong-viec': '/app/xu-ly-cong-viec',
      'da-xu-ly': '/app/xu-ly-cong-viec?tab=handled',
      'cong-viec': `/app/xu-ly-cong-viec/${task}`,
    };
    for (const width of [360, 390, 1280]) {
      for (const locale of ['vi', 'en'] as const) {
        const { browser, page } = await signedIn(tw.hung.row.id, { width, locale });
        try {
          for (const [name, target] of Object.entries(pages)) {
            const response = await page.goto(`${world.origin}${target}`);
            expect(response?.status()).toBe(200);
            if (name === 'cong-viec') {
              // The reject box open, as someone about to reject sees it.
              await page.locator('summary.reject-toggle').click();
            }
            expect([width, locale, name, await overflows(page)]).toEqual([width, locale, name, 0]);
            if (width !== 360) await picture(page, `${name}-${locale}-${width}`);
          }
        } finally {
          await browser.close();
        }
      }
    }
  });
});
