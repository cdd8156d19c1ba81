import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import type { Page } from 'playwright-core';
import { recordIssuedSecret } from '../../../test/support/runLog';
import { issueToken } from '../../src/auth/tokens';
import { contractPdf } from '../contracts/fixtures';
import { addProcess, openWorld, partnerToken, type World } from '../dossiers/fixtures';
import { manualWorker } from '../notify/support';
import { outboxOtp } from '../sessions/world';
import { type BrowserWorld, openBrowserWorld } from '../support/browser';
import { dossierRow, openTask } from '../support/dossiers';
import {
  download,
  drawWithMouse,
  expectPdfsigValid,
  screenshot,
  signingContext,
  text,
} from './signingPageSupport';

/**
 * A signed-in signer signs their dossier task from `/ky-so/{taskId}`, in Debian's Chromium: the
 * page opens the task's session through the same service as POST
 * /api/tasks/{taskCode}/signing-session. The director's digital_signature step with the cloud
 * HSM key and its SMS code, then the lawyer's image_signature step with a drawn signature; the
 * dossier completes and the page offers the signed file, which pdfsig finds valid.
 */

jest.setTimeout(300_000);

let world: World;
let browser: BrowserWorld;

beforeAll(async () => {
  world = await openWorld();
  const { h } = world;
  await addProcess(
    h,
    { tenantId: world.acme.tenantId, organizationId: world.acme.rootOrganizationId },
    'KYSO',
    ['HD'],
    [
      {
        stepCode: 'GIAM_DOC',
        name: 'Giám đốc ký số',
        kind: 'internal',
        signType: 'digital_signature',
        defaultUserId: world.directorId,
      },
      {
        stepCode: 'PHAP_CHE',
        name: 'Pháp chế ký nháy',
        kind: 'internal',
        signType: 'image_signature',
        defaultUserId: world.lawyerIds[0],
      },
    ],
  );
  browser = await openBrowserWorld(h);
});
afterAll(async () => {
  await browser?.close();
  await world?.close();
});
afterEach(() => {
  expect(browser.takeErrors()).toEqual([]);
});

/** The TSA and the certificates live in real time. */
function tick(): void {
  if (new Date() > world.h.clock.now()) world.h.clock.set(new Date());
}

/** A browser page signed in as `userId` through `?at=`, at `url`. */
async function signedIn(
  userId: number,
  url: string,
  options: { locale?: 'vi' | 'en'; width?: number } = {},
): Promise<{ page: Page; status: number }> {
  tick();
  const token = await issueToken(world.h.deps, userId, 'access');
  recordIssuedSecret(token, 'access token');
  const context = await signingContext(browser, options);
  const page = await context.newPage();
  const response = await page.goto(`${url}?at=${token}`);
  expect(page.url()).toBe(url);
  return { page, status: response?.status() ?? 0 };
}

describe('a dossier task signed from /ky-so/{taskId}', () => {
  it('the director signs with the cloud HSM key, the lawyer with a drawn signature; the dossier completes and the signed file passes pdfsig', async () => {
    const documentId = `KS-${crypto.randomUUID()}`;
    const created = await world.create({
      documentId,
      documentTitle: 'Hợp đồng cung cấp dịch vụ',
      processDefCode: 'KYSO',
      signers: [],
      files: [
        { source: 'url', fileUrl: world.serve(await contractPdf(documentId)), title: 'Hợp đồng' },
      ],
    });
    expect(created.status).toBe(201);
    const dossierId = (
      await world.h.deps.db
        .selectFrom('dossiers')
        .select('id')
        .where('document_id', '=', documentId)
        .executeTakeFirstOrThrow()
    ).id;
    const first = (await openTask(world.h, dossierId))!;
    const url = `${browser.origin}/app/ky-so/${first.id}`;

    // The lawyer takes no part in the director's task, another tenant even less: not found.
    for (const userId of [world.lawyerIds[0], world.beta.adminUserId]) {
      const other = await signedIn(userId, url);
      expect(other.status).toBe(404);
      expect(await text(other.page, 'h1')).toBe('Không tìm thấy trang');
      await other.page.context().close();
    }

    // The director: a digital_signature step offers the USB token and the cloud HSM key.
    const { page } = await signedIn(world.directorId, url);
    expect(await text(page, 'h1')).toBe('Hợp đồng cung cấp dịch vụ');
    expect(await text(page, '.signing-step')).toBe('Bước: Giám đốc ký số');
    expect(await text(page, '.signing-facts')).toContain(documentId);
    expect(
      await page
        .locator('input[name="signing-method"]')
        .evaluateAll((inputs) => inputs.map((input) => input.getAttribute('value'))),
    ).toEqual(['usb_token', 'cloud_hsm']);
    expect(await page.locator('input[value="cloud_hsm"]').isChecked()).toBe(true);
    expect(await page.locator('.pdf-preview').getAttribute('data-pdf-src')).toBe(
      `/app/ky-so/${first.id}/tai-lieu`,
    );
    await screenshot(page, 'task-cloud-vi-1280');
    tick();
    await page.click('#otp-send');
    await page.locator('#otp-sent').waitFor();
    const manual = manualWorker(world.h.deps);
    await manual.drain();
    await manual.stop();
    await page.fill('#otp-code', outboxOtp(world.h, '0901000000'));
    tick();
    await page.click('#otp-confirm');
    await page.waitForURL(/\?done=signed$/);
    expect(await text(page, '#signing-outcome .notice')).toBe('Bạn đã ký thành công.');
    // The attributes of the task pages' notices, for a parent page embedding the app.
    expect(
      await page
        .locator(
          `[data-task-event="signed"][data-task-id="${first.id}"][data-dossier-id="${dossierId}"]`,
        )
        .count(),
    ).toBe(1);
    expect(await text(page, '#signing-outcome')).toContain('Trần Văn Giám');
    expect(await page.locator('#signing-verification .verification-item').count()).toBe(1);
    await screenshot(page, 'task-signed-vi-1280');
    await page.context().close();

    // The lawyer's image_signature task, in English: signed in, the page offers the pad only.
    const second = (await openTask(world.h, dossierId))!;
    expect(second.id).not.toBe(first.id);
    const signedInLawyer = await signedIn(
      world.lawyerIds[0],
      `${browser.origin}/app/ky-so/${second.id}`,
      { locale: 'en', width: 390 },
    );
    expect(await signedInLawyer.page.locator('input[name="signing-method"]').count()).toBe(0);
    await signedInLawyer.page.locator('#signature-pad').waitFor();
    await screenshot(signedInLawyer.page, 'task-image-en-390');
    await signedInLawyer.page.context().close();

    // The same turn through a session's signingUrl, as a partner hands it out: no sign-in.
    tick();
    const started = await world.h.request('POST', `/api/tasks/${second.code}/signing-session`, {
      headers: { 'x-access-token': await partnerToken(world, 'phap.che1') },
      json: { signingMethod: 'image_signature' },
    });
    const { signingUrl } = ((await started.json()) as { data: { signingUrl: string } }).data;
    const context = await signingContext(browser, { locale: 'en' });
    const lawyer = { page: await context.newPage() };
    await lawyer.page.goto(`${browser.origin}/app/ky-so/phien/${signingUrl.split('/').at(-1)}`);
    expect(await text(lawyer.page, 'h1')).toBe('Hợp đồng cung cấp dịch vụ');
    expect(await text(lawyer.page, '.signing-step')).toBe('Step: Pháp chế ký nháy');
    await lawyer.page.locator('#signature-pad').waitFor();
    await drawWithMouse(lawyer.page);
    await screenshot(lawyer.page, 'task-link-image-en-1280');
    tick();
    await lawyer.page.click('#image-confirm');
    await lawyer.page.waitForURL(/\?done=signed$/);
    expect(await text(lawyer.page, '#signing-outcome .notice')).toBe(
      'You have signed successfully.',
    );
    expect(await text(lawyer.page, '#signing-verification .notice')).toBe(
      'Every signature in the document is valid.',
    );
    // Each signature named by who signed it (the image signature is the service seal's).
    const names = await lawyer.page
      .locator('#signing-verification .verification-facts dd')
      .allTextContents();
    expect(names.filter((name) => !/\d{2}\/\d{2}\/\d{4}/.test(name))).toEqual([
      'Trần Văn Giám',
      'Lê Thị Luật',
    ]);
    expect((await dossierRow(world.h, dossierId)).status).toBe('COMPLETED');
    const dir = fs.mkdtempSync(path.join(world.h.dataDir, 'downloads-'));
    const file = await download(lawyer.page, '#signed-download', dir);
    expect(expectPdfsigValid(file)).toBe(2);
    await screenshot(lawyer.page, 'task-completed-en-1280');
    // The audit trail names the signer's download from the page.
    const events = await world.h.deps.db
      .selectFrom('dossier_audit_events')
      .select(['action', 'details'])
      .where('dossier_id', '=', dossierId)
      .where('action', '=', 'downloaded')
      .execute();
    expect(events.map((event) => JSON.parse(event.details).via)).toEqual(['signing_page']);
    await lawyer.page.context().close();
  });
});
