import fs from 'node:fs';
import https from 'node:https';
import type net from 'node:net';
import path from 'node:path';
import { getRequestListener } from '@hono/node-server';
import { type Browser, chromium, type Frame, type Page } from 'playwright-core';
import { startHttpsServer, type TestHttpsServer, testTls } from '../../../test/support/httpsServer';
import { recordIssuedSecret } from '../../../test/support/runLog';
import { issueToken } from '../../src/auth/tokens';
import { addEmbeddingOrigin } from '../../src/tenancy/embeddingOrigins';
import { tenantByCode } from '../../src/tenancy/resolveTenant';
import { assetUrl } from '../../src/web/assets';
import { contractPdf, contractsPath, formOf } from '../contracts/fixtures';
import { classicPdf } from '../signing/pdf/corpus';
import { ensureBuilt } from '../startup/builtServer';
import { createDossier, createProcess } from '../support/dossiers';
import { createHarness, type Harness, type SeededTenant, seedTenant } from '../support/harness';
import { webSignIn } from '../support/web';

/**
 * Embedding (docs/embedding.md): pages answer `frame-ancestors` with the viewer's tenant's
 * registered origins ('none' without), and in Debian's Chromium a partner page on a registered
 * origin frames the app over HTTPS (the session cookie `SameSite=None; Partitioned`), the pages
 * work inside the frame, the parent receives the frame's message (target origin the registered
 * one), and a page on another origin gets nothing: Chromium refuses to frame the app there.
 */

jest.setTimeout(180_000);

let h: Harness;
let tenant: SeededTenant;
let other: SeededTenant;
let app: https.Server;
let appOrigin: string;
let partner: TestHttpsServer;
let stranger: TestHttpsServer;
let browser: Browser;
/** The partner's page, as a browser names it: another site than the app's 127.0.0.1. */
let partnerOrigin: string;
const password = 'Mật-khẩu-đủ-dài-2026';

/** A partner page framing `src` and keeping every message it receives, with its origin. */
function parentPage(src: string): string {
  return `<!doctype html><html><head><title>Partner</title></head><body>
<h1>Partner portal</h1>
<iframe id="esign" src="${src}" title="e-sign" width="1100" height="800"></iframe>
<script>
  window.received = [];
  window.addEventListener('message', (event) => {
    window.received.push({ origin: event.origin, data: event.data });
  });
</script></body></html>`;
}

beforeAll(async () => {
  ensureBuilt();
  // HTTPS, as embedding needs: the cookie is then Secure, SameSite=None, Partitioned.
  h = createHarness({ PUBLIC_URL: 'https://127.0.0.1:3000' });
  tenant = await seedTenant(h, 'EMBD', { adminPassword: password });
  other = await seedTenant(h, 'EMBX', { adminPassword: password });
  app = https.createServer(
    { cert: testTls.cert(), key: testTls.key() },
    getRequestListener(h.app.fetch),
  );
  await new Promise<void>((resolve) => app.listen(0, '127.0.0.1', resolve));
  appOrigin = `https://127.0.0.1:${(app.address() as net.AddressInfo).port}`;
  partner = await startHttpsServer();
  stranger = await startHttpsServer();
  partnerOrigin = `https://localhost:${partner.port}`;
  await addEmbeddingOrigin(
    h.deps.db,
    await tenantByCode(h.deps.db, tenant.code),
    h.now(),
    partnerOrigin,
  );
  browser = await chromium.launch({ executablePath: '/usr/bin/chromium' });
});

afterAll(async () => {
  await browser?.close();
  await partner?.close();
  await stranger?.close();
  await new Promise((resolve) => (app ? app.close(resolve) : resolve(undefined)));
  await h?.close();
});

describe('frame-ancestors', () => {
  it("is the viewer's tenant's registered origins, and 'none' for anyone else", async () => {
    const registered = await webSignIn(h, tenant.adminUsername, password);
    const mine = await h.request('GET', '/app/dashboard', { headers: { cookie: registered } });
    expect(mine.headers.get('content-security-policy')).toContain(
      `frame-ancestors ${partnerOrigin}`,
    );
    expect(await mine.text()).toContain(`data-embed-origins="${partnerOrigin}"`);

    const unregistered = await webSignIn(h, other.adminUsername, password);
    const theirs = await h.request('GET', '/app/dashboard', { headers: { cookie: unregistered } });
    expect(theirs.headers.get('content-security-policy')).toContain("frame-ancestors 'none'");
    expect(await theirs.text()).not.toContain('data-embed-origins');

    const anonymous = await h.request('GET', '/app/dang-nhap');
    expect(anonymous.headers.get('content-security-policy')).toContain("frame-ancestors 'none'");
  });
});

describe('inside a partner page, in Chromium', () => {
  /** Opens `url` on a partner page (`server`) framing the app at `frameSrc`. */
  async function framed(server: TestHttpsServer, origin: string, frameSrc: string) {
    server.route('/portal', (_req, res) => {
      res.writeHead(200, { 'Content-Type': 'text/html; charset=utf-8' }).end(parentPage(frameSrc));
    });
    const context = await browser.newContext({ ignoreHTTPSErrors: true });
    const page = await context.newPage();
    const errors: string[] = [];
    page.on('console', (message) => {
      // A missing favicon is no page's fault (browser.ts leaves these out too).
      const text = message.text();
      if (message.type() === 'error' && !text.startsWith('Failed to load resource')) {
        errors.push(text);
      }
    });
    page.on('pageerror', (error) => errors.push(error.message));
    await page.goto(`${origin}/portal`);
    return { context, page, errors };
  }

  async function appFrame(page: Page): Promise<Frame> {
    const frame = page.frame({ url: (url) => url.href.startsWith(appOrigin) });
    if (!frame) throw new Error('no app frame');
    return frame;
  }

  function accessToken(userId: number): Promise<string> {
    return issueToken(h.deps, userId, 'access').then((token) => {
      recordIssuedSecret(token, 'access token');
      return token;
    });
  }

  it('works on a registered origin: ?at= opens a session, forms post, the parent gets the message', async () => {
    const token = await accessToken(tenant.adminUserId);
    const { context, page, errors } = await framed(
      partner,
      partnerOrigin,
      `${appOrigin}/app/dashboard?at=${token}`,
    );
    await page.waitForFunction(
      `document.querySelector('iframe').contentWindow !== null`,
      undefined,
      { timeout: 10_000 },
    );
    let frame = await appFrame(page);
    await frame.waitForURL(`${appOrigin}/app/dashboard`);
    // The session lives in the frame: the page knows the user, the token is gone from its URL.
    expect(await frame.locator('.user-name').textContent()).toContain(tenant.adminUsername);
    const cookies = await context.cookies(appOrigin);
    const session = cookies.find((cookie) => cookie.name === '__Host-esign_session');
    expect(session).toMatchObject({ secure: true, sameSite: 'None', httpOnly: true });
    recordIssuedSecret(session!.value, 'web session cookie');

    // A form inside the frame: the verification upload, with the session still there after it.
    await frame.locator('.main-nav a[href="/app/xac-thuc"]').click();
    await frame.waitForURL(`${appOrigin}/app/xac-thuc`);
    const pdf = path.join(h.dataDir, 'unsigned.pdf');
    fs.writeFileSync(pdf, await classicPdf());
    await frame.locator('#verify-file').setInputFiles(pdf);
    await Promise.all([
      frame.waitForURL(`${appOrigin}/app/xac-thuc`),
      frame.locator('form[enctype="multipart/form-data"] button[type=submit]').click(),
    ]);
    await frame.locator('.verify-result').waitFor();
    expect(await frame.locator('.user-name').textContent()).toContain(tenant.adminUsername);

    // The page's message after an action, as the task pages render it (data-task-event), posted
    // by the real app.js to the registered parent origin.
    frame = await appFrame(page);
    await frame.evaluate(`(() => {
      const done = document.createElement('div');
      done.dataset.taskEvent = 'approved';
      done.dataset.taskId = '42';
      document.querySelector('main').append(done);
      const script = document.createElement('script');
      script.src = ${JSON.stringify(assetUrl('app.js'))};
      document.head.append(script);
    })()`);
    await page.waitForFunction('window.received.length > 0', undefined, { timeout: 10_000 });
    const received = (await page.evaluate('window.received')) as {
      origin: string;
      data: Record<string, unknown>;
    }[];
    expect(received).toHaveLength(1);
    expect(received[0]).toMatchObject({
      origin: appOrigin,
      data: { source: 'esign', version: 1, type: 'task.approved', taskId: '42' },
    });
    expect(errors).toEqual([]);
    await context.close();
  });

  it('is refused by Chromium on an origin the tenant did not register', async () => {
    const token = await accessToken(tenant.adminUserId);
    const strangerOrigin = `https://localhost:${stranger.port}`;
    const { context, page, errors } = await framed(
      stranger,
      strangerOrigin,
      `${appOrigin}/app/dashboard?at=${token}`,
    );
    // Chromium says why in the parent's console, and shows no page of ours in the frame.
    const deadline = Date.now() + 10_000;
    while (Date.now() < deadline && !errors.some((e) => e.includes('frame-ancestors'))) {
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    expect(errors.join('\n')).toMatch(
      new RegExp(`Framing '${appOrigin}/' violates .*frame-ancestors ${partnerOrigin}.*blocked`),
    );
    const frame = page.frame({ url: (url) => url.href.startsWith(appOrigin) });
    if (frame) expect(await frame.locator('.site-header').count()).toBe(0);
    expect(await page.evaluate('window.received.length')).toBe(0);
    await context.close();
  });

  /** The whole path with a real action: approving a task from the task list inside the frame. */
  it('tells the parent task.approved after a task is approved from the task list in the frame', async () => {
    const process = await createProcess(h, {
      tenantId: tenant.tenantId,
      organizationId: tenant.rootOrganizationId,
      code: 'QT-EMBED',
      steps: [
        {
          stepCode: 'S1',
          kind: 'internal',
          signType: 'app_submit',
          defaultUserId: tenant.adminUserId,
        },
        {
          stepCode: 'S2',
          kind: 'internal',
          signType: 'app_submit',
          defaultUserId: tenant.adminUserId,
        },
      ],
    });
    await createDossier(h, process, {});
    const token = await accessToken(tenant.adminUserId);
    const { context, page, errors } = await framed(
      partner,
      partnerOrigin,
      `${appOrigin}/app/xu-ly-cong-viec?at=${token}`,
    );
    await page.waitForFunction(`document.querySelector('iframe').contentWindow !== null`);
    const frame = await appFrame(page);
    await frame.waitForURL(`${appOrigin}/app/xu-ly-cong-viec`);
    page.on('dialog', (dialog) => void dialog.accept());
    await frame.locator('form[action$="/duyet"] button[type=submit]').first().click();
    await page.waitForFunction('window.received.length > 0', undefined, { timeout: 15_000 });
    const received = (await page.evaluate('window.received')) as {
      origin: string;
      data: Record<string, unknown>;
    }[];
    expect(received[0]).toMatchObject({
      origin: appOrigin,
      data: { source: 'esign', version: 1, type: 'task.approved' },
    });
    expect(received[0]!.data.taskId).toMatch(/^\d+$/);
    expect(errors).toEqual([]);
    await context.close();
  });

  it('signs a contract on the signing page inside the frame (drawn signature) and tells the parent contract.signed', async () => {
    // The signing link of a contract of the registered tenant: no sign-in, framed by the
    // contract's tenant's origins.
    if (new Date() > h.clock.now()) h.clock.set(new Date());
    const upload = await h.app.request(contractsPath, {
      method: 'POST',
      headers: { 'x-api-key': tenant.orgKey },
      body: formOf({
        file: { name: 'hop-dong.pdf', bytes: await contractPdf('embedded signing') },
        title: 'Hợp đồng ký trong khung',
        expiredAt: new Date(h.clock.now().getTime() + 7 * 86_400_000).toISOString(),
        signers: [{ name: 'Nguyễn Văn Ánh', email: 'anh@partner.example', order: 1 }],
      }),
    });
    expect(upload.status).toBe(201);
    const contractId = ((await upload.json()) as { data: { id: string } }).data.id;
    const api = (url: string, json: unknown) =>
      h.request('POST', url, { headers: { 'x-api-key': tenant.orgKey }, json });
    expect((await api(`${contractsPath}/${contractId}/send`, undefined)).status).toBe(200);
    const initiated = await api('/api/signing/initiate', {
      contractId,
      signerEmail: 'anh@partner.example',
      signingMethod: 'image_signature',
    });
    expect(initiated.status).toBe(200);
    const { signingUrl } = ((await initiated.json()) as { data: { signingUrl: string } }).data;
    const link = `${appOrigin}/app/ky-so/phien/${signingUrl.split('/').at(-1)}`;
    recordIssuedSecret(signingUrl.split('/').at(-1)!, 'signing link');
    const anonymous = await h.request('GET', new URL(link).pathname);
    expect(anonymous.headers.get('content-security-policy')).toContain(
      `frame-ancestors ${partnerOrigin}`,
    );

    const { context, page, errors } = await framed(partner, partnerOrigin, link);
    await page.waitForFunction(`document.querySelector('iframe').contentWindow !== null`);
    const frame = await appFrame(page);
    await frame.locator('#signature-pad:visible').waitFor({ timeout: 20_000 });
    const pad = frame.locator('#signature-pad');
    await pad.scrollIntoViewIfNeeded();
    const box = (await pad.boundingBox())!;
    await page.mouse.move(box.x + 0.1 * box.width, box.y + 0.7 * box.height);
    await page.mouse.down();
    for (const [x, y] of [
      [0.3, 0.25],
      [0.5, 0.75],
      [0.8, 0.3],
    ] as const) {
      await page.mouse.move(box.x + x * box.width, box.y + y * box.height, { steps: 8 });
    }
    await page.mouse.up();
    await frame.locator('#image-confirm').click();
    await page.waitForFunction('window.received.length > 0', undefined, { timeout: 30_000 });
    const signedFrame = await appFrame(page);
    expect(signedFrame.url()).toBe(`${link}?done=signed`);
    const received = (await page.evaluate('window.received')) as {
      origin: string;
      data: Record<string, unknown>;
    }[];
    expect(received).toEqual([
      {
        origin: appOrigin,
        data: {
          source: 'esign',
          version: 1,
          type: 'contract.signed',
          contractId,
          at: expect.any(String),
        },
      },
    ]);
    expect(errors).toEqual([]);
    await context.close();
  });
});
