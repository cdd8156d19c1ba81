/**
 * Issue 10 end to end: a real server on 127.0.0.1 (TSA_URL = `openssl ts` behind an HTTPS
 * wrapper; the token certificates' test CA and the TSA root as global trust anchors), the
 * HEADLESS agent (`--headless --policy`, PIN from a 0600 file) with a SoftHSM token, and a
 * page-like client: it initiates a usb_token session, asks the agent to sign with the ticket and
 * tsaUrl, and posts the answer to sign-with-token. pdfsig, trusting the test CA, reports the
 * signature valid and trusted; `openssl ts -verify` passes on the token the agent returned.
 */
import { execFileSync } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { getRequestListener } from '@hono/node-server';
import { askAgent, type HeadlessAgent } from '../../agent/test/support/headlessAgent';
import { HeadlessSigner } from '../../agent/test/support/headlessSigner';
import type { TestPki, TestToken } from '../../agent/test/support/testTokens';
import { addTrustAnchor } from '../../server/src/trust/service';
import { dataOf, openSessionWorld, type SessionWorld } from '../../server/test/sessions/world';
import {
  nssDatabase,
  pdfsigSignatures,
  pdfsigTrusting,
} from '../../server/test/signing/pdf/corpus';
import type { TestHttpsServer } from '../support/httpsServer';
import { testTls } from '../support/httpsServer';
import {
  createOpensslPki,
  type OpensslPki,
  opensslReply,
  sendReply,
  startTsaServer,
} from '../support/opensslTsa';
import { tempDir } from '../support/tools';

jest.setTimeout(180_000);

const PAGE = 'https://app.esign.example';
const token: TestToken = { label: 'E2E RSA', pin: '246810', soPin: '97531864' };
const signer = { name: 'Nguyen Van Anh', email: 'anh@partner.example', order: 1 };

let work: { dir: string; remove(): void };
let server: http.Server;
let world: SessionWorld;
let tsaPki: OpensslPki;
let tsa: TestHttpsServer;
let pki: TestPki;
let agent: HeadlessAgent;

beforeAll(async () => {
  work = tempDir('esign-agent-e2e-');
  tsaPki = createOpensslPki();
  tsa = await startTsaServer({
    '/tsa': (query, _request, response) => sendReply(response, opensslReply(tsaPki, query)),
  });

  // The server listens first, so that its PUBLIC_URL (the tickets' issuer) has the real port.
  let handle: http.RequestListener = (_, response) => response.writeHead(503).end();
  server = http.createServer((request, response) => handle(request, response));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const serverOrigin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  world = await openSessionWorld({
    PUBLIC_URL: serverOrigin,
    APP_URL: `${PAGE}/app`,
    TSA_URL: tsa.url('/tsa'),
    OUTBOUND_ALLOWLIST: '127.0.0.1',
  });
  handle = getRequestListener((request) => {
    world.tick();
    return world.h.app.fetch(request);
  });

  // The token's certificate under a test CA (root → intermediate → signer) the server trusts,
  // and the headless agent: the PIN from a 0600 file, the page's origin consented to.
  const holder = await HeadlessSigner.create(work.dir, {
    token,
    subject: `/C=VN/O=Doi tac ACME/CN=${signer.name}/emailAddress=${signer.email}`,
    port: 20000 + crypto.randomInt(20000),
  });
  pki = holder.pki;
  for (const anchor of [pki.rootDer, tsaPki.rootDer]) {
    await addTrustAnchor(world.h.deps.db, world.h.now(), {
      tenantId: null,
      certificateFile: anchor,
    });
  }
  agent = holder.start(
    holder.policy('policy.json', { origins: [PAGE], ticketServers: [serverOrigin] }),
    {
      // The TSA wrapper's TEST-ONLY TLS certificate.
      NODE_EXTRA_CA_CERTS: testTls.caFile,
    },
  );
});

afterAll(async () => {
  await agent?.stop();
  await new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve()));
  await world?.close();
  await tsa?.close();
  tsaPki?.remove();
  work?.remove();
});

describe('server + headless agent + openssl TSA + SoftHSM', () => {
  it('signs a usb_token session through the agent; pdfsig trusts the signature and openssl ts verifies the token', async () => {
    const contractId = await world.sentContract([signer]);
    const started = await dataOf<{
      sessionId: string;
      contractHash: string;
      tsaUrl: string;
      ticket: string;
    }>(await world.initiate(contractId, signer.email, 'usb_token'));
    expect(started.tsaUrl).toBe(tsa.url('/tsa'));

    const port = await agent.port;
    const [hello, listed] = await askAgent(port, PAGE, [
      { type: 'hello', versions: [1] },
      { type: 'certificates.list' },
    ]);
    expect(hello?.type).toBe('hello.ok');
    if (listed?.type !== 'certificates.list.result') throw new Error(JSON.stringify(listed));
    const [, answer] = await askAgent(port, PAGE, [
      { type: 'hello', versions: [1] },
      {
        type: 'sign',
        documentDigest: Buffer.from(started.contractHash.slice('sha256:'.length), 'hex').toString(
          'base64',
        ),
        certificateId: listed.certificates[0]!.certificateId,
        documentTitle: 'Hợp đồng dịch vụ',
        requester: { origin: PAGE, serviceName: 'ESign', sessionId: started.sessionId },
        ticket: started.ticket,
        tsaUrl: started.tsaUrl,
      },
    ]);
    if (answer?.type !== 'sign.result') {
      throw new Error(`${JSON.stringify(answer)}\n${agent.log.join('\n')}`);
    }
    expect(answer.timestampToken).toEqual(expect.any(String));

    const accepted = await dataOf<{ contractStatus: string; certificateInfo: { subject: string } }>(
      await world.step(started.sessionId, 'sign-with-token', {
        signedHash: answer.signedHash,
        certificateChain: answer.certificateChain,
        timestampToken: answer.timestampToken,
      }),
    );
    expect(accepted.contractStatus).toBe('completed');
    expect(accepted.certificateInfo.subject).toContain(signer.name);

    // pdfsig, trusting only the test CA's root: the signature valid and trusted; after it only
    // the completed contract's archive revision (DSS and a document timestamp, which poppler 22
    // lists without validating).
    const file = await world.signedFile(contractId, 'signed.pdf');
    const nss = nssDatabase(path.join(work.dir, 'nss'), [path.join(pki.dir, 'root.pem')]);
    const verdicts = pdfsigSignatures(await pdfsigTrusting(file, nss));
    expect(verdicts).toHaveLength(2);
    expect(verdicts[0]).toMatchObject({ valid: true, trusted: true, total: false });
    expect(verdicts[1]).toMatchObject({ total: true });
    expect(verdicts[1]!.text).toMatch(/Field Name: DocumentTimestamp1/);

    // The token the agent returned stamps the signature value, under the TSA root.
    const tokenFile = path.join(work.dir, 'answer.tst');
    const signatureFile = path.join(work.dir, 'signature.bin');
    fs.writeFileSync(tokenFile, Buffer.from(answer.timestampToken!, 'base64'));
    fs.writeFileSync(signatureFile, Buffer.from(answer.signedHash, 'base64'));
    const verified = execFileSync(
      'openssl',
      [
        'ts',
        '-verify',
        '-token_in',
        '-in',
        tokenFile,
        '-data',
        signatureFile,
        '-CAfile',
        tsaPki.rootPem,
        '-untrusted',
        tsaPki.tsa.certificate,
      ],
      { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] },
    );
    expect(verified).toContain('Verification: OK');
  });
});
