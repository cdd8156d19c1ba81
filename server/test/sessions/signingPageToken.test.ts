/**
 * USB-token signing from the real signing page (`/app/ky-so/phien/{token}`, server-rendered by
 * server/src/web/pages/signing.tsx, its USB-token section filled in by
 * server/web/signing-page/tokenSigning.ts), in Debian's Chromium, against the app listening on 127.0.0.1 (APP_URL its /app, so that the
 * signing tickets name the page's own origin) and the HEADLESS desktop agent (`--headless
 * --policy`) listening on the first of its loopback ports with a SoftHSM token whose test CA the
 * server trusts. The page finds the agent, lets the signer pick a certificate, prepares, has the
 * agent sign with the server's ticket, posts the answer and, reloaded, shows the completed state; pdfsig and
 * the verify endpoint check the PDF. Then what the signer sees when it cannot work: no agent, an
 * agent refusing the page's origin, a page inside a partner's frame (registered for the
 * contract's tenant), which hands its session over to a new tab and tells the partner's page.
 *
 * The agent must listen on one of 17891–17893 for the page to find it: the test takes the first
 * free one and is skipped, saying why, when none is free or another ESign Agent would be found
 * first.
 */
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { AGENT_PORTS } from '@esign/shared';
import { type Browser, type BrowserContext, chromium, type Page } from 'playwright-core';
import { agentPortForPages } from '../../../agent/test/support/agentPorts';
import type { HeadlessAgent } from '../../../agent/test/support/headlessAgent';
import { HeadlessSigner } from '../../../agent/test/support/headlessSigner';
import type { TestToken } from '../../../agent/test/support/testTokens';
import { recordIssuedSecret } from '../../../test/support/runLog';
import { tempDir } from '../../../test/support/tools';
import { issueToken } from '../../src/auth/tokens';
import { serveApp } from '../../src/serve';
import { addEmbeddingOrigin } from '../../src/tenancy/embeddingOrigins';
import { tenantByCode } from '../../src/tenancy/resolveTenant';
import { addTrustAnchor } from '../../src/trust/service';
import { assetUrl } from '../../src/web/assets';
import { contractsPath } from '../contracts/fixtures';
import { classicPdf, nssDatabase, pdfsigSignatures, pdfsigTrusting } from '../signing/pdf/corpus';
import { ensureBuilt, freePort } from '../startup/builtServer';
import { createDossier, createProcess, openTask } from '../support/dossiers';
import { addUser } from '../support/harness';
import { dataOf, openSessionWorld, type SessionWorld, signingPath } from './world';

jest.setTimeout(240_000);

const agentPort = agentPortForPages();
const describeWithPort = 'port' in agentPort ? describe : describe.skip;
if ('unavailable' in agentPort) {
  // Said once, where the run's output shows it: why the browser tests did not run.
  process.stderr.write(`signingPageToken.test.ts skipped: ${agentPort.unavailable}\n`);
}

const DOWNLOAD = 'https://downloads.esign.example/ung-dung-ky?os=any&v="1"';
const token: TestToken = { label: 'Page Token', pin: '135790', soPin: '97531864' };
const signer = { name: 'Nguyen Van Anh', email: 'anh@partner.example', order: 1 };

let work: { dir: string; remove(): void };
let world: SessionWorld;
let server: http.Server;
let origin: string;
let holder: HeadlessSigner;
let policy: string;
let agent: HeadlessAgent | undefined;
/** Set by a test: the next prepare is dated this long ago (its /M and box), as if time passed. */
let nextPrepareAgo = 0;
let browser: Browser;
/** What the pages printed as errors, a CSP refusal among them; failed probes are expected. */
const consoleErrors: string[] = [];

/** Starts the headless agent with `policyFile` and checks the page will find it. */
async function startAgent(policyFile: string): Promise<HeadlessAgent> {
  const started = holder.start(policyFile);
  const port = await started.port;
  if (!('port' in agentPort) || port !== agentPort.port) {
    await started.stop();
    throw new Error(`the agent listens on ${port}, not ${JSON.stringify(agentPort)}: taken since`);
  }
  return started;
}

async function stopAgent(): Promise<void> {
  await agent?.stop();
  agent = undefined;
}

beforeAll(async () => {
  if (!('port' in agentPort)) return;
  ensureBuilt();
  work = tempDir('esign-page-token-');
  const port = await freePort();
  origin = `http://127.0.0.1:${port}`;
  world = await openSessionWorld({
    PUBLIC_URL: origin,
    APP_URL: `${origin}/app`,
    AGENT_DOWNLOAD_URL: DOWNLOAD,
  });
  await new Promise<void>((resolve) => {
    server = serveApp(
      (request) => {
        if (nextPrepareAgo > 0 && new URL(request.url).pathname.endsWith('/prepare')) {
          world.h.clock.set(new Date(Date.now() - nextPrepareAgo));
          nextPrepareAgo = 0;
        } else {
          // The TSA and the certificates live in real time.
          world.tick();
        }
        return world.h.app.fetch(request);
      },
      { hostname: '127.0.0.1', port, logger: world.h.deps.logger },
      () => resolve(),
    );
  });

  holder = await HeadlessSigner.create(work.dir, {
    token,
    subject: `/C=VN/O=Doi tac ACME/CN=${signer.name}/emailAddress=${signer.email}`,
    port: agentPort.port,
  });
  // A second certificate on the same token, of someone else: the signer must pick.
  const other = holder.pki.issue(
    'other',
    'rsa',
    '/C=VN/O=Cong ty Khac/CN=Tran Thi Khac/emailAddress=khac@other.example',
    ['basicConstraints=CA:FALSE', 'keyUsage=critical,digitalSignature,nonRepudiation'],
  );
  await holder.lab.addKeyAndCertificates(token, { file: other.keyFile, id: '02' }, [
    { id: '02', label: 'other', der: other.der },
  ]);
  await addTrustAnchor(world.h.deps.db, world.h.now(), {
    tenantId: null,
    certificateFile: holder.pki.rootDer,
  });
  policy = holder.policy('policy.json', { origins: [origin], ticketServers: [origin] });
  agent = await startAgent(policy);
  browser = await chromium.launch({ executablePath: '/usr/bin/chromium' });
});

afterAll(async () => {
  await browser?.close();
  await stopAgent();
  await new Promise((resolve) => (server ? server.close(resolve) : resolve(undefined)));
  await world?.close();
  work?.remove();
});

afterEach(() => {
  expect(consoleErrors.splice(0)).toEqual([]);
});

/** Records what the page prints as errors, but a refused connection (the probe of a free port). */
function watch(page: Page): Page {
  page.on('console', (message) => {
    const text = message.text();
    const expected =
      text.startsWith('Failed to load resource') || /WebSocket connection to .* failed/.test(text);
    if (message.type() === 'error' && !expected) consoleErrors.push(text);
  });
  page.on('pageerror', (error) => consoleErrors.push(error.message));
  return page;
}

/** A usb_token session for the signer of a new contract; its page on this server. */
async function usbSession(title: string): Promise<{ contractId: string; url: string }> {
  const contractId = await world.sentContract([signer], { title });
  const session = await dataOf<{ signingUrl: string }>(
    await world.initiate(contractId, signer.email, 'usb_token'),
  );
  const url = `${origin}/app/ky-so/phien/${session.signingUrl.split('/').at(-1)}`;
  expect(session.signingUrl).toBe(url);
  return { contractId, url };
}

async function open(url: string, context?: BrowserContext): Promise<Page> {
  const page = watch(await (context ?? browser).newPage());
  const response = await page.goto(url);
  expect(response?.status()).toBe(200);
  return page;
}

/** Waits for the USB section to reach `state` (data-state), within the generous bound given. */
async function stateOf(page: Page, state: string): Promise<void> {
  await page.locator(`#usb-token[data-state="${state}"]`).waitFor({ timeout: 60_000 });
}

/** The completed state, or a failure naming what the page said and what the agent logged. */
async function signedOn(page: Page): Promise<void> {
  const failed = page.locator('#usb-token[data-state="failed"]');
  await page
    .locator('#signing-outcome [data-contract-event="signed"], #usb-token[data-state="failed"]')
    .waitFor({ timeout: 90_000 });
  if (await failed.isVisible()) {
    const problem = page.locator('#usb-token [data-part="problem"]');
    throw new Error(
      `${await problem.getAttribute('data-code')}: ${await problem.textContent()}\n${agent?.log.join('\n')}`,
    );
  }
}

/** A picture of the page as the signer sees it, under test/artifacts/ (not committed). */
async function picture(page: Page, name: string): Promise<void> {
  const dir = path.resolve(__dirname, '../../../test/artifacts');
  fs.mkdirSync(dir, { recursive: true });
  await page.screenshot({ path: path.join(dir, `signing-page-token-${name}.png`), fullPage: true });
}

function certificateLabel(page: Page, name: string) {
  return page.locator('#usb-token label.certificate', { hasText: name });
}

describeWithPort('USB-token signing on the signing page', () => {
  it('answers a CSP whose connect-src is the page’s origin and exactly the agent’s loopback ports', async () => {
    const { url } = await usbSession('Hợp đồng CSP');
    const response = await fetch(url);
    expect(response.status).toBe(200);
    const policy = response.headers.get('content-security-policy') ?? '';
    const directives = new Map(
      policy.split(';').map((directive) => {
        const [name = '', ...sources] = directive.trim().split(/\s+/);
        return [name, sources];
      }),
    );
    expect(directives.get('connect-src')).toEqual([
      "'self'",
      'http://127.0.0.1:17891',
      'http://127.0.0.1:17892',
      'http://127.0.0.1:17893',
      'ws://127.0.0.1:17891',
      'ws://127.0.0.1:17892',
      'ws://127.0.0.1:17893',
    ]);
    expect(AGENT_PORTS).toEqual([17891, 17892, 17893]);
    // Nothing else opens up: the agent's ports appear in connect-src only.
    for (const [name, sources] of directives) {
      if (name !== 'connect-src') expect(sources.join(' ')).not.toContain('127.0.0.1');
    }
    expect(directives.get('default-src')).toEqual(["'none'"]);
    expect(directives.get('script-src')).toEqual(["'self'"]);
    // The installer link and the service's name, escaped onto the USB-token section.
    const html = await response.text();
    expect(html).toContain(
      'data-agent-download="https://downloads.esign.example/ung-dung-ky?os=any&amp;v=&quot;1&quot;"',
    );
    expect(html).toContain('data-service-name="ESign"');
    // A page offering no USB token keeps to its own origin.
    const contractId = await world.sentContract([signer], { title: 'Hợp đồng OTP' });
    const otp = await dataOf<{ signingUrl: string }>(
      await world.initiate(contractId, signer.email, 'otp_sms'),
    );
    const otpPage = await fetch(otp.signingUrl);
    expect(otpPage.status).toBe(200);
    expect(otpPage.headers.get('content-security-policy')).toContain("connect-src 'self';");
    expect(otpPage.headers.get('content-security-policy')).not.toContain('127.0.0.1');
    // Other pages keep to their own origin.
    const docs = await fetch(`${origin}/api/docs`);
    expect(docs.headers.get('content-security-policy')).toContain("default-src 'self'");
    expect(docs.headers.get('content-security-policy')).not.toContain('127.0.0.1');
    // The script the page loads stays small: the protocol's types, not its zod schemas.
    expect(html).toContain(assetUrl('signing.js'));
    const script = await fetch(`${origin}${assetUrl('signing.js')}`);
    expect(script.status).toBe(200);
    expect((await script.arrayBuffer()).byteLength).toBeLessThan(100 * 1024);
  });

  it('finds the agent, lets the signer pick a certificate, signs with the ticket and shows the result; pdfsig and verify agree', async () => {
    const { contractId, url } = await usbSession('Hợp đồng mua bán USB');
    const page = await open(url);
    await stateOf(page, 'choosing');
    // Both certificates of the token, with holder, issuer, validity and token.
    const mine = certificateLabel(page, signer.name);
    const theirs = certificateLabel(page, 'Tran Thi Khac');
    expect(await page.locator('#usb-token label.certificate').count()).toBe(2);
    expect(await page.locator('#usb-token legend').textContent()).toContain(
      'Chọn chứng thư số để ký',
    );
    const details = (await mine.textContent()) ?? '';
    expect(details).toContain(`CN=${signer.name}`);
    expect(details).toContain('Cấp bởi: Test Intermediate');
    expect(details).toMatch(/Hiệu lực: từ \d{1,2}\/\d{1,2}\/\d{4} đến \d{1,2}\/\d{1,2}\/\d{4}/);
    expect(details).toContain(`Trên token: ${token.label}`);
    await picture(page, 'choosing');

    // Someone else's certificate: the server refuses it at prepare, before any PIN.
    await theirs.locator('input').check();
    await page.locator('#usb-token [data-part="sign"]').click();
    await stateOf(page, 'failed');
    const problem = page.locator('#usb-token [data-part="problem"]');
    expect(await problem.getAttribute('data-code')).toBe('SIGNER_IDENTITY_MISMATCH');
    expect(await problem.textContent()).toContain(
      'Chứng thư số đã chọn không mang tên người ký của hợp đồng này',
    );
    await picture(page, 'identity-mismatch');

    // The signer's own.
    await mine.locator('input').check();
    await page.locator('#usb-token [data-part="sign"]').click();
    await signedOn(page);
    // The page came back with the completed state: the notice, the certificate, the signed
    // file and the verification engine's result.
    expect(page.url()).toBe(`${url}?done=signed`);
    expect(await page.locator('#signing-outcome .notice').textContent()).toContain(
      'Bạn đã ký thành công',
    );
    expect(await page.locator('#signing-outcome').textContent()).toContain(`CN=${signer.name}`);
    expect(await page.locator('#signed-download').isVisible()).toBe(true);
    expect(await page.locator('#signing-verification .notice').textContent()).toContain(
      'Tất cả chữ ký trong tài liệu đều hợp lệ',
    );
    expect(await page.locator('#usb-token').count()).toBe(0);
    await picture(page, 'signed');
    // The agent was asked by this page's origin, for this contract's title.
    expect(agent!.log.join('\n')).toMatch(
      new RegExp(
        `consented: ${origin} "Hợp đồng mua bán USB" sha256 [0-9a-f]{64} with .*${signer.name}`,
      ),
    );
    await page.close();

    const contract = await dataOf<{ status: string }>(
      await world.request('GET', `${contractsPath}/${contractId}`, world.acme.orgKey),
    );
    expect(contract.status).toBe('completed');
    // pdfsig, trusting only the test CA's root: the token's signature valid and trusted.
    const file = await world.signedFile(contractId, 'page-token.pdf');
    const nss = nssDatabase(path.join(work.dir, 'nss'), [path.join(holder.pki.dir, 'root.pem')]);
    const verdicts = pdfsigSignatures(await pdfsigTrusting(file, nss));
    expect(verdicts[0]).toMatchObject({ valid: true, trusted: true });
    expect(verdicts[0]!.text).toContain(signer.name);
    // Our verification engine agrees, and names the signer.
    const verified = await dataOf<{
      isValid: boolean;
      signatures: { signerEmail: string | null; isValid: boolean; timestampVerified: boolean }[];
    }>(await world.request('GET', `${signingPath}/verify/${contractId}`, world.acme.orgKey));
    expect(verified.isValid).toBe(true);
    expect(verified.signatures[0]).toMatchObject({
      signerEmail: signer.email,
      isValid: true,
      timestampVerified: true,
    });
  });

  it('inside a registered partner frame says USB-token signing does not work there and goes on in a new tab, which signs; the partner hears of it', async () => {
    const { contractId, url } = await usbSession('Hợp đồng trong khung');
    // A partner's page on another origin framing the signing page, the origin registered for
    // the contract's tenant (`admin domain add`), keeping the messages it receives.
    const partner = http.createServer((_request, response) =>
      response.writeHead(200, { 'Content-Type': 'text/html; charset=utf-8' }).end(
        `<!doctype html><title>Partner</title><iframe src="${url}" title="e-sign" width="1000" height="700"></iframe>
<script>
  window.received = [];
  window.addEventListener('message', (event) => {
    window.received.push({ origin: event.origin, data: event.data });
  });
</script>`,
      ),
    );
    await new Promise<void>((resolve) => partner.listen(0, '127.0.0.1', resolve));
    const partnerOrigin = `http://127.0.0.1:${(partner.address() as AddressInfo).port}`;
    await addEmbeddingOrigin(
      world.h.deps.db,
      await tenantByCode(world.h.deps.db, world.acme.code),
      world.h.now(),
      partnerOrigin,
    );
    const answer = await fetch(url);
    expect(answer.headers.get('content-security-policy')).toContain(
      `frame-ancestors ${partnerOrigin}`,
    );
    const context = await browser.newContext();
    try {
      const parent = watch(await context.newPage());
      await parent.goto(`${partnerOrigin}/`);
      const frame = parent.frameLocator('iframe');
      await frame.locator('#usb-token[data-state="framed"]').waitFor({ timeout: 60_000 });
      expect(await frame.locator('#usb-token [data-part="status"]').textContent()).toContain(
        'Không thể ký bằng USB token khi trang ký nằm trong khung',
      );
      await picture(parent, 'framed');
      // It did not look for the agent from the frame.
      expect(await frame.locator('#usb-token label.certificate').count()).toBe(0);

      const opened = context.waitForEvent('page');
      await frame.locator('#usb-token [data-part="new-tab"]').click();
      const tab = watch(await opened);
      expect(tab.url()).toBe(url);
      // The link worked once, in the frame: the tab goes on with the session it was handed.
      await stateOf(tab, 'choosing');
      await certificateLabel(tab, signer.name).locator('input').check();
      await tab.locator('#usb-token [data-part="sign"]').click();
      await signedOn(tab);
      expect(await tab.locator('#signing-outcome .notice').textContent()).toContain(
        'Bạn đã ký thành công',
      );
      // And the frame shows it too, and tells the partner's page, at its registered origin.
      await frame
        .locator('#signing-outcome [data-contract-event="signed"]')
        .waitFor({ timeout: 30_000 });
      await parent.waitForFunction('window.received.length > 0', undefined, { timeout: 10_000 });
      const received = (await parent.evaluate('window.received')) as {
        origin: string;
        data: Record<string, unknown>;
      }[];
      expect(received).toEqual([
        {
          origin,
          data: {
            source: 'esign',
            version: 1,
            type: 'contract.signed',
            contractId: await frame
              .locator('[data-contract-event]')
              .getAttribute('data-contract-id'),
            at: expect.any(String),
          },
        },
      ]);
    } finally {
      await context.close();
      await new Promise((resolve) => partner.close(resolve));
    }
    const contract = await dataOf<{ status: string }>(
      await world.request('GET', `${contractsPath}/${contractId}`, world.acme.orgKey),
    );
    expect(contract.status).toBe('completed');
  });
  it('signs a dossier task from /app/ky-so/{taskId} for a signed-in user picking USB token', async () => {
    const user = await addUser(world.h, {
      tenantId: world.acme.tenantId,
      organizationId: world.acme.rootOrganizationId,
      code: 'ANH',
      username: 'anh.nguyen',
      email: signer.email,
      name: signer.name,
      status: 2,
      type: 'internal',
    });
    const process = await createProcess(world.h, {
      tenantId: world.acme.tenantId,
      organizationId: world.acme.rootOrganizationId,
      code: 'QT-USB',
      steps: [
        {
          stepCode: 'KY',
          name: 'Ký số bằng USB token',
          kind: 'internal',
          signType: 'digital_signature',
          defaultUserId: user.id,
        },
      ],
    });
    const dossier = await createDossier(world.h, process, {
      title: 'Hồ sơ ký bằng USB token',
      files: [{ title: 'Hợp đồng', content: await classicPdf(2) }],
    });
    const task = (await openTask(world.h, dossier.id))!;
    const url = `${origin}/app/ky-so/${task.id}`;
    const token = await issueToken(world.h.deps, user.id, 'access');
    recordIssuedSecret(token, 'access token');
    const context = await browser.newContext();
    try {
      const page = watch(await context.newPage());
      await page.goto(`${url}?at=${token}`);
      expect(page.url()).toBe(url);
      // The step's methods: the USB token and the cloud HSM; the signer picks the token.
      await page.locator('input[name="signing-method"][value="usb_token"]').check();
      await stateOf(page, 'choosing');
      await certificateLabel(page, signer.name).locator('input').check();
      await page.locator('#usb-token [data-part="sign"]').click();
      await page
        .locator('#signing-outcome [data-task-event="signed"], #usb-token[data-state="failed"]')
        .waitFor({ timeout: 90_000 });
      const problem = page.locator('#usb-token [data-part="problem"]');
      if (await problem.isVisible()) {
        throw new Error(
          `${await problem.getAttribute('data-code')}: ${await problem.textContent()}`,
        );
      }
      const event = page.locator('#signing-outcome [data-task-event="signed"]');
      expect(await event.getAttribute('data-task-id')).toBe(String(task.id));
      expect(await event.getAttribute('data-dossier-id')).toBe(String(dossier.id));
      expect(await page.locator('#signing-outcome').textContent()).toContain(`CN=${signer.name}`);
      await picture(page, 'task-signed');
    } finally {
      await context.close();
    }
    const row = await world.h.deps.db
      .selectFrom('dossiers')
      .select('status')
      .where('id', '=', dossier.id)
      .executeTakeFirstOrThrow();
    expect(row.status).toBe('COMPLETED');
  });

  it('says a preparation older than 5 minutes is stale, and signs once the signer signs again', async () => {
    const { contractId, url } = await usbSession('Hợp đồng chuẩn bị lâu');
    const page = await open(url);
    await stateOf(page, 'choosing');
    await certificateLabel(page, signer.name).locator('input').check();
    // The revision is dated 6 minutes before the timestamp the agent then gets.
    nextPrepareAgo = 6 * 60_000;
    await page.locator('#usb-token [data-part="sign"]').click();
    await stateOf(page, 'failed');
    const problem = page.locator('#usb-token [data-part="problem"]');
    expect(await problem.getAttribute('data-code')).toBe('PREPARATION_STALE');
    expect(await problem.textContent()).toContain('Đã quá 5 phút kể từ lúc tài liệu được chuẩn bị');
    // Signing again prepares again, now.
    await page.locator('#usb-token [data-part="sign"]').click();
    await signedOn(page);
    await page.close();
    const contract = await dataOf<{ status: string }>(
      await world.request('GET', `${contractsPath}/${contractId}`, world.acme.orgKey),
    );
    expect(contract.status).toBe('completed');
  });

  it('says the PIN was wrong and that few tries are left, as the token reports', async () => {
    // The policy reads its PIN file at each use. After a wrong PIN SoftHSM reports "few tries
    // left", and the headless agent then gives it no PIN: this test comes after the signatures.
    const pinFile = path.join(path.dirname(holder.settingsFile), 'pin');
    fs.writeFileSync(pinFile, '000000\n', { mode: 0o600 });
    const { url } = await usbSession('Hợp đồng sai PIN');
    const page = await open(url);
    await stateOf(page, 'choosing');
    await certificateLabel(page, signer.name).locator('input').check();
    await page.locator('#usb-token [data-part="sign"]').click();
    await stateOf(page, 'failed');
    const problem = page.locator('#usb-token [data-part="problem"]');
    expect(await problem.getAttribute('data-code')).toBe('PIN_INCORRECT');
    expect(await problem.textContent()).toContain(
      'Mã PIN không đúng. USB token chỉ còn ít lần thử',
    );
    // The signer may sign again from where they are.
    expect(await page.locator('#usb-token [data-part="sign"]').isVisible()).toBe(true);
    await page.close();
  });

  it('says in plain words when the agent refuses the server’s ticket', async () => {
    // An agent that does not know this signing server: it accepts no ticket of its.
    await stopAgent();
    agent = await startAgent(
      holder.policy('no-server.json', { origins: [origin], ticketServers: [] }),
    );
    const { url } = await usbSession('Hợp đồng vé không hợp lệ');
    const page = await open(url);
    await stateOf(page, 'choosing');
    await certificateLabel(page, signer.name).locator('input').check();
    await page.locator('#usb-token [data-part="sign"]').click();
    await stateOf(page, 'failed');
    const problem = page.locator('#usb-token [data-part="problem"]');
    expect(await problem.getAttribute('data-code')).toBe('TICKET_INVALID');
    expect(await problem.textContent()).toContain('Ứng dụng ký không chấp nhận yêu cầu ký này');
    await page.close();
  });

  it('says in plain words when the agent refuses the page’s origin', async () => {
    await stopAgent();
    agent = await startAgent(
      holder.policy('foreign.json', {
        origins: ['https://other.example'],
        ticketServers: [origin],
      }),
    );
    const { url } = await usbSession('Hợp đồng bị từ chối');
    const page = await open(url);
    await stateOf(page, 'failed');
    const problem = page.locator('#usb-token [data-part="problem"]');
    expect(await problem.getAttribute('data-code')).toBe('ORIGIN_NOT_ALLOWED');
    expect(await problem.textContent()).toContain(
      `Ứng dụng ký chưa cho phép trang ${origin} sử dụng`,
    );
    // In the page's language only.
    expect(await problem.textContent()).not.toContain('The signing agent');
    expect(await page.locator('#usb-token [data-part="retry"]').isVisible()).toBe(true);
    expect(await page.locator('#usb-token [data-part="install"]').isVisible()).toBe(false);
    await picture(page, 'origin-refused');
    await page.close();
  });

  it('with no agent running says how to install it, and finds the agent once it runs', async () => {
    await stopAgent();
    const { url } = await usbSession('Hợp đồng chưa cài ứng dụng');
    const page = await open(url);
    await stateOf(page, 'failed');
    const problem = page.locator('#usb-token [data-part="problem"]');
    expect(await problem.getAttribute('data-code')).toBe('AGENT_NOT_FOUND');
    expect(await problem.textContent()).toContain('Không tìm thấy ứng dụng ký trên máy tính này');
    const link = page.locator('#usb-token [data-part="install"] a');
    expect(await link.isVisible()).toBe(true);
    expect(await link.getAttribute('href')).toBe(DOWNLOAD);
    expect(await link.getAttribute('target')).toBe('_blank');
    expect(await link.textContent()).toContain('Tải và cài đặt ứng dụng ký');
    await picture(page, 'no-agent');

    agent = await startAgent(policy);
    await page.locator('#usb-token [data-part="retry"]').click();
    await stateOf(page, 'choosing');
    expect(await link.isVisible()).toBe(false);
    await page.close();
  });
});
