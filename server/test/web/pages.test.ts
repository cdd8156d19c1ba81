import fs from 'node:fs';
import path from 'node:path';
import type { BrowserContext, Page } from 'playwright-core';
import { recordIssuedSecret } from '../../../test/support/runLog';
import { issueToken } from '../../src/auth/tokens';
import { sealKey } from '../../src/keys/signingKeys';
import { sealPdf } from '../../src/signing/finalize';
import { contractPdf, formOf } from '../contracts/fixtures';
import { classicPdf } from '../signing/pdf/corpus';
import { strokePng } from '../signing/pdf/pngs';
import { type BrowserWorld, openBrowserWorld } from '../support/browser';
import { createDossier, createProcess, openTask } from '../support/dossiers';
import {
  createHarness,
  type Harness,
  readJson,
  type SeededTenant,
  seedTenant,
} from '../support/harness';

/**
 * Every page of the web application, in Debian's Chromium, for a seeded world (a dossier with an
 * open task, a contract): in Vietnamese and English, at 1280 px and 390 px wide, each page
 *   - answers as it should, with no console error (a CSP refusal is one);
 *   - has no serious or critical accessibility violation by axe-core (from npm, evaluated in the
 *     page from node_modules: no CDN, and the page's own CSP untouched);
 *   - is photographed to test/artifacts/pages/<page>-<lang>-<width>.png (git-ignored), for
 *     people to look at.
 *
 * THE LIST below is the one place pages are named: a new page is one more entry. An entry whose
 * page file is not in the tree yet (built on another branch) is left out until it is.
 */

jest.setTimeout(600_000);

interface World {
  h: Harness;
  tenant: SeededTenant;
  dossierId: number;
  taskId: number;
  contractId: string;
  /** A contract whose only signer is the administrator, waiting for their signature. */
  turnContractId: string;
  /** The same, signed by the administrator (image signature): completed. */
  signedContractId: string;
  /** A PDF sealed by the service (development CA and TSA): a valid signature to verify. */
  signedPdf: string;
}

interface PageEntry {
  /** File name of its screenshots. */
  name: string;
  /** The path under the server, from the seeded world. */
  path: (world: World) => string;
  /** Opened signed in as the tenant's administrator (default), or without a session. */
  anonymous?: boolean;
  /** The HTTP status it answers with; 200 by default. */
  status?: number;
  /** The page file that serves it: the entry waits for it to be in the tree. */
  servedBy?: string;
  /** Something a person does on the page before it is checked (a form sent, say). */
  act?: (page: Page, world: World) => Promise<void>;
}

const pagesDir = path.join(__dirname, '../../src/web/pages');

/** Every page of the app. */
const pages: PageEntry[] = [
  { name: 'sign-in', path: () => '/app/dang-nhap', anonymous: true },
  { name: 'dashboard', path: () => '/app/dashboard' },
  { name: 'not-found', path: () => '/app/khong-co-trang-nay', status: 404 },
  { name: 'verify', path: () => '/app/xac-thuc', anonymous: true },
  { name: 'verify-signed-in', path: () => '/app/xac-thuc' },
  {
    name: 'verify-result',
    path: () => '/app/xac-thuc',
    anonymous: true,
    act: async (page, world) => {
      await page.locator('#verify-file').setInputFiles(world.signedPdf);
      await Promise.all([
        page.waitForLoadState('load'),
        page.locator('form[enctype="multipart/form-data"] button[type=submit]').click(),
      ]);
      await page.locator('.verify-result').waitFor();
    },
  },
  { name: 'dossiers', path: () => '/app/ho-so', servedBy: 'dossiers.tsx' },
  { name: 'dossier', path: (w) => `/app/ho-so/${w.dossierId}`, servedBy: 'dossiers.tsx' },
  { name: 'tasks', path: () => '/app/xu-ly-cong-viec', servedBy: 'tasks.tsx' },
  { name: 'tasks-handled', path: () => '/app/xu-ly-cong-viec?tab=handled', servedBy: 'tasks.tsx' },
  { name: 'task', path: (w) => `/app/xu-ly-cong-viec/${w.taskId}`, servedBy: 'tasks.tsx' },
  { name: 'contracts', path: () => '/app/hop-dong', servedBy: 'contracts.tsx' },
  { name: 'contract', path: (w) => `/app/hop-dong/${w.contractId}`, servedBy: 'contracts.tsx' },
  // The signing page: a task that is not signed (closed for signing), a contract turn before
  // signing (the methods, the USB token among them), after signing (the verification result),
  // and a link that opens nothing.
  { name: 'signing', path: (w) => `/app/ky-so/${w.taskId}`, servedBy: 'signing.tsx' },
  {
    name: 'signing-turn',
    path: (w) => `/app/ky-so/hop-dong/${w.turnContractId}`,
    servedBy: 'signing.tsx',
  },
  {
    name: 'signing-signed',
    path: (w) => `/app/ky-so/hop-dong/${w.signedContractId}`,
    servedBy: 'signing.tsx',
  },
  {
    name: 'signing-link-over',
    path: () => '/app/ky-so/phien/khong-con-hieu-luc-0123456789',
    anonymous: true,
    status: 404,
    servedBy: 'signing.tsx',
  },
];

const present = pages.filter(
  (entry) => !entry.servedBy || fs.existsSync(path.join(pagesDir, entry.servedBy)),
);

const layouts = [
  { locale: 'vi', width: 1280 },
  { locale: 'en', width: 1280 },
  { locale: 'vi', width: 390 },
  { locale: 'en', width: 390 },
] as const;

const artifacts = path.resolve(__dirname, '../../../test/artifacts/pages');
const axeSource = fs.readFileSync(require.resolve('axe-core/axe.min.js'), 'utf8');
const password = 'Mật-khẩu-đủ-dài-2026';

let world: World;
let browser: BrowserWorld;

beforeAll(async () => {
  const h = createHarness();
  const tenant = await seedTenant(h, 'PAGE', { adminPassword: password });
  const process = await createProcess(h, {
    tenantId: tenant.tenantId,
    organizationId: tenant.rootOrganizationId,
    code: 'QT-PAGES',
    name: 'Quy trình phê duyệt hợp đồng tín dụng',
    steps: [
      {
        stepCode: 'S1',
        name: 'Trưởng phòng phê duyệt',
        kind: 'internal',
        signType: 'app_submit',
        defaultUserId: tenant.adminUserId,
      },
      {
        stepCode: 'S2',
        name: 'Khách hàng ký',
        kind: 'guest',
        signType: 'image_signature',
      },
    ],
  });
  const dossier = await createDossier(h, process, {
    title: 'Hợp đồng tín dụng số 01/2026/HĐTD',
    signers: [{ stepCode: 'S2', fullName: 'Nguyễn Văn Ánh', email: 'anh@khachhang.example' }],
    files: [{ title: 'Hợp đồng tín dụng', content: await classicPdf(2) }],
  });
  const task = await openTask(h, dossier.id);
  const created = await h.app.request('/api/contracts', {
    method: 'POST',
    headers: { 'x-api-key': tenant.orgKey },
    body: formOf({
      file: { name: 'hop-dong-mua-ban.pdf', bytes: await contractPdf('pages') },
      title: 'Hợp đồng mua bán thiết bị',
    }),
  });
  if (created.status !== 201) throw new Error(`contract: ${created.status}`);
  const contract = await readJson<{ data: { id: string } }>(created);
  // The administrator's own turns on contracts: one waiting, one signed with a drawn image.
  const turnContractId = await adminContract(h, tenant, 'Hợp đồng dịch vụ ngân hàng điện tử');
  const signedContractId = await adminContract(h, tenant, 'Hợp đồng mở tài khoản thanh toán');
  const api = (url: string, json: unknown) =>
    h.request('POST', url, { headers: { 'x-api-key': tenant.orgKey }, json });
  const session = await readJson<{ data: { sessionId: string } }>(
    await api('/api/signing/initiate', {
      contractId: signedContractId,
      signerEmail: `${tenant.adminUsername}@example.com`,
      signingMethod: 'image_signature',
    }),
  );
  const confirmed = await api(`/api/signing/${session.data.sessionId}/confirm`, {
    signatureImage: `data:image/png;base64,${strokePng().toString('base64')}`,
  });
  if (confirmed.status !== 200) throw new Error(`confirm: ${confirmed.status}`);
  const unsigned = path.join(h.dataDir, 'hop-dong-tin-dung.pdf');
  fs.writeFileSync(unsigned, await classicPdf(2));
  const sealed = await sealPdf(h.deps, await sealKey(h.deps), unsigned);
  const signedPdf = path.join(h.dataDir, 'hop-dong-tin-dung-da-ky.pdf');
  fs.renameSync(sealed, signedPdf);
  world = {
    signedPdf,
    h,
    tenant,
    dossierId: dossier.id,
    taskId: task!.id,
    contractId: contract.data.id,
    turnContractId,
    signedContractId,
  };
  browser = await openBrowserWorld(h);
  fs.mkdirSync(artifacts, { recursive: true });
});

/** A contract sent for signing whose only signer is the tenant's administrator. */
async function adminContract(h: Harness, tenant: SeededTenant, title: string): Promise<string> {
  if (new Date() > h.clock.now()) h.clock.set(new Date());
  const created = await h.app.request('/api/contracts', {
    method: 'POST',
    headers: { 'x-api-key': tenant.orgKey },
    body: formOf({
      file: { name: 'hop-dong.pdf', bytes: await contractPdf(title.length.toString()) },
      title,
      expiredAt: new Date(h.clock.now().getTime() + 7 * 86_400_000).toISOString(),
      signers: [
        {
          name: 'Quản trị viên PAGE',
          email: `${tenant.adminUsername}@example.com`,
          order: 1,
        },
      ],
    }),
  });
  if (created.status !== 201) throw new Error(`contract: ${created.status}`);
  const { data } = await readJson<{ data: { id: string } }>(created);
  const sent = await h.request('POST', `/api/contracts/${data.id}/send`, {
    headers: { 'x-api-key': tenant.orgKey },
  });
  if (sent.status !== 200) throw new Error(`send: ${sent.status}`);
  return data.id;
}

afterAll(async () => {
  await browser?.close();
  await world?.h.close();
});

/** A browser context in a language and width, signed in through `?at=` unless anonymous. */
async function contextFor(
  layout: (typeof layouts)[number],
  anonymous: boolean,
): Promise<{ context: BrowserContext; page: Page }> {
  const context = await browser.newContext({ width: layout.width, locale: layout.locale });
  const page = await browser.newPage(context);
  let start = `${browser.origin}/app/dang-nhap?lang=${layout.locale}`;
  if (!anonymous) {
    const token = await issueToken(world.h.deps, world.tenant.adminUserId, 'access');
    recordIssuedSecret(token, 'access token');
    start = `${browser.origin}/app/dashboard?lang=${layout.locale}`;
    await page.goto(`${browser.origin}/app/dashboard?at=${token}`);
  }
  await page.goto(start);
  return { context, page };
}

interface AxeViolation {
  id: string;
  impact: string | null;
  help: string;
  nodes: { target: string[] }[];
}

/** axe-core's serious and critical findings on the page as it is now. */
async function seriousViolations(page: Page): Promise<string[]> {
  // Evaluated through the DevTools protocol: the page's CSP, which refuses inline scripts,
  // stays as it is.
  await page.evaluate(axeSource);
  const { violations, passes } = (await page.evaluate(
    `axe.run(document).then((r) => ({ passes: r.passes.length, violations: r.violations.map((v) => ({ id: v.id, impact: v.impact, help: v.help, nodes: v.nodes.map((n) => ({ target: n.target })) })) }))`,
  )) as { violations: AxeViolation[]; passes: number };
  // axe really looked: a page of ours passes dozens of its rules.
  expect(passes).toBeGreaterThan(10);
  return violations
    .filter((v) => v.impact === 'serious' || v.impact === 'critical')
    .map(
      (v) =>
        `${v.impact} ${v.id}: ${v.help} (${v.nodes.map((n) => n.target.join(' ')).join(', ')})`,
    );
}

describe.each(layouts)('every page in $locale at $width px', (layout) => {
  it.each(present.map((entry) => [entry.name, entry] as const))(
    '%s: answers, no console error, no serious accessibility violation, photographed',
    async (_name, entry) => {
      const { context, page } = await contextFor(layout, entry.anonymous === true);
      try {
        const response = await page.goto(`${browser.origin}${entry.path(world)}`);
        expect(response?.status()).toBe(entry.status ?? 200);
        expect(await page.getAttribute('html', 'lang')).toBe(layout.locale);
        if (entry.act) await entry.act(page, world);
        // Fonts and the page's own scripts (dates, previews) settle first.
        await page.waitForLoadState('networkidle');
        await page.screenshot({
          path: path.join(artifacts, `${entry.name}-${layout.locale}-${layout.width}.png`),
          fullPage: true,
        });
        expect(await seriousViolations(page)).toEqual([]);
        // Nothing wider than the screen: the layout holds down to a phone.
        const overflow = await page.evaluate(
          'document.documentElement.scrollWidth - document.documentElement.clientWidth',
        );
        expect(overflow).toBeLessThanOrEqual(0);
        expect(browser.takeErrors()).toEqual([]);
      } finally {
        await context.close();
      }
    },
  );
});
