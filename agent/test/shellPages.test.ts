/**
 * The agent's windows (approval, consent, PIN, settings) as built for Electron, in Debian
 * Chromium through playwright-core, against the core under Node with a SoftHSM token. The
 * preload API is played by a Playwright binding to the harness's bridge. Screenshots in vi and
 * en go to test/artifacts/.
 */
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import type { AgentMessage } from '@esign/shared';
import { type Browser, chromium, type Locator, type Page } from 'playwright-core';
import WebSocket from 'ws';
import { startHttpTsa } from '../../test/support/opensslTsa';
import { softHsmModule, tempDir } from '../../test/support/tools';
import type { WindowRequest } from '../src/shell/api';
import { buildShell } from '../src/shell/build';
import { AgentChild, SoftHsmLab, TestPki, type TestToken } from './support/testTokens';

jest.setTimeout(40_000);

const CHROMIUM = '/usr/bin/chromium';
const ARTIFACTS = path.resolve(__dirname, '../../test/artifacts');
const PAGE = 'https://esign.example.vn';
const token: TestToken = { label: 'VNPT-CA Pages', pin: '864200', soPin: '97531864' };

let work: { dir: string; remove(): void };
let tsa: { url: string; close(): Promise<void> };
let harness: AgentChild;
let agentPort: number;
let pagesUrl: string;
let browser: Browser;
let settingsFile: string;

/** A page of the signing service: its socket to the agent. */
class Client {
  private readonly inbox: AgentMessage[] = [];
  private readonly waiting: ((message: AgentMessage) => void)[] = [];
  private counter = 0;
  readonly closed: Promise<number>;

  private constructor(readonly socket: WebSocket) {
    socket.on('message', (data) => {
      const message = JSON.parse(data.toString()) as AgentMessage;
      const waiter = this.waiting.shift();
      if (waiter) waiter(message);
      else this.inbox.push(message);
    });
    this.closed = new Promise((resolve) => socket.on('close', (code) => resolve(code)));
  }

  static async open(origin = PAGE): Promise<Client> {
    const socket = new WebSocket(`ws://127.0.0.1:${agentPort}`, { origin });
    await new Promise((resolve, reject) => socket.once('open', resolve).once('error', reject));
    return new Client(socket);
  }

  /** Sends a request; the answer arrives later (a window may have to be answered first). */
  ask(request: Record<string, unknown>): Promise<AgentMessage> {
    const id = `c${++this.counter}`;
    this.socket.send(JSON.stringify({ id, ...request }));
    return (async () => {
      for (;;) {
        const message =
          this.inbox.shift() ??
          (await new Promise<AgentMessage>((resolve) => this.waiting.push(resolve)));
        if (message.id === id || (message.type === 'error' && message.id === null)) return message;
      }
    })();
  }
}

const opened = new Set<string>();
const pageErrors: string[] = [];

/** The next window of `kind` the agent opens, shown in Chromium as Electron would show it. */
async function nextWindow(kind: WindowRequest['kind']): Promise<Page> {
  const event = await harness.next(
    (entry) =>
      entry.event === 'window' &&
      (entry.request as WindowRequest).kind === kind &&
      !opened.has(entry.id as string),
  );
  opened.add(event.id as string);
  return showWindow(event.id as string);
}

/** Waits until the element's text satisfies `check` (the page redraws after each answer). */
async function textOf(
  locator: Locator,
  check: (text: string) => boolean,
  timeoutMs = 10_000,
): Promise<string> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const text = (await locator.textContent()) ?? '';
    if (check(text)) return text;
    if (Date.now() > deadline) throw new Error(`text stayed "${text}"`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

async function showWindow(id: string): Promise<Page> {
  const page = await browser.newPage({ viewport: { width: 560, height: 520 } });
  page.on('pageerror', (error) => pageErrors.push(`${id}: ${error.message}`));
  await page.exposeFunction('__esignBridge', async (method: string, arg: unknown) => {
    const response = await fetch(`${pagesUrl}/bridge`, {
      method: 'POST',
      body: JSON.stringify({ window: id, method, arg }),
    });
    return response.json();
  });
  // What the preload's contextBridge exposes, over the binding.
  await page.addInitScript(`Object.defineProperty(window, 'esignAgent', {
    value: Object.freeze(Object.fromEntries(
      ['request', 'answer', 'settings', 'changeSettings', 'testModule'].map((method) => [
        method,
        (arg) => window.__esignBridge(method, arg),
      ]),
    )),
  });`);
  // Electron shows and focuses each new window; so does the test.
  await page.bringToFront();
  await page.goto(`${pagesUrl}/window.html`);
  await page.waitForSelector('h1');
  return page;
}

const shot = (page: Page, name: string) =>
  page.screenshot({ path: path.join(ARTIFACTS, `agent-${name}.png`), fullPage: true });

async function setLanguage(language: 'vi' | 'en') {
  const response = await fetch(`${pagesUrl}/bridge`, {
    method: 'POST',
    body: JSON.stringify({
      window: 'settings',
      method: 'changeSettings',
      arg: { type: 'language', language },
    }),
  });
  expect(response.status).toBe(200);
}

async function signRequest(client: Client, title: string) {
  expect((await client.ask({ type: 'hello', versions: [1] })).type).toBe('hello.ok');
  const listed = await client.ask({ type: 'certificates.list' });
  if (listed.type !== 'certificates.list.result') throw new Error(JSON.stringify(listed));
  return {
    type: 'sign',
    documentDigest: crypto.randomBytes(32).toString('base64'),
    certificateId: listed.certificates[0]!.certificateId,
    documentTitle: title,
    requester: { origin: PAGE, serviceName: 'ESign' },
  };
}

beforeAll(async () => {
  fs.mkdirSync(ARTIFACTS, { recursive: true });
  work = tempDir('esign-shell-pages-');
  await buildShell(path.join(work.dir, 'dist'), { electron: false });
  tsa = await startHttpTsa();
  const pki = new TestPki(work.dir);
  const signer = pki.issue('pages', 'rsa', '/C=VN/O=Cong ty D/CN=Pham Van D', [
    'basicConstraints=CA:FALSE',
    'keyUsage=critical,digitalSignature,nonRepudiation',
  ]);
  const lab = new SoftHsmLab(path.join(work.dir, 'softhsm'));
  lab.addToken(token);
  await lab.addKeyAndCertificates(token, { file: signer.keyFile, id: '09' }, [
    { id: '09', label: 'signing', der: signer.der },
  ]);
  settingsFile = path.join(work.dir, 'settings.json');
  fs.writeFileSync(
    settingsFile,
    JSON.stringify({
      allowedOrigins: [PAGE],
      pkcs11Modules: [
        { label: 'SoftHSM2', path: softHsmModule },
        { label: 'VNPT-CA', path: path.join(work.dir, 'vnptca_p11_v8.so') },
      ],
      tsaUrl: tsa.url,
      language: 'vi',
    }),
  );
  harness = new AgentChild(
    lab.config,
    { settingsFile, rendererDir: path.join(work.dir, 'dist/renderer'), intermediateFolders: [] },
    'shellHarness.ts',
  );
  const ready = await harness.next((event) => event.event === 'ready');
  agentPort = ready.port as number;
  pagesUrl = `http://127.0.0.1:${ready.pages as number}`;
  browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox'] });
});

afterAll(async () => {
  await browser?.close();
  await harness?.stop();
  await tsa?.close();
  work?.remove();
});

describe('the approval window', () => {
  it('asks in Vietnamese with Deny focused; Tab then Enter approves (keyboard only)', async () => {
    const client = await Client.open('https://doi-tac.example');
    const hello = client.ask({ type: 'hello', versions: [1] });
    const page = await nextWindow('approveOrigin');
    await expect(page.locator('h1').textContent()).resolves.toBe(
      'Cho phép trang web dùng công cụ ký số?',
    );
    await expect(page.locator('#origin').textContent()).resolves.toBe('https://doi-tac.example');
    await expect(page.evaluate('document.activeElement?.textContent')).resolves.toBe('Từ chối');
    await shot(page, 'approve-vi');
    await page.keyboard.press('Tab');
    await page.keyboard.press('Enter');
    expect(await hello).toMatchObject({ type: 'hello.ok' });
    await page.close();
  });

  it('asks in English after the language changes; Escape denies', async () => {
    await setLanguage('en');
    const client = await Client.open('https://unknown.example');
    const hello = client.ask({ type: 'hello', versions: [1] });
    const page = await nextWindow('approveOrigin');
    await expect(page.locator('h1').textContent()).resolves.toBe(
      'Allow this website to use the signing agent?',
    );
    await shot(page, 'approve-en');
    await page.keyboard.press('Escape');
    expect(await hello).toMatchObject({ code: 'ORIGIN_NOT_ALLOWED' });
    expect(await client.closed).toBe(4003);
    await page.close();
    await setLanguage('vi');
  });
});

describe('the consent and PIN windows', () => {
  it('show origin, title, hash and certificate; Sign, then the PIN typed and Enter, signs', async () => {
    const client = await Client.open();
    const request = await signRequest(client, 'Hợp đồng thuê nhà <b>số 5</b>');
    const answer = client.ask(request);
    const consent = await nextWindow('confirmSign');
    const text = (await consent.locator('main').textContent()) ?? '';
    expect(text).toContain('Xác nhận ký tài liệu');
    expect(text).toContain(PAGE);
    // The page's title is text, never markup.
    expect(text).toContain('Hợp đồng thuê nhà <b>số 5</b>');
    await expect(consent.locator('b').count()).resolves.toBe(0);
    const hex = Buffer.from(request.documentDigest, 'base64').toString('hex');
    expect(text).toContain(hex.match(/.{8}/g)!.join(' '));
    expect(text).toContain('CN=Pham Van D');
    expect(text).toContain(token.label);
    await shot(consent, 'consent-vi');
    await consent.getByRole('button', { name: 'Ký', exact: true }).click();

    const pin = await nextWindow('askPin');
    await expect(pin.locator('h1').textContent()).resolves.toBe('Nhập mã PIN của thiết bị ký số');
    await expect(pin.evaluate('document.activeElement?.id')).resolves.toBe('pin');
    await expect(pin.locator('#pin').getAttribute('type')).resolves.toBe('password');
    await shot(pin, 'pin-vi');
    await pin.keyboard.type(token.pin);
    await pin.keyboard.press('Enter');
    expect(await answer).toMatchObject({ type: 'sign.result' });
    await Promise.all([consent.close(), pin.close()]);
  });

  it('in English: a wrong PIN is answered PIN_INCORRECT, the next PIN window warns, Escape cancels', async () => {
    await setLanguage('en');
    const client = await Client.open();
    const wrong = client.ask(await signRequest(client, 'Service contract'));
    const consent = await nextWindow('confirmSign');
    await expect(consent.locator('h1').textContent()).resolves.toBe('Confirm the signature');
    await shot(consent, 'consent-en');
    await consent.getByRole('button', { name: 'Sign' }).click();
    const pin = await nextWindow('askPin');
    await pin.locator('#pin').fill('000000');
    await pin.getByRole('button', { name: 'OK' }).click();
    expect(await wrong).toMatchObject({ code: 'PIN_INCORRECT' });

    const retry = client.ask(await signRequest(client, 'Service contract'));
    const second = await nextWindow('confirmSign');
    // Cancel has the focus: Tab to Sign, Enter.
    await second.keyboard.press('Tab');
    await second.keyboard.press('Enter');
    const warned = await nextWindow('askPin');
    await expect(warned.locator('.warning').textContent()).resolves.toContain('few tries');
    await shot(warned, 'pin-en');
    await warned.keyboard.press('Escape');
    expect(await retry).toMatchObject({ code: 'USER_CANCELLED' });
    await setLanguage('vi');
  });

  it('cancel in the consent window (Escape) asks no PIN', async () => {
    const client = await Client.open();
    const answer = client.ask(await signRequest(client, 'Hợp đồng bị hủy'));
    const consent = await nextWindow('confirmSign');
    const before = harness.events.filter((event) => event.event === 'window').length;
    await consent.keyboard.press('Escape');
    expect(await answer).toMatchObject({ code: 'USER_CANCELLED' });
    expect(harness.events.filter((event) => event.event === 'window')).toHaveLength(before);
  });
});

describe('the settings page', () => {
  it('lists modules with their state and tests one; revokes an approved origin', async () => {
    const page = await showWindow('settings');
    await expect(page.locator('h1').textContent()).resolves.toContain('Cài đặt ESign Agent');
    const softhsm = page.locator(`tr[data-path="${softHsmModule}"]`);
    await expect(softhsm.locator('.state').textContent()).resolves.toBe('Đã nạp');
    await expect(
      page.locator('tr', { hasText: 'VNPT-CA' }).locator('.state').textContent(),
    ).resolves.toBe('Chưa cài đặt');
    await softhsm.getByRole('button', { name: 'Kiểm tra' }).click();
    await textOf(softhsm.locator('.test-result'), (text) => text.includes(token.label));
    await shot(page, 'settings-vi');

    // The origin approved in the approval window is listed; revoking it closes its sockets.
    const client = await Client.open('https://doi-tac.example');
    expect((await client.ask({ type: 'hello', versions: [1] })).type).toBe('hello.ok');
    await page.reload();
    await page.getByRole('button', { name: 'Thu hồi https://doi-tac.example' }).click();
    expect(await client.closed).toBe(4003);
    await textOf(page.locator('#origins'), (text) => !text.includes('doi-tac'));
    const saved = JSON.parse(fs.readFileSync(settingsFile, 'utf8')) as { allowedOrigins: string[] };
    expect(saved.allowedOrigins).toEqual([PAGE]);
    await page.close();
  });

  it('switches to English, refuses a bad TSA URL with a reason, keeps a good one', async () => {
    const page = await showWindow('settings');
    await page.locator('#language').selectOption('en');
    await textOf(page.locator('h1'), (text) => text.includes('ESign Agent settings'));
    await textOf(
      page.locator(`tr[data-path="${softHsmModule}"] .state`),
      (text) => text === 'Loaded',
    );
    await page.locator('#tsa').fill('ftp://tsa.example');
    await page.locator('#save-tsa').click();
    await textOf(page.locator('#message'), (text) =>
      text.includes('tsaUrl must be an http(s) URL'),
    );
    await page.locator('#tsa').fill('http://tsa.example/tsr');
    await page.locator('#save-tsa').press('Enter');
    await textOf(page.locator('#message'), (text) => text === '');
    expect(JSON.parse(fs.readFileSync(settingsFile, 'utf8')).tsaUrl).toBe('http://tsa.example/tsr');
    await shot(page, 'settings-en');
    await page.locator('#language').selectOption('vi');
    await page.close();
  });

  it('loads nothing from the network: the window’s CSP blocks remote content', async () => {
    const page = await showWindow('settings');
    const blocked = await page.evaluate(
      "fetch('https://example.com/').then(() => false, () => true)",
    );
    expect(blocked).toBe(true);
    await page.close();
    expect(pageErrors).toEqual([]);
  });
});
