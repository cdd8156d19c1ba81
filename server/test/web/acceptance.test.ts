/**
 * Issue 16's acceptance, walked as one story in Debian's Chromium against the app listening on
 * 127.0.0.1, through the real pages only (the setup — tenant, users, process, dossier, contracts
 * sent by the partner — is made directly or through the API, as an integrator's system would):
 *
 * 1. ACME's officer signs in with the password form, lists the dossiers, filters them by state,
 *    searches "nguyen van anh" (diacritics folded), opens the dossier and approves step 1
 *    (app_submit) from the task list.
 * 2. The second user arrives with `?at=<access token>` (the token leaves the address and the
 *    history), opens the task from the list and signs with a drawn picture on `/ky-so/{taskId}`.
 * 3. The third user, whose certificate is on a SoftHSM token served by the headless desktop
 *    agent (its test root a trust anchor of the server), signs with the USB token from
 *    `/ky-so/{taskId}`. When none of the agent's ports 17891–17893 is free this part is skipped
 *    (said on stderr) and the step is signed with the cloud HSM key on the same page instead.
 * 4. The dossier page shows it completed; the signed PDF downloaded from it passes pdfsig
 *    (trusting the test roots through an NSS database); the webhook receiver got
 *    `document.completed`, signed with the subscription's secret.
 * 5. A contract is signed with the SMS code read from the development SMS outbox, from its
 *    e-mailed invitation; another is declined with a reason from its signingUrl.
 * 6. A user of another tenant gets the same "not found" for the dossier, the task and the
 *    contract pages as for ids that do not exist.
 * 7. `/xac-thuc` agrees with pdfsig on the completed PDF (valid) and on a tampered copy.
 *
 * Every token, cookie and code the test receives is noted (recordIssuedSecret); the run fails if
 * one appears in a log. No timing is asserted; waits are generous for a loaded machine.
 */
import fs from 'node:fs';
import type http from 'node:http';
import path from 'node:path';
import { type Browser, type BrowserContext, chromium, type Page } from 'playwright-core';
import { agentPortForPages } from '../../../agent/test/support/agentPorts';
import type { HeadlessAgent } from '../../../agent/test/support/headlessAgent';
import { HeadlessSigner } from '../../../agent/test/support/headlessSigner';
import { recordIssuedSecret } from '../../../test/support/runLog';
import { tempDir } from '../../../test/support/tools';
import {
  type ReceivedWebhook,
  signatureMatches,
  startWebhookReceiver,
  type WebhookReceiver,
} from '../../../test/support/webhookReceiver';
import { issueToken } from '../../src/auth/tokens';
import { developmentCa } from '../../src/dev/developmentCa';
import { hashPassword } from '../../src/platform/passwords';
import { serveApp } from '../../src/serve';
import { createRole } from '../../src/tenancy/service';
import { addTrustAnchor } from '../../src/trust/service';
import { startWebhookWorker, type WebhookWorker } from '../../src/webhooks/worker';
import { contractPdf, contractsPath } from '../contracts/fixtures';
import { parseMail } from '../notify/support';
import { dataOf, openSessionWorld, type SessionWorld } from '../sessions/world';
import { nssDatabase, pdfsig, pdfsigSignatures, pdfsigTrusting } from '../signing/pdf/corpus';
import { ensureBuilt, freePort } from '../startup/builtServer';
import {
  createDossier,
  createProcess,
  dossierRow,
  type FixtureDossier,
  openTask,
} from '../support/dossiers';
import { addUser } from '../support/harness';
import { subscribe } from '../webhooks/fixtures';
import { download, drawWithMouse, text } from './signingPageSupport';

jest.setTimeout(300_000);

const agentPort = agentPortForPages();
if ('unavailable' in agentPort) {
  process.stderr.write(
    `acceptance.test.ts: USB-token signing skipped (the digital step is signed with the cloud HSM key instead): ${agentPort.unavailable}\n`,
  );
}

const password = 'Mat-khau-2026!';
const people = {
  officer: { username: 'can.bo', name: 'Phạm Thị Hoa', email: 'hoa@acme.example' },
  second: { username: 'truong.phong', name: 'Trần Minh Đức', email: 'duc@acme.example' },
  third: { username: 'giam.doc', name: 'Lê Văn Cường', email: 'cuong@acme.example' },
  foreign: { username: 'nguoi.beta', name: 'Hoàng Văn Khách', email: 'khach@beta.example' },
};
const thirdPhone = '0903111222';
const token = { label: 'Cuong Token', pin: '246810', soPin: '13579246' };
const dossierTitle = 'Hợp đồng tín dụng Nguyễn Văn Ánh';

let work: { dir: string; remove(): void };
let world: SessionWorld;
let server: http.Server;
let origin: string;
let browser: Browser;
let receiver: WebhookReceiver;
let webhooks: WebhookWorker;
let webhookSecret: string;
let holder: HeadlessSigner | undefined;
let agent: HeadlessAgent | undefined;
const ids = { officer: 0, second: 0, third: 0, foreign: 0 };
let dossier: FixtureDossier;
/** What the pages printed as errors; a refused probe of a free agent port is expected. */
const consoleErrors: string[] = [];

/** A context of its own (cookies), Vietnamese, in the Vietnam zone; its pages watched. */
async function newContext(): Promise<BrowserContext> {
  const context = await browser.newContext({
    viewport: { width: 1280, height: 900 },
    locale: 'vi-VN',
    timezoneId: 'Asia/Ho_Chi_Minh',
  });
  context.on('page', (page) => {
    page.on('console', (message) => {
      const said = message.text();
      const expected =
        said.startsWith('Failed to load resource') ||
        /WebSocket connection to .* failed/.test(said);
      if (message.type() === 'error' && !expected) consoleErrors.push(said);
    });
    page.on('pageerror', (error) => consoleErrors.push(error.message));
    page.on('dialog', (dialog) => void dialog.accept());
  });
  return context;
}

/** Signs in through the real sign-in form; the page ends on the dashboard. Notes the cookie. */
async function signIn(context: BrowserContext, username: string): Promise<Page> {
  const page = await context.newPage();
  await page.goto(`${origin}/app/dang-nhap`);
  await page.fill('#username', username);
  await page.fill('#password', password);
  await Promise.all([page.waitForURL(/\/app\/dashboard/), page.click('button[type=submit]')]);
  for (const cookie of await context.cookies()) {
    if (cookie.name.endsWith('esign_session')) recordIssuedSecret(cookie.value, 'web session');
  }
  return page;
}

/** The text of the page's main content, white space folded. */
async function mainText(page: Page): Promise<string> {
  return ((await page.locator('main').textContent()) ?? '').replace(/\s+/g, ' ').trim();
}

/** The NSS database pdfsig trusts, made once. */
let nss: string | undefined;

/** pdfsig, trusting the token's test root and the development CA (the service's seal). */
async function pdfsigTrusted(file: string) {
  if (!nss) {
    const roots = [path.join(work.dir, 'dev-ca.pem')];
    if (holder) roots.push(path.join(holder.pki.dir, 'root.pem'));
    nss = nssDatabase(path.join(work.dir, 'nss'), roots);
  }
  return pdfsigSignatures(await pdfsigTrusting(file, nss)).map((verdict) => ({
    ...verdict,
    documentTimestamp: /Signature Field Name: DocumentTimestamp/.test(verdict.text),
  }));
}

/** What `/xac-thuc` says of `file`: its badge and verdict. */
async function verifyOnPage(context: BrowserContext, file: string) {
  const page = await context.newPage();
  await page.goto(`${origin}/app/xac-thuc`);
  await page.setInputFiles('#verify-file', file);
  await Promise.all([
    page.waitForSelector('.verify-result', { timeout: 60_000 }),
    page.click('.verify-upload button[type=submit]'),
  ]);
  const answer = {
    badge: await text(page, '.verify-result .badge'),
    verdict: await text(page, '.verify-result .notice'),
  };
  await page.close();
  return answer;
}

function taskRow(page: Page, title: string) {
  return page.locator('table.task-table tbody tr', { hasText: title });
}

beforeAll(async () => {
  ensureBuilt();
  work = tempDir('esign-acceptance-');
  const port = await freePort();
  origin = `http://127.0.0.1:${port}`;
  world = await openSessionWorld({
    PUBLIC_URL: origin,
    APP_URL: `${origin}/app`,
    OUTBOUND_ALLOWLIST: '127.0.0.1',
  });
  const { h } = world;
  await new Promise<void>((resolve) => {
    server = serveApp(
      (request) => {
        // The TSA and the certificates live in real time.
        world.tick();
        return h.app.fetch(request);
      },
      { hostname: '127.0.0.1', port, logger: h.deps.logger },
      () => resolve(),
    );
  });

  // The people: an officer and two signers of ACME with a role that lists their tasks, and
  // someone of BETA. Every one signs in with a password.
  const acmeTenant = await h.deps.db
    .selectFrom('tenants')
    .selectAll()
    .where('id', '=', world.acme.tenantId)
    .executeTakeFirstOrThrow();
  const staff = await createRole(h.deps.db, acmeTenant, h.now(), {
    organizationCode: 'ACME',
    name: 'Cán bộ nghiệp vụ',
    code: 'NGHIEP_VU',
    permissions: ['document:view', 'task:view'],
  });
  const passwordHash = await hashPassword(password);
  for (const key of ['officer', 'second', 'third'] as const) {
    const person = people[key];
    const user = await addUser(
      h,
      {
        tenantId: world.acme.tenantId,
        organizationId: world.acme.rootOrganizationId,
        code: person.username.toUpperCase(),
        username: person.username,
        email: person.email,
        name: person.name,
        phone: key === 'third' ? thirdPhone : null,
        status: 2,
        type: 'internal',
        passwordHash,
      },
      [{ organizationId: world.acme.rootOrganizationId, roleId: staff.id }],
    );
    ids[key] = user.id;
  }
  const foreign = await addUser(
    h,
    {
      tenantId: world.beta.tenantId,
      organizationId: world.beta.rootOrganizationId,
      code: 'KHACH',
      username: people.foreign.username,
      email: people.foreign.email,
      name: people.foreign.name,
      status: 2,
      type: 'internal',
      passwordHash,
    },
    [{ organizationId: world.beta.rootOrganizationId, roleId: world.beta.adminRoleId }],
  );
  ids.foreign = foreign.id;

  // The process: the officer approves, the second signs with a picture, the third digitally.
  const process = await createProcess(h, {
    tenantId: world.acme.tenantId,
    organizationId: world.acme.rootOrganizationId,
    code: 'TIN_DUNG',
    name: 'Hồ sơ tín dụng',
    steps: [
      {
        stepCode: 'DUYET',
        name: 'Cán bộ duyệt hồ sơ',
        kind: 'internal',
        signType: 'app_submit',
        defaultUserId: ids.officer,
      },
      {
        stepCode: 'KY_NHAY',
        name: 'Trưởng phòng ký nháy',
        kind: 'internal',
        signType: 'image_signature',
        defaultUserId: ids.second,
      },
      {
        stepCode: 'KY_SO',
        name: 'Giám đốc ký số',
        kind: 'internal',
        signType: 'digital_signature',
        defaultUserId: ids.third,
      },
    ],
  });
  dossier = await createDossier(h, process, {
    documentId: 'TD-2026-0001',
    title: dossierTitle,
    files: [{ title: 'Hợp đồng tín dụng', content: await contractPdf('TD-2026-0001') }],
  });
  // Two others: one not started (another state), one started whose name only looks alike.
  await createDossier(h, process, {
    documentId: 'TD-2026-0002',
    title: 'Hợp đồng thuê văn phòng',
    start: false,
  });
  await createDossier(h, process, {
    documentId: 'TD-2026-0003',
    title: 'Hợp đồng tín dụng Nguyễn Văn Bình',
  });

  // The webhook receiver, subscribed to ACME's document events.
  receiver = await startWebhookReceiver();
  const subscription = await subscribe(h, 'ACME', receiver.url('/hooks'));
  webhookSecret = subscription.secret;
  recordIssuedSecret(webhookSecret, 'webhook secret');
  webhooks = startWebhookWorker(h.deps, { poll: false, timeoutMs: 10_000 });

  // The development CA's root, for pdfsig (the service's seal on the picture signature).
  fs.writeFileSync(path.join(work.dir, 'dev-ca.pem'), (await developmentCa(h.deps)).certificatePem);
  if ('port' in agentPort) {
    holder = await HeadlessSigner.create(work.dir, {
      token,
      subject: `/C=VN/O=Ngan hang ACME/CN=Le Van Cuong/emailAddress=${people.third.email}`,
      port: agentPort.port,
    });
    await addTrustAnchor(h.deps.db, h.now(), {
      tenantId: null,
      certificateFile: holder.pki.rootDer,
    });
  }
  browser = await chromium.launch({ executablePath: '/usr/bin/chromium' });
});

afterAll(async () => {
  await browser?.close();
  await agent?.stop();
  await webhooks?.stop();
  await receiver?.close();
  await new Promise((resolve) => (server ? server.close(resolve) : resolve(undefined)));
  await world?.close();
  work?.remove();
});

afterEach(() => {
  expect(consoleErrors.splice(0)).toEqual([]);
});

describe('issue 16 acceptance, as one story', () => {
  let firstTaskId = 0;
  let secondTaskId = 0;
  let thirdTaskId = 0;
  let signedPdf = '';

  it('the officer signs in with a password, filters, searches without accents, opens the dossier and approves step 1 from the task list', async () => {
    const context = await newContext();
    try {
      const page = await signIn(context, people.officer.username);
      await page.goto(`${origin}/app/ho-so`);
      expect(await page.locator('table.dossier-table tbody tr').count()).toBe(3);

      // By state: the dossier not started drops out.
      const state = (await dossierRow(world.h, dossier.id)).status;
      await page.selectOption('#status', state);
      await Promise.all([
        page.waitForURL(new RegExp(`status=${state}`)),
        page.click('.list-filters button[type=submit]'),
      ]);
      const byState = await page.locator('table.dossier-table tbody tr').allTextContents();
      expect(byState).toHaveLength(2);
      expect(byState.join(' ')).not.toContain('Hợp đồng thuê văn phòng');

      // Searched without diacritics: only Nguyễn Văn Ánh's.
      await page.goto(`${origin}/app/ho-so`);
      await page.fill('#keyword', 'nguyen van anh');
      await Promise.all([page.waitForURL(/keyword=/), page.press('#keyword', 'Enter')]);
      const found = await page.locator('table.dossier-table tbody tr').allTextContents();
      expect(found).toHaveLength(1);
      expect(found[0]).toContain(dossierTitle);
      await Promise.all([
        page.waitForURL(new RegExp(`/app/ho-so/${dossier.id}$`)),
        page.click('table.dossier-table a.row-title'),
      ]);
      expect(await text(page, 'h1')).toBe(dossierTitle);
      expect(await page.locator('.pdf-preview').count()).toBe(1);
      expect(await text(page, 'ol.steps')).toContain('Cán bộ duyệt hồ sơ');

      // Step 1 from the task list.
      firstTaskId = (await openTask(world.h, dossier.id))!.id;
      await page.goto(`${origin}/app/xu-ly-cong-viec`);
      await Promise.all([
        page.waitForURL(/done=approved/),
        taskRow(page, dossierTitle).getByRole('button', { name: 'Duyệt', exact: true }).click(),
      ]);
      expect(await text(page, '.notice')).toContain('Đã duyệt công việc.');
      const next = (await openTask(world.h, dossier.id))!;
      expect(next.id).not.toBe(firstTaskId);
      secondTaskId = next.id;
    } finally {
      await context.close();
    }
  });

  it('the second user arrives with ?at= (gone from the address and the history), opens the task and signs with a drawn picture', async () => {
    const access = await issueToken(world.h.deps, ids.second, 'access');
    recordIssuedSecret(access, 'access token');
    const context = await newContext();
    try {
      const page = await context.newPage();
      const list = `${origin}/app/xu-ly-cong-viec`;
      await page.goto(`${list}?at=${access}`);
      expect(page.url()).toBe(list);
      expect(await page.evaluate('location.href')).not.toContain(access);
      for (const cookie of await context.cookies()) {
        if (cookie.name.endsWith('esign_session')) recordIssuedSecret(cookie.value, 'session');
      }
      // No entry of the history holds the token: back leads to where the tab started.
      await page.goBack().catch(() => null);
      expect(page.url()).not.toContain(access);
      await page.goto(list);

      // The task, from the list, to the signing page.
      const row = taskRow(page, dossierTitle);
      await Promise.all([
        page.waitForURL(new RegExp(`/app/ky-so/${secondTaskId}$`)),
        row.getByRole('link', { name: 'Ký hồ sơ' }).click(),
      ]);
      expect(await text(page, 'h1')).toBe(dossierTitle);
      expect(await text(page, '.signing-step')).toBe('Bước: Trưởng phòng ký nháy');
      await page.locator('#signature-pad').waitFor({ timeout: 60_000 });
      await drawWithMouse(page);
      await page.click('#image-confirm');
      await page.waitForURL(/\?done=signed$/, { timeout: 120_000 });
      expect(await text(page, '#signing-outcome .notice')).toBe('Bạn đã ký thành công.');
      const next = (await openTask(world.h, dossier.id))!;
      expect(next.id).not.toBe(secondTaskId);
      thirdTaskId = next.id;
    } finally {
      await context.close();
    }
  });

  it(`the third user signs ${'port' in agentPort ? 'with the USB token through the headless agent and SoftHSM' : `with the cloud HSM key (USB TOKEN SKIPPED: ${agentPort.unavailable})`} from /ky-so/{taskId}`, async () => {
    const context = await newContext();
    try {
      const page = await signIn(context, people.third.username);
      const url = `${origin}/app/ky-so/${thirdTaskId}`;
      await page.goto(url);
      expect(await text(page, '.signing-step')).toBe('Bước: Giám đốc ký số');
      const methods = await page
        .locator('input[name="signing-method"]')
        .evaluateAll((inputs) => inputs.map((input) => input.getAttribute('value')));
      expect(methods).toEqual(['usb_token', 'cloud_hsm']);

      if (!holder || !('port' in agentPort)) {
        // No agent port free: the same step with the cloud HSM key and its SMS code.
        await page.locator('input[value="cloud_hsm"]').check();
        await page.click('#otp-send');
        await page.locator('#otp-sent').waitFor({ timeout: 60_000 });
        await world.deliver();
        const otp = world.otpFor(thirdPhone);
        recordIssuedSecret(otp, 'SMS OTP');
        await page.fill('#otp-code', otp);
        await page.click('#otp-confirm');
        await page.waitForURL(/\?done=signed$/, { timeout: 120_000 });
        return;
      }

      const policy = holder.policy('policy.json', { origins: [origin], ticketServers: [origin] });
      agent = holder.start(policy);
      expect(await agent.port).toBe(agentPort.port);
      await page.locator('input[value="usb_token"]').check();
      const usb = page.locator('#usb-token');
      await page
        .locator('#usb-token[data-state="choosing"], #usb-token[data-state="failed"]')
        .waitFor({ timeout: 90_000 });
      const problem = usb.locator('[data-part="problem"]');
      if ((await usb.getAttribute('data-state')) === 'failed') {
        throw new Error(
          `the page did not reach the agent: ${await problem.getAttribute('data-code')}: ${await problem.textContent()}\n${agent.log.join('\n')}`,
        );
      }
      const certificate = usb.locator('label.certificate', { hasText: 'Le Van Cuong' });
      expect(await certificate.count()).toBe(1);
      await certificate.locator('input').check();
      await usb.locator('[data-part="sign"]').click();
      // Signed (the page goes to ?done=signed), or failed, saying why.
      const outcome = await Promise.race([
        page.waitForURL(/\?done=signed$/, { timeout: 120_000 }).then(() => 'signed' as const),
        page
          .locator('#usb-token[data-state="failed"]')
          .waitFor({ timeout: 120_000 })
          .then(() => 'failed' as const),
      ]);
      if (outcome === 'failed') {
        throw new Error(
          `USB-token signing failed: ${await problem.getAttribute('data-code')}: ${await problem.textContent()}\n${agent.log.join('\n')}`,
        );
      }
      expect(await text(page, '#signing-outcome .notice')).toBe('Bạn đã ký thành công.');
      expect(await text(page, '#signing-outcome')).toContain('Le Van Cuong');
      // The agent was asked by this page's origin, for this dossier's title.
      expect(agent.log.join('\n')).toContain(`consented: ${origin} "${dossierTitle}"`);
    } finally {
      await context.close();
    }
  });

  it('the dossier page shows it completed; its signed PDF passes pdfsig; the receiver got document.completed, signed', async () => {
    expect((await dossierRow(world.h, dossier.id)).status).toBe('COMPLETED');
    const context = await newContext();
    try {
      const page = await signIn(context, people.officer.username);
      await page.goto(`${origin}/app/ho-so/${dossier.id}`);
      expect(await text(page, '.page-head .badge')).toBe('Hoàn tất');
      // Each step's person, in the history.
      const history = await page.locator('table.history tbody tr').allTextContents();
      expect(history).toHaveLength(3);
      for (const [index, person] of [people.officer, people.second, people.third].entries()) {
        expect(history[index]).toContain(person.name);
      }
      const dir = fs.mkdtempSync(path.join(work.dir, 'downloads-'));
      signedPdf = await download(page, '.file-card a.button:has-text("Tải bản đã ký")', dir);
    } finally {
      await context.close();
    }
    expect(fs.readFileSync(signedPdf).subarray(0, 5).toString()).toBe('%PDF-');
    const verdicts = await pdfsigTrusted(signedPdf);
    const signatures = verdicts.filter((verdict) => !verdict.documentTimestamp);
    // The picture (the service's seal) and the third user's signature, each valid and trusted.
    expect(signatures).toHaveLength(2);
    for (const verdict of signatures) {
      expect([verdict.valid, verdict.trusted, verdict.text]).toEqual([true, true, verdict.text]);
    }
    if (holder)
      expect(signatures.some((verdict) => verdict.text.includes('Le Van Cuong'))).toBe(true);
    expect(verdicts.at(-1)?.total).toBe(true);

    await webhooks.drain();
    const completed = receiver
      .at('/hooks')
      .filter(
        (request: ReceivedWebhook) => request.headers['x-webhook-event'] === 'document.completed',
      );
    expect(completed).toHaveLength(1);
    const [request] = completed;
    expect(
      signatureMatches(
        request!.raw,
        request!.headers['x-webhook-signature'] as string,
        webhookSecret,
      ),
    ).toBe(true);
    const envelope = JSON.parse(request!.raw.toString('utf8')) as {
      type: string;
      data: { documentId: string; status: string };
    };
    expect(envelope.type).toBe('document.completed');
    expect(envelope.data).toMatchObject({ documentId: 'TD-2026-0001', status: 'COMPLETED' });
  });

  let otpContract = '';
  let rejectedContract = '';

  it('a contract is signed with the SMS code from the development outbox, from its e-mailed invitation', async () => {
    const before = world.smtp.received.length;
    otpContract = await world.sentContract(
      [{ name: 'Nguyễn Văn Ánh', email: 'anh@khachhang.vn', phone: '0912345678', order: 1 }],
      { title: 'Hợp đồng mở tài khoản' },
    );
    await world.deliver();
    const mail = world.smtp.received.slice(before).find((m) => m.to.includes('anh@khachhang.vn'));
    const escaped = origin.replace(/[.]/g, '\\.');
    const invitation = new RegExp(`${escaped}/app/ky-so/([A-Za-z0-9_-]{43})\\b`).exec(
      parseMail(mail!.raw).text ?? '',
    )?.[1];
    expect(invitation).toBeDefined();
    recordIssuedSecret(invitation!, 'invitation token');
    const context = await newContext();
    try {
      const page = await context.newPage();
      await page.goto(`${origin}/app/ky-so/${invitation}`);
      expect(await text(page, 'h1')).toBe('Hợp đồng mở tài khoản');
      await page.locator('input[value="otp_sms"]').check();
      await page.click('#otp-send');
      await page.locator('#otp-sent').waitFor({ timeout: 60_000 });
      await world.deliver();
      const otp = world.otpFor('0912345678');
      recordIssuedSecret(otp, 'SMS OTP');
      await page.fill('#otp-code', otp);
      await page.click('#otp-confirm');
      await page.waitForURL(/\?done=signed$/, { timeout: 120_000 });
      expect(await text(page, '#signing-outcome .notice')).toBe('Bạn đã ký thành công.');
    } finally {
      await context.close();
    }
    const contract = await dataOf<{ status: string }>(
      await world.request('GET', `${contractsPath}/${otpContract}`, world.acme.orgKey),
    );
    expect(contract.status).toBe('completed');
  });

  it('another contract is declined with a reason on its signing page', async () => {
    rejectedContract = await world.sentContract(
      [{ name: 'Trần Thị Bình', email: 'binh@khachhang.vn', phone: '0987654321', order: 1 }],
      { title: 'Hợp đồng bảo lãnh' },
    );
    const session = await dataOf<{ signingUrl: string }>(
      await world.initiate(rejectedContract, 'binh@khachhang.vn', 'otp_sms'),
    );
    recordIssuedSecret(session.signingUrl.split('/').at(-1)!, 'signingUrl token');
    expect(session.signingUrl.startsWith(`${origin}/app/ky-so/phien/`)).toBe(true);
    const context = await newContext();
    try {
      const page = await context.newPage();
      await page.goto(session.signingUrl);
      await page.locator('#otp-send').waitFor({ timeout: 60_000 });
      await page.click('#reject summary');
      await page.fill('#reject-reason', 'Thông tin bên bảo lãnh chưa đúng');
      await page.click('#reject-submit');
      await page.waitForURL(/\?done=rejected$/, { timeout: 60_000 });
      expect(await text(page, '#signing-outcome .notice')).toContain('Bạn đã từ chối ký');
    } finally {
      await context.close();
    }
    const contract = await dataOf<{ status: string }>(
      await world.request('GET', `${contractsPath}/${rejectedContract}`, world.acme.orgKey),
    );
    expect(contract.status).toBe('rejected');
  });

  it('someone of another tenant gets "not found" for the dossier, the task and the contract, as for ids that do not exist', async () => {
    const context = await newContext();
    try {
      const page = await signIn(context, people.foreign.username);
      const answer = async (target: string) => {
        const response = await page.goto(`${origin}${target}`);
        return {
          status: response?.status(),
          h1: await text(page, 'h1'),
          main: await mainText(page),
        };
      };
      const missing = {
        dossier: await answer('/app/ho-so/999999'),
        task: await answer('/app/xu-ly-cong-viec/999999'),
        contract: await answer('/app/hop-dong/00000000-0000-4000-8000-000000000000'),
      };
      expect(missing.dossier).toMatchObject({ status: 404, h1: 'Không tìm thấy trang' });
      expect(missing.task).toEqual(missing.dossier);
      expect(missing.contract).toEqual(missing.dossier);
      for (const target of [
        `/app/ho-so/${dossier.id}`,
        `/app/xu-ly-cong-viec/${thirdTaskId}`,
        `/app/tasks?id=${thirdTaskId}`,
        `/app/hop-dong/${otpContract}`,
        `/app/hop-dong/${rejectedContract}`,
      ]) {
        expect([target, await answer(target)]).toEqual([target, missing.dossier]);
      }
    } finally {
      await context.close();
    }
  });

  it('/xac-thuc agrees with pdfsig on the completed PDF (valid) and on a tampered copy (not valid)', async () => {
    const context = await newContext();
    try {
      const valid = await verifyOnPage(context, signedPdf);
      expect(valid.badge).toBe('Hợp lệ');
      expect(valid.verdict).toContain('Tất cả chữ ký trong tệp đều hợp lệ');
      expect(
        (await pdfsigTrusted(signedPdf))
          .filter((verdict) => !verdict.documentTimestamp)
          .every((verdict) => verdict.valid),
      ).toBe(true);

      // One byte of the signed revision changed (in the header's binary comment line).
      const tampered = path.join(work.dir, 'tampered.pdf');
      const bytes = fs.readFileSync(signedPdf);
      const at = bytes.indexOf('\n') + 2;
      bytes[at] = bytes[at] === 0x41 ? 0x42 : 0x41;
      fs.writeFileSync(tampered, bytes);
      const invalid = await verifyOnPage(context, tampered);
      expect(invalid.badge).toBe('Không hợp lệ');
      const report = pdfsig(tampered);
      expect(report).not.toMatch(/Signature Validation: Signature is Valid\./);
      expect(report).toMatch(/Digest Mismatch|Signature is Invalid/);
    } finally {
      await context.close();
    }
  });
});
