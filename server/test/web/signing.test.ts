import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import type { Page } from 'playwright-core';
import { recordIssuedSecret } from '../../../test/support/runLog';
import { tempDir } from '../../../test/support/tools';
import { issueToken } from '../../src/auth/tokens';
import { contractsPath } from '../contracts/fixtures';
import { parseMail } from '../notify/support';
import { dataOf, openSessionWorld, type SessionWorld } from '../sessions/world';
import { strokePng } from '../signing/pdf/pngs';
import { type BrowserWorld, openBrowserWorld } from '../support/browser';
import { inkAndCaption, meet } from '../support/signatureBox';
import {
  download,
  drawWithFinger,
  drawWithMouse,
  expectPdfsigValid,
  screenshot,
  signingContext,
  text,
} from './signingPageSupport';

/**
 * The signing page of a contract, in Debian's Chromium against the app listening on 127.0.0.1:
 * the session link (`signingUrl`), the e-mailed invitation and a signed-in signer's contract
 * turn; each method a contract offers but the USB token (its own test); declining; the states
 * of a link that opens nothing and of a turn that has not come. After signing, the signed PDF
 * from the page passes pdfsig and the page shows the verification engine's result.
 */

jest.setTimeout(300_000);

let world: SessionWorld;
let browser: BrowserWorld;
let scratch: { dir: string; remove(): void };

beforeAll(async () => {
  world = await openSessionWorld();
  browser = await openBrowserWorld(world.h);
  scratch = tempDir('esign-signing-page-');
});
afterAll(async () => {
  await browser?.close();
  await world?.close();
  scratch?.remove();
});
afterEach(() => {
  expect(browser.takeErrors()).toEqual([]);
});

/** signingUrl names APP_URL; the page is this server's /app (the default APP_URL). */
function pageUrlOf(signingUrl: string): string {
  return `${browser.origin}/app/ky-so/phien/${signingUrl.split('/').at(-1)}`;
}

async function initiated(contractId: string, email: string, method: string) {
  const started = await dataOf<{ sessionId: string; contractHash: string; signingUrl: string }>(
    await world.initiate(contractId, email, method),
  );
  return started;
}

/** Opens `url` in a page of a fresh context; checks the headers every signing page answers. */
async function open(
  url: string,
  options: { locale?: 'vi' | 'en'; width?: number; touch?: boolean; status?: number } = {},
): Promise<Page> {
  const context = await signingContext(browser, options);
  const page = await context.newPage();
  page.on('dialog', (dialog) => void dialog.accept());
  world.tick();
  const response = await page.goto(url);
  expect(response?.status()).toBe(options.status ?? 200);
  const headers = response!.headers();
  expect(headers['cache-control']).toBe('no-store');
  expect(headers['referrer-policy']).toBe('no-referrer');
  expect(headers['content-security-policy']).toContain("script-src 'self'");
  expect(headers['content-security-policy']).not.toContain('unsafe-inline');
  return page;
}

/** The invitation links e-mailed since `before` (an index into the SMTP sink), by recipient. */
async function invitationLink(email: string, before: number): Promise<string> {
  await world.deliver();
  const mail = world.smtp.received.slice(before).find((m) => m.to.includes(email));
  const token = /https:\/\/app\.esign\.example\/ky-so\/([A-Za-z0-9_-]{43})\b/.exec(
    parseMail(mail!.raw).text ?? '',
  )?.[1];
  return `${browser.origin}/app/ky-so/${token}`;
}

/** Waits for the page to come back from signing or declining, with what it says. */
async function outcome(page: Page, done: 'signed' | 'rejected'): Promise<string> {
  await page.waitForURL(new RegExp(`\\?done=${done}$`));
  return text(page, '#signing-outcome .notice');
}

describe('the signing page of a session link', () => {
  let otpUrl: string;
  let otpContract: string;

  it('signs with the SMS code: the contract, its deadline with the zone, the PDF; a resend timer, a wrong code with its tries left; the signed PDF passes pdfsig and the verification shows', async () => {
    otpContract = await world.sentContract(
      [{ name: 'Nguyễn Văn Ánh', email: 'anh@partner.example', phone: '0912345678', order: 1 }],
      { title: 'Hợp đồng dịch vụ tư vấn' },
    );
    const session = await initiated(otpContract, 'anh@partner.example', 'otp_sms');
    otpUrl = pageUrlOf(session.signingUrl);
    const page = await open(otpUrl);

    expect(await text(page, 'h1')).toBe('Hợp đồng dịch vụ tư vấn');
    expect(await text(page, '.signing-facts')).toContain('Nguyễn Văn Ánh');
    // The deadline in the viewer's zone, with the zone named.
    expect(await text(page, '.signing-facts time')).toMatch(
      /\d{2}\/\d{2}\/\d{4} \d{2}:\d{2} GMT\+7/,
    );
    // The PDF: the page's own URL serves the contract to this page.
    const source = await page.locator('.pdf-preview').getAttribute('data-pdf-src');
    expect(source).toMatch(/^\/app\/ky-so\/phien\/[A-Za-z0-9_-]{43}\/tai-lieu$/);
    const pdf = await page.evaluate(
      `fetch(${JSON.stringify(source)}).then(async (r) => [r.status, new TextDecoder().decode((await r.arrayBuffer()).slice(0, 5))])`,
    );
    expect(pdf).toEqual([200, '%PDF-']);
    // The link's session is opened on load: its method's panel shows.
    await page.locator('#otp-send').waitFor();
    expect(await page.locator('#signature-pad').count()).toBe(0);
    await screenshot(page, 'link-otp-vi-1280');

    world.tick();
    await page.click('#otp-send');
    await page.locator('#otp-sent').waitFor();
    expect(await text(page, '#otp-sent')).toContain('09******78');
    // The resend button counts down and waits.
    const resend = page.locator('#otp-resend');
    expect(await resend.isDisabled()).toBe(true);
    expect(await resend.textContent()).toMatch(/Gửi lại mã sau \d+ giây/);
    await world.deliver();
    const otp = world.otpFor('0912345678');

    // A reload goes on with the session the page's cookie kept, the code form still there.
    await page.reload();
    await page.locator('#otp-form').waitFor();
    expect(await resend.isDisabled()).toBe(true);

    const wrong = `${otp.slice(0, 5)}${(Number(otp[5]) + 1) % 10}`;
    await page.fill('#otp-code', wrong);
    world.tick();
    await page.click('#otp-confirm');
    const refusal = page.locator('#signing-error');
    await refusal.waitFor();
    expect(await refusal.getAttribute('data-code')).toBe('OTP_INVALID');
    expect(await refusal.textContent()).toBe('Mã OTP không đúng. Bạn còn 4 lần thử.');
    await screenshot(page, 'link-otp-wrong-vi-1280');

    await page.fill('#otp-code', otp);
    world.tick();
    await page.click('#otp-confirm');
    expect(await outcome(page, 'signed')).toBe('Bạn đã ký thành công.');
    // What a parent page embedding the app reads (the embed module posts it).
    expect(
      await page.locator('#signing-outcome [data-contract-event]').getAttribute('data-contract-id'),
    ).toBe(otpContract);
    expect(
      await page
        .locator('#signing-outcome [data-contract-event]')
        .getAttribute('data-contract-event'),
    ).toBe('signed');
    expect(await text(page, '#signing-outcome')).toMatch(/CN=/);
    expect(await text(page, '#signing-verification .notice')).toBe(
      'Tất cả chữ ký trong tài liệu đều hợp lệ.',
    );
    await screenshot(page, 'link-signed-vi-1280');

    const file = await download(page, '#signed-download', scratch.dir);
    expect(path.basename(file)).toMatch(/\.pdf$/);
    expect(expectPdfsigValid(file)).toBe(1);
    // The same bytes as the API's signed download.
    const fromApi = await world.signedFile(otpContract, 'api-signed.pdf');
    expect(fs.readFileSync(file).equals(fs.readFileSync(fromApi))).toBe(true);
    await page.context().close();
  });

  it('says a used link was used, and shows nothing of the contract', async () => {
    const page = await open(otpUrl, { status: 409 });
    expect(await page.locator('#signing-over').getAttribute('data-reason')).toBe('used');
    expect(await text(page, 'h1')).toBe('Liên kết ký đã được sử dụng');
    expect(await page.locator('.pdf-preview').count()).toBe(0);
    expect(await page.content()).not.toContain('Hợp đồng dịch vụ tư vấn');
    await screenshot(page, 'link-used-vi-390');
    await page.context().close();
  });
});

describe('the signing page of an e-mailed invitation', () => {
  let contractId: string;
  let links: { first: string; second: string; viewer: string };
  let mailsBefore: number;

  beforeAll(async () => {
    mailsBefore = world.smtp.received.length;
    const before = mailsBefore;
    contractId = await world.sentContract(
      [
        { name: 'Phạm Thị Dung', email: 'dung@partner.example', phone: '0911222333', order: 1 },
        { name: 'Lê Văn Em', email: 'em@partner.example', phone: '0911222444', order: 2 },
        { name: 'Lê Quan Sát', email: 'viewer@partner.example', order: 3, role: 'viewer' },
      ],
      { title: 'Hợp đồng mua bán thiết bị' },
    );
    links = {
      first: await invitationLink('dung@partner.example', before),
      // Order 2 is invited only once order 1 has signed: its link comes from the database.
      second: '',
      viewer: await invitationLink('viewer@partner.example', before),
    };
  });

  it('shows a viewer the contract and nothing to sign', async () => {
    for (const [locale, width] of [
      ['vi', 1280],
      ['en', 390],
    ] as const) {
      const page = await open(links.viewer, { locale, width });
      expect(await page.locator('#signing-actions').count()).toBe(0);
      expect(await text(page, '#signing-outcome .notice')).toBe(
        locale === 'vi'
          ? 'Bạn được mời để xem hợp đồng này. Bạn không cần ký.'
          : 'You are invited to view this contract. You do not need to sign.',
      );
      await screenshot(page, `invitation-viewer-${locale}-${width}`);
      await page.context().close();
    }
  });

  it('offers the methods a contract allows; screenshots of the choice in both languages and widths', async () => {
    for (const locale of ['vi', 'en'] as const) {
      for (const width of [1280, 390]) {
        const page = await open(links.first, { locale, width });
        const methods = await page
          .locator('input[name="signing-method"]')
          .evaluateAll((inputs) => inputs.map((input) => input.getAttribute('value')));
        expect(methods).toEqual(['usb_token', 'cloud_hsm', 'otp_sms', 'image_signature']);
        // Nothing is started by looking: the first method that needs no agent is chosen.
        expect(await page.locator('input[value="cloud_hsm"]').isChecked()).toBe(true);
        await page.locator('#otp-send').waitFor();
        await screenshot(page, `invitation-choose-${locale}-${width}`);
        await page.context().close();
      }
    }
  });

  it('signs with a signature drawn by mouse (an upload first refused, then replaced); the picture and its caption lie apart in the PDF', async () => {
    const page = await open(links.first);
    await page.check('input[value="image_signature"]');
    await page.locator('#signature-pad').waitFor();
    // Signing with nothing drawn is refused on the page.
    await page.click('#image-confirm');
    expect(await page.locator('#signing-error').getAttribute('data-code')).toBe('IMAGE_EMPTY');
    // An upload too large is refused; a PNG is fitted in; Clear empties the pad again.
    await page.setInputFiles('#signature-upload', {
      name: 'big.png',
      mimeType: 'image/png',
      buffer: Buffer.alloc(600 * 1024, 1),
    });
    expect(await page.locator('#signing-error').getAttribute('data-code')).toBe('IMAGE_TOO_LARGE');
    await page.setInputFiles('#signature-upload', {
      name: 'chu-ky.png',
      mimeType: 'image/png',
      buffer: strokePng(),
    });
    await page.locator('#signing-status', { hasText: 'Đã tải ảnh chữ ký' }).waitFor();
    await page.click('#pad-clear');
    await drawWithMouse(page);
    await screenshot(page, 'invitation-image-drawn-vi-1280');
    world.tick();
    await page.click('#image-confirm');
    expect(await outcome(page, 'signed')).toBe('Bạn đã ký thành công.');
    await page.context().close();

    const signed = await world.signedFile(contractId, 'drawn.pdf');
    const images = execFileSync('pdfimages', ['-list', signed], { encoding: 'utf8' });
    expect(images).toMatch(/\bimage\s+\d+\s+\d+\s+rgb/);
    expect(images).toMatch(/\bsmask\s+\d+\s+\d+\s+gray/);
    // The first signer's default box: 170×60 pt at the bottom-left of the last (only) page.
    const original = path.join(scratch.dir, 'original.pdf');
    const response = await world.request(
      'GET',
      `${contractsPath}/${contractId}/download?type=original`,
      world.acme.orgKey,
    );
    fs.writeFileSync(original, Buffer.from(await response.arrayBuffer()));
    const { ink, caption } = inkAndCaption(signed, original, [36, 36, 206, 96]);
    expect(ink).not.toBeNull();
    expect(caption).not.toBeNull();
    expect(meet(ink!, caption!)).toBe(false);
  });

  it('lets the second signer, invited once the first has signed, sign with a finger on a phone; the contract completes', async () => {
    // The second signer of the drawn contract: invited now that the first has signed.
    links.second = await invitationLink('em@partner.example', mailsBefore);
    const page = await open(links.second, { touch: true });
    await page.check('input[value="image_signature"]');
    await drawWithFinger(page);
    await screenshot(page, 'invitation-touch-drawn-vi-390');
    world.tick();
    await page.click('#image-confirm');
    expect(await outcome(page, 'signed')).toBe('Bạn đã ký thành công.');
    // The contract is complete: the verification names both signers and the archive timestamp.
    expect(await text(page, '#signing-verification')).toContain('Phạm Thị Dung');
    expect(await text(page, '#signing-verification')).toContain('Lê Văn Em');
    expect(await page.locator('#signing-verification .verification-item').count()).toBe(3);
    await screenshot(page, 'invitation-completed-vi-390');
    const file = await download(page, '#signed-download', scratch.dir);
    expect(expectPdfsigValid(file)).toBe(2);
    await page.context().close();
  });
});

describe('declining, and links that open nothing', () => {
  it('declines with a reason (required): the contract is rejected and the page says so', async () => {
    const contractId = await world.sentContract([
      { name: 'Trần Thị Bình', email: 'binh@partner.example', phone: '0987654321', order: 1 },
    ]);
    const session = await initiated(contractId, 'binh@partner.example', 'otp_sms');
    const page = await open(pageUrlOf(session.signingUrl), { locale: 'en', width: 390 });
    await page.locator('#otp-send').waitFor();
    await page.click('#reject summary');
    await page.click('#reject-submit');
    // The browser's own check asks for the reason first.
    expect(await page.locator('#reject-reason:invalid').count()).toBe(1);
    await page.fill('#reject-reason', 'Sai thông tin bên B');
    await screenshot(page, 'link-reject-en-390');
    world.tick();
    await page.click('#reject-submit');
    expect(await outcome(page, 'rejected')).toBe('You declined to sign. The sender has been told.');
    expect(await page.locator('[data-contract-event="rejected"]').count()).toBe(1);
    await screenshot(page, 'link-rejected-en-390');
    const contract = await dataOf<{ status: string }>(
      await world.request('GET', `${contractsPath}/${contractId}`, world.acme.orgKey),
    );
    expect(contract.status).toBe('rejected');
    await page.context().close();
  });

  it('says a cancelled contract cannot be signed, without showing it', async () => {
    const before = world.smtp.received.length;
    const contractId = await world.sentContract([
      { name: 'Vũ Văn Khoa', email: 'khoa@partner.example', order: 1 },
    ]);
    const link = await invitationLink('khoa@partner.example', before);
    const cancelled = await world.request(
      'DELETE',
      `${contractsPath}/${contractId}`,
      world.acme.orgKey,
      { reason: 'Khách hàng đổi ý' },
    );
    expect(cancelled.status).toBe(200);
    const page = await open(link);
    expect(await text(page, '#signing-outcome .notice')).toBe(
      'Hợp đồng đã bị hủy. Bạn không thể ký.',
    );
    expect(await page.locator('.pdf-preview').count()).toBe(0);
    const file = await fetch(`${link}/tai-lieu`);
    expect(file.status).toBe(404);
    await screenshot(page, 'invitation-cancelled-vi-1280');
    await page.context().close();
  });

  it('says an unknown link is not valid and an expired one expired', async () => {
    const unknown = await open(`${browser.origin}/app/ky-so/phien/${'A'.repeat(43)}`, {
      status: 404,
    });
    expect(await unknown.locator('#signing-over').getAttribute('data-reason')).toBe('invalid');
    await unknown.context().close();

    const contractId = await world.sentContract([
      { name: 'Ngô Văn Lâm', email: 'lam@partner.example', order: 1 },
    ]);
    const session = await initiated(contractId, 'lam@partner.example', 'image_signature');
    const now = world.h.clock.now();
    world.h.clock.set(new Date(now.getTime() + 31 * 60_000));
    try {
      const context = await signingContext(browser, { locale: 'en' });
      const page = await context.newPage();
      const response = await page.goto(pageUrlOf(session.signingUrl));
      expect(response?.status()).toBe(410);
      expect(await page.locator('#signing-over').getAttribute('data-reason')).toBe('expired');
      expect(await text(page, 'h1')).toBe('This signing link has expired');
      await screenshot(page, 'link-expired-en-1280');
      await context.close();
    } finally {
      world.h.clock.set(new Date(Math.max(Date.now(), now.getTime())));
    }
  });

  it('sends a visitor of a signed-in page, or of an address that is no signing link, to sign in', async () => {
    for (const url of [
      '/app/ky-so/abc',
      '/app/ky-so/phien/not.a.token',
      '/app/ky-so/12',
      '/app/ky-so/hop-dong/5d0c6a4e-7d0b-4a57-9a55-0e8e8c3f0b11',
    ]) {
      const response = await fetch(`${browser.origin}${url}`, { redirect: 'manual' });
      expect(response.status).toBe(303);
      expect(response.headers.get('location')).toMatch(/^\/app\/dang-nhap\?next=/);
    }
  });
});

describe('a signed-in signer’s contract turn (/ky-so/hop-dong/{id})', () => {
  it('waits for the first signer by name, then signs with the cloud HSM key and its SMS code; another tenant sees "not found"', async () => {
    const admin = { name: 'Admin ACME', email: 'admin.acme@example.com', phone: '0933444555' };
    const contractId = await world.sentContract(
      [
        { name: 'Phan Văn Minh', email: 'minh@partner.example', phone: '0933000111', order: 1 },
        { ...admin, order: 2 },
      ],
      { title: 'Hợp đồng khung 2027' },
    );
    const token = await issueToken(world.h.deps, world.acme.adminUserId, 'access');
    recordIssuedSecret(token, 'access token');
    const url = `${browser.origin}/app/ky-so/hop-dong/${contractId}`;
    const context = await signingContext(browser);
    const page = await context.newPage();
    world.tick();
    await page.goto(`${url}?at=${token}`);
    expect(page.url()).toBe(url);
    expect(await text(page, '#signing-outcome .notice')).toBe(
      'Chưa đến lượt bạn ký. Đang chờ Phan Văn Minh ký trước.',
    );
    expect(await page.locator('#signing-actions').count()).toBe(0);
    await screenshot(page, 'contract-turn-waiting-vi-1280');
    for (const [locale, width] of [
      ['en', 1280],
      ['en', 390],
      ['vi', 390],
    ] as const) {
      await context.addCookies([{ name: 'esign_lang', value: locale, url: browser.origin }]);
      await page.setViewportSize({ width, height: 900 });
      await page.reload();
      await screenshot(page, `contract-turn-waiting-${locale}-${width}`);
    }
    await context.addCookies([{ name: 'esign_lang', value: 'vi', url: browser.origin }]);
    await page.setViewportSize({ width: 1280, height: 900 });

    // The first signer signs through the API; now it is the user's turn.
    const first = await initiated(contractId, 'minh@partner.example', 'image_signature');
    const step = await world.step(first.sessionId, 'confirm', {
      signatureImage: `data:image/png;base64,${strokePng().toString('base64')}`,
    });
    expect(step.status).toBe(200);
    await page.reload();
    await page.locator('input[value="cloud_hsm"]').check();
    world.tick();
    await page.click('#otp-send');
    await page.locator('#otp-sent').waitFor();
    await world.deliver();
    await page.fill('#otp-code', world.otpFor(admin.phone));
    world.tick();
    await page.click('#otp-confirm');
    expect(await outcome(page, 'signed')).toBe('Bạn đã ký thành công.');
    // The signer's own certificate (cloud HSM), checked valid by the verification engine.
    expect(await text(page, '#signing-outcome')).toContain('Admin ACME');
    expect(
      await page.locator('#signing-verification .verification-item[data-valid="true"]').count(),
    ).toBe(3);
    const file = await download(page, '#signed-download', scratch.dir);
    expect(expectPdfsigValid(file)).toBe(2);
    await context.close();

    // Another tenant's administrator: the same "not found" as an id that does not exist.
    const foreign = await issueToken(world.h.deps, world.beta.adminUserId, 'access');
    recordIssuedSecret(foreign, 'access token');
    const other = await signingContext(browser);
    const otherPage = await other.newPage();
    const response = await otherPage.goto(`${url}?at=${foreign}`);
    expect(response?.status()).toBe(404);
    expect(await text(otherPage, 'h1')).toBe('Không tìm thấy trang');
    await other.close();
  });
});
