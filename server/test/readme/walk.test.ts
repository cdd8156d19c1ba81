import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { type BrowserContext, chromium, type Page } from 'playwright-core';
import { databaseEnv } from '../../../test/support/postgres';
import { recordIssuedSecret, recordSecretsOfBody } from '../../../test/support/runLog';
import { readSignatures } from '../../src/pdf/signing';
import { builtServerSuite, repoRoot } from '../startup/builtServer';

jest.setTimeout(400_000);

/** The line of a walk block that prints a person's link into the web application. */
const webLink = /^echo "http:\/\/127\.0\.0\.1:3000\/app\/xu-ly-cong-viec\?at=\$[A-Z]+"$/m;

/**
 * The README's offline walks, as written: every `sh` block from "Try it offline: a dossier" up
 * to "Configuration" (the dossier walk, then the contract walk), against the built server on a
 * fresh DATA_DIR. The only change is the port: the README's `127.0.0.1:3000` becomes the test
 * server's. The walk is cut after each block that prints a link into the web application: there
 * a person acts in the browser (the test does what the README tells them), then the next part
 * goes on in bash with the variables the earlier parts set.
 */
function walkParts(port: number): string[] {
  const readme = fs.readFileSync(path.join(repoRoot, 'README.md'), 'utf8');
  const start = readme.indexOf('## Try it offline: a dossier');
  const end = readme.indexOf('## Configuration', start);
  const blocks = [...readme.slice(start, end).matchAll(/```sh\n([\s\S]*?)```/g)].map(
    (match) => match[1]!,
  );
  expect(blocks.length).toBeGreaterThanOrEqual(12);
  const parts: string[] = [''];
  for (const block of blocks) {
    parts[parts.length - 1] += `${block.replaceAll('127.0.0.1:3000', `127.0.0.1:${port}`)}\n`;
    if (webLink.test(block)) parts.push('');
  }
  return parts;
}

/** Runs the walk part by part in bash, each part starting from the variables the last left. */
function walkRunner(dataDir: string) {
  const state = path.join(dataDir, 'walk-state.sh');
  const issued = path.join(dataDir, 'walk-credentials.txt');
  let all = '';
  return (part: string) => {
    all += part;
    // What the walk so far defines (variables and functions), kept for the next part.
    const variables = [...new Set([...all.matchAll(/^([A-Za-z_]\w*)=/gm)].map((m) => m[1]!))];
    const functions = [...new Set([...all.matchAll(/^([A-Za-z_]\w*)\(\)/gm)].map((m) => m[1]!))];
    const script = [
      fs.existsSync(state) ? `source ${state}` : '',
      part,
      `{ declare -p ${variables.join(' ')} 2>/dev/null || true; declare -f ${functions.join(' ')}; } > ${state}.new && mv ${state}.new ${state}`,
      // Then the walk's credentials, for the run's check that no log holds one.
      `printf '%s\\n' "\${KEY:-}" "\${TOKEN:-}" "\${GUEST:-}" "\${URL:-}" > ${issued}`,
    ].join('\n');
    const result = spawnSync('bash', ['--norc', '--noprofile', '-euo', 'pipefail', '-c', script], {
      cwd: repoRoot,
      env: {
        PATH: process.env.PATH ?? '',
        HOME: process.env.HOME ?? '',
        DATA_DIR: dataDir,
        ...databaseEnv(dataDir),
      },
      encoding: 'utf8',
      timeout: 240_000,
    });
    // The walk's answers and variables hold its keys, tokens and presigned URLs: the run checks
    // its logs for them.
    recordSecretsOfBody(result.stdout, 'README walk');
    for (const line of fs.existsSync(issued) ? fs.readFileSync(issued, 'utf8').split('\n') : []) {
      if (line.includes('://')) recordSecretsOfBody(line, 'README walk URL');
      else recordIssuedSecret(line, 'README walk credential');
    }
    expect({ status: result.status, stderr: result.stderr }).toEqual({ status: 0, stderr: '' });
    return result.stdout;
  };
}

/** The last link into the web application a part printed (the one the person opens). */
function printedLink(out: string, port: number): string {
  const links = out.match(
    new RegExp(`http://127\\.0\\.0\\.1:${port}/app/xu-ly-cong-viec\\?at=\\S+`, 'g'),
  );
  expect(links).not.toBeNull();
  return links!.at(-1)!;
}

/**
 * A person opens a printed link in a browser of their own: signed in by the token, which is gone
 * from the address (and the history) at once; the task list in Vietnamese.
 */
async function openLink(
  browser: Awaited<ReturnType<typeof chromium.launch>>,
  link: string,
  port: number,
): Promise<{ context: BrowserContext; page: Page }> {
  const context = await browser.newContext({ locale: 'vi-VN', timezoneId: 'Asia/Ho_Chi_Minh' });
  const page = await context.newPage();
  page.on('pageerror', (error) => pageErrors.push(error.message));
  await page.goto(link);
  expect(page.url()).toBe(`http://127.0.0.1:${port}/app/xu-ly-cong-viec`);
  expect(await page.evaluate<string>('window.location.href')).not.toContain('at=');
  await expect(page.getByRole('heading', { level: 1 }).textContent()).resolves.toBe(
    'Xử lý công việc',
  );
  return { context, page };
}

/** Script errors of the walk's pages (none expected). */
const pageErrors: string[] = [];

/**
 * The cookies a browser was given are secrets: the web session, and a signing page's
 * `<sessionId>.<page credential>` (the session id is public: it is in the API's paths).
 */
async function recordCookies(context: BrowserContext): Promise<void> {
  for (const cookie of await context.cookies()) {
    if (/session/.test(cookie.name)) recordIssuedSecret(cookie.value, `README walk ${cookie.name}`);
    if (/signing/.test(cookie.name)) {
      recordIssuedSecret(cookie.value.split('.').at(-1)!, `README walk ${cookie.name}`);
    }
  }
}

describe('README: the offline walks', () => {
  const suite = builtServerSuite();

  it('the dossier walk, then the contract walk: uploaded, sent (the invitation link from mail show), OTP from the outbox, confirmed, signed PDF valid and trusted for pdfsig (development CA in an NSS database) and valid for verify, archived B-LTA (openssl ts verifies the document timestamp)', async () => {
    const dataDir = suite.newDataDir();
    const server = await suite.start({ DATA_DIR: dataDir, LOG_LEVEL: 'info' });
    // The contract walk signs with the development seal: its keys come after "listening".
    for (let waited = 0; !server.stdout().includes('signing keys ready'); waited += 200) {
      if (waited > 60_000) throw new Error(`no "signing keys ready":\n${server.stdout()}`);
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
    const parts = walkParts(server.port);
    // Two people act in the web application: the legal officer (step 7), the customer (step 8).
    expect(parts).toHaveLength(3);
    const run = walkRunner(dataDir);
    const browser = await chromium.launch({ executablePath: '/usr/bin/chromium' });
    let out = '';
    try {
      // Steps 1 to 7's link.
      out += run(parts[0]!);
      // Step 7: the officer opens the link and presses "Duyệt" in the task's row.
      const officer = await openLink(browser, printedLink(out, server.port), server.port);
      const row = officer.page.getByRole('row', { name: /Phòng Pháp chế duyệt/ });
      await expect(row.count()).resolves.toBe(1);
      await Promise.all([
        officer.page.waitForURL(/[?&]done=approved/),
        row.getByRole('button', { name: 'Duyệt', exact: true }).click(),
      ]);
      await officer.page.getByText('Đã duyệt công việc.').waitFor();
      await recordCookies(officer.context);

      // The rest of step 7, step 8 up to the customer's link.
      const second = run(parts[1]!);
      out += second;
      expect(second).toContain('"status":"APPROVED"');
      // Step 8: the customer opens their link, presses "Ký hồ sơ", declines with a reason.
      const customer = await openLink(browser, printedLink(second, server.port), server.port);
      const page = customer.page;
      const task = page.getByRole('row', { name: /Khách hàng ký/ });
      await expect(task.count()).resolves.toBe(1);
      await Promise.all([
        page.waitForURL(/\/app\/ky-so\/\d+$/),
        task.getByRole('link', { name: 'Ký hồ sơ' }).click(),
      ]);
      // A digital signature step: the page offers the USB token only (no cloud key enrolled).
      await page.locator('summary', { hasText: 'Từ chối ký' }).click();
      await page.getByLabel('Lý do từ chối').fill('Sai địa chỉ');
      page.once('dialog', (dialog) => void dialog.accept());
      await Promise.all([
        page.waitForURL(/[?&]done=rejected/),
        page.locator('#reject-form').getByRole('button', { name: 'Từ chối ký' }).click(),
      ]);
      await page.getByText('Bạn đã từ chối ký. Bên gửi đã được thông báo.').waitFor();
      await recordCookies(customer.context);

      // Step 9, then the contract walk.
      out += run(parts[2]!);
    } finally {
      await browser.close();
    }
    expect(pageErrors).toEqual([]);
    // The dossier walk: the PDF downloads, the presigned URL answers, the dossier is rejected.
    expect(out).toContain('%PDF-');
    expect(out).toMatch(/^200$/m);
    expect(out).toContain('"status":"REJECTED"');
    // The contract walk.
    expect(out).toContain('"status":"signing"');
    expect(out).toContain('"channel":"sms"');
    // Step 11: the invitation's link, printed by `mail show` from the development e-mail file.
    expect(out).toMatch(
      new RegExp(`http://127\\.0\\.0\\.1:${server.port}/app/ky-so/[A-Za-z0-9_-]{43}$`, 'm'),
    );
    expect(out).toContain('"contractStatus":"completed"');
    expect(out).toContain('Signature Validation: Signature is Valid.');
    // Step 13: the development CA in the walk's NSS database makes the signer trusted.
    expect(out).toContain('Certificate Validation: Certificate is Trusted.');
    expect(out).not.toContain("Certificate issuer isn't Trusted");
    expect(out).toContain('"isValid":true');

    // B-LTA: the completed contract's file ends with a document timestamp that pdfsig lists and
    // openssl ts verifies over its byte range with the development TSA's CA; verify says B-LTA.
    expect(out).toMatch(/Signature #2:\n\s+- Signature Field Name: DocumentTimestamp1/);
    expect(out).toContain('"level":"B-LTA"');
    const file = '/tmp/hop-dong-02-2026.pdf';
    const stamp = readSignatures(file).signatures.find((s) => s.type === 'timestamp');
    expect(stamp).toMatchObject({
      fieldName: 'DocumentTimestamp1',
      subFilter: 'ETSI.RFC3161',
      coversWholeFile: true,
    });
    const work = fs.mkdtempSync(path.join(dataDir, 'lta-'));
    const bytes = fs.readFileSync(file);
    const [a, b, c, d] = stamp!.byteRange;
    fs.writeFileSync(
      path.join(work, 'range.bin'),
      Buffer.concat([bytes.subarray(a, a + b), bytes.subarray(c, c + d)]),
    );
    fs.writeFileSync(path.join(work, 'token.der'), stamp!.contents);
    const verified = spawnSync(
      'openssl',
      [
        'ts',
        '-verify',
        '-data',
        'range.bin',
        '-in',
        'token.der',
        '-token_in',
        '-CAfile',
        // The README's step 13 wrote it there with `admin ca export`.
        path.join(dataDir, 'nss', 'dev-ca.pem'),
      ],
      { cwd: work, encoding: 'utf8' },
    );
    expect(verified.stdout).toContain('Verification: OK');
  });
});
