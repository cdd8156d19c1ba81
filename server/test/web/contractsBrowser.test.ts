import fs from 'node:fs';
import path from 'node:path';
import type { BrowserContext, Page } from 'playwright-core';
import { recordIssuedSecret } from '../../../test/support/runLog';
import { issueToken } from '../../src/auth/tokens';
import { repoRoot } from '../admin/runCli';
import { openSessionWorld, type SessionWorld } from '../sessions/world';
import { type BrowserWorld, openBrowserWorld } from '../support/browser';
import { createDossier, createProcess } from '../support/dossiers';
import { rejectAs, signWithImage } from './contractPages';

/**
 * The contract pages and the dashboard in Debian's Chromium against a real server: what a
 * person sees and does through the real pages (search, filter, open, resend, cancel, download),
 * at a desktop width and on a 360 px phone, in Vietnamese and English. Screenshots of each page
 * are written under test/artifacts/web/ for a person to look at.
 */

jest.setTimeout(180_000);

let world: SessionWorld;
let browser: BrowserWorld;
let signing: string;
let cancellable: string;
const artifacts = path.join(repoRoot, 'test', 'artifacts', 'web');

const anh = { name: 'Nguyễn Văn Ánh', email: 'anh@partner.example', phone: '0912345678', order: 1 };
const binh = { name: 'Trần Thị Bình', email: 'binh@partner.example', order: 2 };
const cuc = {
  name: 'Phạm Thu Cúc',
  email: 'cuc@partner.example',
  order: 1,
  role: 'viewer' as const,
};

beforeAll(async () => {
  world = await openSessionWorld();
  const { h, acme } = world;
  const process = await createProcess(h, {
    tenantId: acme.tenantId,
    organizationId: acme.rootOrganizationId,
    code: 'QT-DUYET',
    steps: [
      {
        stepCode: 'DUYET',
        name: 'Trưởng phòng duyệt',
        kind: 'internal',
        signType: 'app_submit',
        deadlineSeconds: 5 * 3600,
      },
    ],
  });
  await createDossier(h, process, {
    title: 'Tờ trình giải ngân khoản vay KH-2026-118',
    signers: [{ stepCode: 'DUYET', userId: acme.adminUserId }],
  });
  signing = await world.sentContract([anh, binh, cuc], {
    title: 'Hợp đồng tín dụng số 2026/HĐTD-0457 – Công ty TNHH Đà Nẵng Xanh',
  });
  await signWithImage(world, signing, anh.email);
  const refused = await world.sentContract([anh], { title: 'Hợp đồng bảo lãnh thanh toán' });
  await rejectAs(world, refused, anh.email, 'Sai số tài khoản thụ hưởng');
  cancellable = await world.sentContract([{ ...binh, order: 1 }], {
    title: 'Phụ lục điều chỉnh lãi suất',
  });
  await world.create({ title: 'Hợp đồng mở tài khoản doanh nghiệp', signers: [anh] });
  browser = await openBrowserWorld(h);
  fs.mkdirSync(artifacts, { recursive: true });
});
afterAll(async () => {
  await browser?.close();
  await world?.close();
});
afterEach(() => {
  // preview.js (pdf.js) is another part of the app; until it is built beside these pages, the
  // browser refuses its missing file, and says so.
  expect(browser.takeErrors().filter((error) => !error.includes('preview.js'))).toEqual([]);
});

/** A browser of ACME's administrator, signed in through `?at=` as an embedding partner does. */
async function signedIn(
  options: { width?: number; locale?: 'vi' | 'en' } = {},
): Promise<{ context: BrowserContext; page: Page }> {
  const context = await browser.newContext(options);
  const page = await browser.newPage(context);
  const token = await issueToken(world.h.deps, world.acme.adminUserId, 'access');
  recordIssuedSecret(token, 'access token');
  await page.goto(`${browser.origin}/app/dashboard?at=${token}`);
  if (options.locale === 'en') await page.goto(`${browser.origin}/app/dashboard?lang=en`);
  return { context, page };
}

async function noHorizontalOverflow(page: Page): Promise<void> {
  const widths = (await page.evaluate(
    '({ scroll: document.documentElement.scrollWidth, view: window.innerWidth })',
  )) as { scroll: number; view: number };
  expect(widths.scroll).toBeLessThanOrEqual(widths.view);
}

async function shoot(page: Page, name: string): Promise<void> {
  await page.screenshot({ path: path.join(artifacts, `${name}.png`), fullPage: true });
}

describe('contract pages in Chromium', () => {
  it('searches without accents, filters by status and opens a contract', async () => {
    const { context, page } = await signedIn();
    await page.goto(`${browser.origin}/app/hop-dong`);
    await page.fill('#search', 'da nang xanh');
    await page.selectOption('#status', 'signing');
    await Promise.all([
      page.waitForURL(/search=da\+nang\+xanh/),
      page.click('form.filters button'),
    ]);
    expect(new URL(page.url()).searchParams.get('status')).toBe('signing');
    const rows = page.locator('table.contract-list tbody tr');
    await expect(rows.count()).resolves.toBe(1);
    await Promise.all([
      page.waitForURL(new RegExp(`/app/hop-dong/${signing}$`)),
      rows.first().locator('a').click(),
    ]);
    const signers = page.locator('ol.signers > li');
    await expect(signers.nth(0).textContent()).resolves.toContain('Đã ký');
    await expect(signers.nth(1).textContent()).resolves.toContain('Đến lượt ký');
    await expect(signers.nth(2).textContent()).resolves.toContain('Đã gửi bản xem');
    await context.close();
  });

  it('downloads the signed PDF and the audit trail from the page', async () => {
    const { context, page } = await signedIn();
    await page.goto(`${browser.origin}/app/hop-dong/${signing}`);
    for (const name of ['Bản đã ký', 'Nhật ký ký số (PDF)']) {
      const [download] = await Promise.all([
        page.waitForEvent('download'),
        page.getByRole('link', { name, exact: true }).click(),
      ]);
      const file = await download.path();
      expect(fs.readFileSync(file).subarray(0, 5).toString()).toBe('%PDF-');
      expect(download.suggestedFilename()).toMatch(/\.pdf$/);
    }
    await context.close();
  });

  it('sends an invitation again through the page once five minutes have passed', async () => {
    const contract = await world.h.deps.db
      .selectFrom('contracts')
      .select('id')
      .where('uuid', '=', signing)
      .executeTakeFirstOrThrow();
    await world.h.deps.db
      .updateTable('contract_signers')
      .set({ invited_at: new Date(world.h.clock.now().getTime() - 10 * 60_000).toISOString() })
      .where('contract_id', '=', contract.id)
      .where('email', '=', binh.email)
      .execute();
    const { context, page } = await signedIn();
    await page.goto(`${browser.origin}/app/hop-dong/${signing}`);
    await Promise.all([
      page.waitForURL(/done=resent/),
      page.getByRole('button', { name: 'Gửi lại lời mời cho Trần Thị Bình' }).click(),
    ]);
    await expect(page.locator('.notice-success').textContent()).resolves.toContain(
      'Đã gửi lại lời mời ký',
    );
    await expect(page.locator('ol.signers > li').nth(1).textContent()).resolves.toContain(
      'Có thể gửi lại sau',
    );
    await context.close();
  });

  it('cancels with a reason after the confirmation, and keeps the contract when it is dismissed', async () => {
    const { context, page } = await signedIn();
    await page.goto(`${browser.origin}/app/hop-dong/${cancellable}`);
    await page.fill('#cancel-reason', 'Khách hàng đề nghị dừng giao dịch');
    page.once('dialog', (dialog) => void dialog.dismiss());
    await page.click('#cancel button[type=submit]');
    await expect(page.locator('h1 + .badge').textContent()).resolves.toBe('Đang ký');
    page.once('dialog', (dialog) => void dialog.accept());
    await Promise.all([
      page.waitForURL(/done=cancelled/),
      page.click('#cancel button[type=submit]'),
    ]);
    await expect(page.locator('.notice-success').textContent()).resolves.toBe(
      'Hợp đồng đã được hủy.',
    );
    await expect(page.locator('h1 + .badge').textContent()).resolves.toBe('Đã hủy');
    await expect(page.locator('#cancel').count()).resolves.toBe(0);
    await context.close();
  });

  it('shows the pending task and the waiting contract on the dashboard', async () => {
    const { context, page } = await signedIn();
    await page.goto(`${browser.origin}/app/dashboard`);
    await expect(page.locator('.dash-tasks').textContent()).resolves.toContain(
      'Tờ trình giải ngân khoản vay KH-2026-118',
    );
    await expect(page.locator('.dash-tasks .badge-warning').textContent()).resolves.toBe(
      'Sắp đến hạn',
    );
    await expect(page.locator('.dash-contracts').textContent()).resolves.toContain(
      'Hợp đồng tín dụng số 2026/HĐTD-0457',
    );
    await context.close();
  });

  it('holds on a 360 px phone: no page scrolls sideways', async () => {
    const { context, page } = await signedIn({ width: 360 });
    for (const url of ['/app/dashboard', '/app/hop-dong', `/app/hop-dong/${signing}`]) {
      await page.goto(`${browser.origin}${url}`);
      await noHorizontalOverflow(page);
    }
    await context.close();
  });

  it('writes screenshots of each page, in both languages, wide and on a phone', async () => {
    for (const locale of ['vi', 'en'] as const) {
      for (const width of [1280, 390]) {
        const { context, page } = await signedIn({ width, locale });
        for (const [name, url] of [
          ['dashboard', '/app/dashboard'],
          ['contracts', '/app/hop-dong'],
          ['contract', `/app/hop-dong/${signing}`],
        ] as const) {
          await page.goto(`${browser.origin}${url}`);
          await noHorizontalOverflow(page);
          await shoot(page, `${name}-${locale}-${width}`);
        }
        await context.close();
      }
    }
    expect(
      fs.readdirSync(artifacts).filter((name) => name.endsWith('.png')).length,
    ).toBeGreaterThanOrEqual(12);
  });
});
