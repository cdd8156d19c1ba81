/**
 * The browser snippet of agent/PROTOCOL.md, cut out of the markdown and run as written in
 * Debian Chromium on a loopback page against the agent core with a SoftHSM token: it finds the
 * agent by probing the documented ports and returns what sign-with-token takes.
 */
import crypto from 'node:crypto';
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { type Browser, chromium } from 'playwright-core';
import {
  createOpensslPki,
  type OpensslPki,
  opensslReply,
  readBody,
} from '../../test/support/opensslTsa';
import { softHsmModule, tempDir } from '../../test/support/tools';
import { AgentChild, SoftHsmLab, TestPki, type TestToken } from './support/testTokens';

jest.setTimeout(120_000);

const token: TestToken = { label: 'Snippet Token', pin: '731902', soPin: '97531864' };
const protocol = fs.readFileSync(path.resolve(__dirname, '../PROTOCOL.md'), 'utf8');
const snippet = /## Browser snippet[\s\S]*?```js\n([\s\S]*?)```/.exec(protocol)?.[1] ?? '';

let work: { dir: string; remove(): void };
let tsaPki: OpensslPki;
let server: http.Server;
let agent: AgentChild;
let browser: Browser;
let pageOrigin: string;

beforeAll(async () => {
  work = tempDir('esign-snippet-');
  tsaPki = createOpensslPki();
  // One loopback server: the partner's page (its origin is what the agent admits) and the TSA.
  server = http.createServer((request, response) => {
    if (request.method === 'POST') {
      void readBody(request).then((query) =>
        response
          .writeHead(200, { 'Content-Type': 'application/timestamp-reply' })
          .end(opensslReply(tsaPki, query)),
      );
      return;
    }
    response
      .writeHead(200, { 'Content-Type': 'text/html' })
      .end('<!doctype html><title>Partner</title>');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  pageOrigin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;

  const pki = new TestPki(work.dir);
  const signer = pki.issue('snippet', 'ec', '/C=VN/CN=Le Thi E', [
    'basicConstraints=CA:FALSE',
    'keyUsage=critical,digitalSignature,nonRepudiation',
  ]);
  const lab = new SoftHsmLab(path.join(work.dir, 'softhsm'));
  lab.addToken(token);
  await lab.addKeyAndCertificates(token, { file: signer.keyFile, id: '0e' }, [
    { id: '0e', label: 'signing', der: signer.der },
  ]);
  const settingsFile = path.join(work.dir, 'settings.json');
  fs.writeFileSync(
    settingsFile,
    JSON.stringify({
      allowedOrigins: [pageOrigin],
      pkcs11Modules: [{ label: 'SoftHSM2', path: softHsmModule }],
    }),
  );
  const policyFile = path.join(work.dir, 'policy.json');
  fs.writeFileSync(
    policyFile,
    JSON.stringify({ approveOrigins: [], confirm: true, pins: { [token.label]: token.pin } }),
  );
  // The documented ports, the last first: another agent on this machine may hold the default.
  agent = new AgentChild(lab.config, {
    settingsFile,
    policyFile,
    intermediateFolders: [],
    ports: [17893, 17892, 17891],
  });
  await agent.next((event) => event.event === 'ready');
  browser = await chromium.launch({ executablePath: '/usr/bin/chromium', args: ['--no-sandbox'] });
});

afterAll(async () => {
  await browser?.close();
  await agent?.stop();
  await new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve()));
  tsaPki?.remove();
  work?.remove();
});

describe('the browser snippet of PROTOCOL.md', () => {
  it('is at most 40 lines', () => {
    expect(snippet.trim().split('\n').length).toBeLessThanOrEqual(40);
  });

  it('signs in Chromium as pasted: probe, hello, list, sign', async () => {
    const page = await browser.newPage();
    await page.goto(`${pageOrigin}/`);
    await page.addScriptTag({ content: snippet });
    const digest = crypto.randomBytes(32).toString('hex');
    const result = (await page.evaluate(
      `signWithAgent({ contractHash: 'sha256:${digest}', tsaUrl: '${pageOrigin}/tsa', sessionId: 'ses_snippet', documentTitle: 'Hợp đồng mẫu' })`,
    )) as { signedHash: string; certificateChain: string[]; timestampToken: string };
    expect(Object.keys(result).sort()).toEqual([
      'certificateChain',
      'signedHash',
      'timestampToken',
    ]);
    const consent = agent.events.filter((event) => event.kind === 'confirmSign').at(-1)!;
    expect(consent.consent).toMatchObject({
      origin: pageOrigin,
      documentDigestHex: digest,
      documentTitle: 'Hợp đồng mẫu',
    });
    expect(
      new crypto.X509Certificate(Buffer.from(result.certificateChain[0]!, 'base64')).subject,
    ).toContain('CN=Le Thi E');
    await page.close();
  });

  it('rejects with the agent’s code and Vietnamese message when the user declines', async () => {
    const policy = path.join(work.dir, 'policy.json');
    fs.writeFileSync(
      policy,
      JSON.stringify({ approveOrigins: [], confirm: false, pins: { [token.label]: token.pin } }),
    );
    const page = await browser.newPage();
    await page.goto(`${pageOrigin}/`);
    await page.addScriptTag({ content: snippet });
    const refusal = await page.evaluate(
      `signWithAgent({ contractHash: 'sha256:${'ab'.repeat(32)}', tsaUrl: '${pageOrigin}/tsa', documentTitle: 'Từ chối' }).then(() => null, (e) => ({ code: e.code, message: e.message }))`,
    );
    expect(refusal).toEqual({ code: 'USER_CANCELLED', message: 'Bạn đã hủy yêu cầu ký.' });
    await page.close();
  });
});
