import { execFileSync } from 'node:child_process';
import type http from 'node:http';
import { type Browser, chromium, type Page } from 'playwright-core';
import { serveApp } from '../../src/serve';
import { contractsPath } from '../contracts/fixtures';
import { parseMail } from '../notify/support';
import { ensureBuilt } from '../startup/builtServer';
import { dataOf, openSessionWorld, type SessionWorld } from './world';

/**
 * The signing page in Debian's Chromium against the app listening on 127.0.0.1: the page the
 * server serves from the build (scripts/build.mjs bundles its script), the API it calls for real.
 */

jest.setTimeout(180_000);

let world: SessionWorld;
let server: http.Server;
let origin: string;
let browser: Browser;
/** What the pages printed as errors (a CSP refusal, a script error); API refusals are expected. */
const consoleErrors: string[] = [];

beforeAll(async () => {
  ensureBuilt();
  world = await openSessionWorld();
  const listening = new Promise<number>((resolve) => {
    server = serveApp(
      world.h.app.fetch,
      { hostname: '127.0.0.1', port: 0, logger: world.h.deps.logger },
      ({ port }) => resolve(port),
    );
  });
  origin = `http://127.0.0.1:${await listening}`;
  browser = await chromium.launch({ executablePath: '/usr/bin/chromium' });
});
afterAll(async () => {
  await browser?.close();
  await new Promise((resolve) => (server ? server.close(resolve) : resolve(undefined)));
  await world?.close();
});
afterEach(() => {
  expect(consoleErrors.splice(0)).toEqual([]);
});

/** signingUrl names APP_URL; the page is this server's /app (the default APP_URL). */
function pageUrlOf(signingUrl: string): string {
  return `${origin}/app/ky-so/phien/${signingUrl.split('/').at(-1)}`;
}

async function initiated(contractId: string, email: string, method: string) {
  return dataOf<{ sessionId: string; contractHash: string; signingUrl: string }>(
    await world.initiate(contractId, email, method),
  );
}

async function open(url: string): Promise<Page> {
  const page = await browser.newPage();
  page.on('console', (message) => {
    const text = message.text();
    if (message.type() === 'error' && !text.startsWith('Failed to load resource')) {
      consoleErrors.push(text);
    }
  });
  page.on('pageerror', (error) => consoleErrors.push(error.message));
  world.tick();
  const response = await page.goto(url);
  expect(response?.status()).toBe(200);
  const headers = response!.headers();
  expect(headers['cache-control']).toBe('no-store');
  expect(headers['referrer-policy']).toBe('no-referrer');
  expect(headers['content-security-policy']).toContain("script-src 'self'");
  expect(headers['content-security-policy']).not.toContain('unsafe-inline');
  return page;
}

describe('the signing page', () => {
  let otpUrl: string;

  it('signs an otp_sms session: code sent, read from the SMS outbox, confirmed', async () => {
    const contractId = await world.sentContract(
      [{ name: 'Nguyễn Văn Ánh', email: 'anh@partner.example', phone: '0912345678', order: 1 }],
      { title: 'Hợp đồng dịch vụ' },
    );
    const session = await initiated(contractId, 'anh@partner.example', 'otp_sms');
    otpUrl = pageUrlOf(session.signingUrl);
    const page = await open(otpUrl);

    await page.locator('#session').waitFor();
    expect(await page.locator('#title').textContent()).toBe('Hợp đồng dịch vụ');
    expect(await page.locator('#signer').textContent()).toContain('Nguyễn Văn Ánh');
    expect(await page.locator('#hash').textContent()).toBe(session.contractHash);
    expect(await page.locator('#image').isVisible()).toBe(false);
    // The link was exchanged once; a reload goes on with the credential this tab kept.
    await page.reload();
    await page.locator('#session').waitFor();
    expect(await page.locator('#hash').textContent()).toBe(session.contractHash);

    world.tick();
    await page.getByRole('button', { name: /Gửi mã OTP/ }).click();
    await page.locator('#otp-sent').waitFor();
    expect(await page.locator('#otp-sent').textContent()).toContain('09******78');
    await world.deliver();
    const otp = world.otpFor('0912345678');
    // A wrong code first: the page shows the API's refusal and lets the signer try again.
    const wrong = `${otp.slice(0, 5)}${(Number(otp[5]) + 1) % 10}`;
    await page.locator('#otp-code').fill(wrong);
    world.tick();
    await page.locator('#confirm-otp').click();
    const refusal = page.locator('#error');
    await refusal.waitFor();
    expect(await refusal.getAttribute('data-code')).toBe('OTP_INVALID');
    expect(await refusal.textContent()).toContain('Mã OTP không đúng');
    await page.locator('#otp-code').fill(otp);
    world.tick();
    await page.locator('#confirm-otp').click();

    await page.locator('#result-details').waitFor();
    expect(await page.locator('#result-text').textContent()).toContain('Đã ký thành công');
    expect(await page.locator('#certificate').textContent()).toMatch(/CN=/);
    const signedAt = await page.locator('#signed-at').getAttribute('title');
    expect(Number.isNaN(Date.parse(signedAt ?? ''))).toBe(false);
    await page.close();
  });

  it('says a used link was used', async () => {
    const page = await open(otpUrl);
    const fatal = page.locator('#fatal');
    await fatal.waitFor();
    expect(await fatal.getAttribute('data-code')).toBe('SIGNING_LINK_USED');
    expect(await fatal.textContent()).toContain('Liên kết ký này đã được sử dụng');
    expect(await page.locator('#session').isVisible()).toBe(false);
    await page.close();
  });

  it('signs an image_signature session with a signature drawn by mouse; the PDF holds it', async () => {
    const contractId = await world.sentContract(
      [{ name: 'Lê Văn Cường', email: 'cuong@partner.example', order: 1 }],
      { title: 'Hợp đồng thuê' },
    );
    const session = await initiated(contractId, 'cuong@partner.example', 'image_signature');
    const page = await open(pageUrlOf(session.signingUrl));
    const pad = page.locator('#pad');
    await pad.waitFor();
    expect(await page.locator('#otp').isVisible()).toBe(false);

    const box = (await pad.boundingBox())!;
    await page.mouse.move(box.x + 30, box.y + 120);
    await page.mouse.down();
    await page.mouse.move(box.x + 120, box.y + 40, { steps: 8 });
    await page.mouse.move(box.x + 220, box.y + 140, { steps: 8 });
    await page.mouse.move(box.x + 400, box.y + 60, { steps: 8 });
    await page.mouse.up();
    world.tick();
    await page.locator('#confirm-image').click();
    await page.locator('#result-details').waitFor();
    expect(await page.locator('#result-text').textContent()).toContain('Đã ký thành công');
    await page.close();

    const file = await world.signedFile(contractId, 'page-signed.pdf');
    const images = execFileSync('pdfimages', ['-list', file], { encoding: 'utf8' });
    // The canvas is 480 × 180: its picture, and its transparency as the soft mask.
    expect(images).toMatch(/image\s+480\s+180\s/);
    expect(images).toMatch(/smask\s+480\s+180\s/);
  });

  it('declines with a reason', async () => {
    const contractId = await world.sentContract([
      { name: 'Trần Thị Bình', email: 'binh@partner.example', phone: '0987654321', order: 1 },
    ]);
    const session = await initiated(contractId, 'binh@partner.example', 'usb_token');
    const page = await open(pageUrlOf(session.signingUrl));
    await page.locator('#usb').waitFor();
    await page.locator('#reject-reason').fill('Sai thông tin bên B');
    world.tick();
    await page.getByRole('button', { name: /Từ chối ký/ }).click();
    await page.locator('#result').waitFor();
    expect(await page.locator('#result-text').textContent()).toContain('từ chối');
    const contract = await dataOf<{ status: string }>(
      await world.request('GET', `${contractsPath}/${contractId}`, world.acme.orgKey),
    );
    expect(contract.status).toBe('rejected');
    await page.close();
  });

  it('opens the e-mailed invitation link: the contract, a method picked, the SMS code, signed', async () => {
    const before = world.smtp.received.length;
    await world.sentContract(
      [
        { name: 'Phạm Thị Dung', email: 'dung@partner.example', phone: '0911222333', order: 1 },
        { name: 'Lê Quan Sát', email: 'viewer@partner.example', order: 2, role: 'viewer' },
      ],
      { title: 'Hợp đồng mua bán' },
    );
    await world.deliver();
    const linkTo = (email: string) => {
      const mail = world.smtp.received.slice(before).find((m) => m.to.includes(email))!;
      const link = /https:\/\/app\.esign\.example\/ky-so\/([A-Za-z0-9_-]{43})\b/.exec(
        parseMail(mail.raw).text ?? '',
      );
      // The e-mailed {APP_URL}/ky-so/<token>, on this server's /app.
      return `${origin}/app/ky-so/${link![1]}`;
    };

    // While the contract is being signed, the viewer's link shows it and offers nothing to sign.
    const viewer = await open(linkTo('viewer@partner.example'));
    await viewer.locator('#no-choice').waitFor();
    expect(await viewer.locator('#no-choice').textContent()).toContain('không cần ký');
    expect(await viewer.locator('#choose').isVisible()).toBe(false);
    await viewer.close();

    const page = await open(linkTo('dung@partner.example'));
    await page.locator('#choose').waitFor();
    expect(await page.locator('#title').textContent()).toBe('Hợp đồng mua bán');
    expect(await page.locator('#signer').textContent()).toContain('Phạm Thị Dung');
    expect(
      await page
        .locator('#methods button')
        .evaluateAll((buttons) => buttons.map((b) => b.getAttribute('data-method'))),
    ).toEqual(['usb_token', 'cloud_hsm', 'otp_sms', 'image_signature']);
    world.tick();
    await page.getByRole('button', { name: /Ký bằng mã OTP/ }).click();
    await page.locator('#otp').waitFor();
    expect(await page.locator('#choose').isVisible()).toBe(false);
    expect(await page.locator('#hash').textContent()).toMatch(/^sha256:[0-9a-f]{64}$/);

    world.tick();
    await page.getByRole('button', { name: /Gửi mã OTP/ }).click();
    await page.locator('#otp-sent').waitFor();
    await world.deliver();
    await page.locator('#otp-code').fill(world.otpFor('0911222333'));
    world.tick();
    await page.locator('#confirm-otp').click();
    await page.locator('#result-details').waitFor();
    expect(await page.locator('#result-text').textContent()).toContain('Đã ký thành công');
    await page.close();
  });

  it('sends a visitor elsewhere in /app without a session to sign in', async () => {
    for (const url of ['/app', '/app/ky-so/abc', '/app/ky-so/phien/not.a.token']) {
      const response = await fetch(`${origin}${url}`, { redirect: 'manual' });
      expect(response.status).toBe(303);
      expect(response.headers.get('location')).toMatch(/^\/app\/dang-nhap\?next=/);
    }
  });
});
