import crypto from 'node:crypto';
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import type { AgentMessage, TokenCertificate } from '@esign/shared';
import { buildSignedAttributes } from '@esign/shared/cms';
import WebSocket from 'ws';
import {
  createOpensslPki,
  type OpensslPki,
  opensslReply,
  readBody,
} from '../../test/support/opensslTsa';
import { attempt, opensslVerifies, softHsmModule, tempDir } from '../../test/support/tools';
import { AgentChild, SoftHsmLab, TestPki, type TestToken } from './support/testTokens';

const ORIGIN = 'https://esign.example.vn';
const rsaToken: TestToken = { label: 'VNPT-CA Test', pin: '246810', soPin: '13579135' };
const ecToken: TestToken = { label: 'Viettel-CA Test', pin: '975310', soPin: '13579135' };
const lateToken: TestToken = { label: 'FPT-CA Late', pin: '555777', soPin: '13579135' };
const ALL_PINS = [rsaToken.pin, ecToken.pin, lateToken.pin, '000000'];
const USER_PIN_LOCKED = 0x40000;

/** Every frame the page side saw, both directions: the PIN must be in none of them. */
const frames: string[] = [];

class Page {
  private readonly queue: AgentMessage[] = [];
  private readonly waiting: ((message: AgentMessage) => void)[] = [];
  closedWith: Promise<number>;
  private counter = 0;

  private constructor(readonly socket: WebSocket) {
    socket.on('message', (data) => {
      const text = data.toString();
      frames.push(text);
      const message = JSON.parse(text) as AgentMessage;
      const waiter = this.waiting.shift();
      if (waiter) waiter(message);
      else this.queue.push(message);
    });
    this.closedWith = new Promise((resolve) => socket.on('close', (code) => resolve(code)));
  }

  static open(port: number, origin: string = ORIGIN): Promise<Page> {
    return new Promise((resolve, reject) => {
      const socket = new WebSocket(`ws://127.0.0.1:${port}`, { origin });
      const page = new Page(socket);
      socket.once('open', () => resolve(page));
      socket.once('error', reject);
    });
  }

  receive(): Promise<AgentMessage> {
    const queued = this.queue.shift();
    if (queued) return Promise.resolve(queued);
    return new Promise((resolve) => this.waiting.push(resolve));
  }

  /** Sends a request and waits for the answer with its id (pushes met meanwhile are kept). */
  async ask(request: Record<string, unknown>): Promise<AgentMessage> {
    const id = `r${++this.counter}`;
    const text = JSON.stringify({ id, ...request });
    frames.push(text);
    this.socket.send(text);
    const skipped: AgentMessage[] = [];
    for (;;) {
      const message = await this.receive();
      if (message.id === id) {
        this.queue.unshift(...skipped);
        return message;
      }
      skipped.push(message);
    }
  }

  async hello(): Promise<void> {
    expect((await this.ask({ type: 'hello', versions: [1] })).type).toBe('hello.ok');
  }

  close(): void {
    this.socket.close();
  }
}

let work: { dir: string; remove(): void };
let lab: SoftHsmLab;
let pki: TestPki;
let tsaPki: OpensslPki;
let aux: http.Server;
let auxPort: number;
let agent: AgentChild;
let port: number;
let policyFile: string;
let settingsFile: string;

function setPolicy(policy: {
  approveOrigins?: string[];
  confirm?: boolean;
  pins?: Record<string, string | null>;
}) {
  fs.writeFileSync(
    policyFile,
    JSON.stringify({
      approveOrigins: [],
      confirm: true,
      pins: {
        [rsaToken.label]: rsaToken.pin,
        [ecToken.label]: ecToken.pin,
        [lateToken.label]: lateToken.pin,
      },
      ...policy,
    }),
  );
}

beforeAll(async () => {
  work = tempDir('esign-agent-');
  tsaPki = createOpensslPki();
  // One local HTTP server: the TSA (POST /tsa, openssl ts) and the AIA issuer URL.
  aux = http.createServer((request, response) => {
    if (request.method === 'GET' && request.url === '/intermediate.cer') {
      response.writeHead(200, { 'Content-Type': 'application/pkix-cert' }).end(pki.intermediateDer);
      return;
    }
    void readBody(request).then((query) =>
      response
        .writeHead(200, { 'Content-Type': 'application/timestamp-reply' })
        .end(opensslReply(tsaPki, query)),
    );
  });
  await new Promise<void>((resolve) => aux.listen(0, '127.0.0.1', resolve));
  auxPort = (aux.address() as AddressInfo).port;

  pki = new TestPki(work.dir);
  const signing = [
    'basicConstraints=CA:FALSE',
    'keyUsage=critical,digitalSignature,nonRepudiation',
  ];
  const rsa = pki.issue('rsa-signer', 'rsa', '/C=VN/O=Cong ty A/CN=Nguyen Van A', signing);
  const rsaEncryption = pki.issue('rsa-encryption', 'rsa', '/C=VN/CN=Nguyen Van A (encryption)', [
    'basicConstraints=CA:FALSE',
    'keyUsage=critical,keyEncipherment',
  ]);
  const ec = pki.issue('ec-signer', 'ec', '/C=VN/O=Cong ty B/CN=Tran Thi B', [
    ...signing,
    `authorityInfoAccess=caIssuers;URI:http://127.0.0.1:${auxPort}/intermediate.cer`,
  ]);

  lab = new SoftHsmLab(path.join(work.dir, 'softhsm'));
  lab.addToken(rsaToken);
  lab.addToken(ecToken);
  // The RSA token carries its intermediate; the EC certificate's issuer comes by AIA.
  await lab.addKeyAndCertificates(rsaToken, { file: rsa.keyFile, id: '01' }, [
    { id: '01', label: 'signing', der: rsa.der },
    { id: '', label: 'Test Intermediate', der: pki.intermediateDer },
  ]);
  await lab.addKeyAndCertificates(rsaToken, { file: rsaEncryption.keyFile, id: '02' }, [
    { id: '02', label: 'encryption', der: rsaEncryption.der },
  ]);
  await lab.addKeyAndCertificates(ecToken, { file: ec.keyFile, id: 'a1' }, [
    { id: 'a1', label: 'signing', der: ec.der },
  ]);

  // The root comes from the user's intermediate folder.
  const folder = path.join(work.dir, 'intermediates');
  fs.mkdirSync(folder);
  fs.copyFileSync(path.join(work.dir, 'root.pem'), path.join(folder, 'root.pem'));

  settingsFile = path.join(work.dir, 'settings.json');
  fs.writeFileSync(
    settingsFile,
    JSON.stringify({
      allowedOrigins: [ORIGIN],
      pkcs11Modules: [
        { label: 'Absent vendor', path: path.join(work.dir, 'no-such-module.so') },
        { label: 'SoftHSM2', path: softHsmModule },
      ],
      tokenPollIntervalMs: 200,
      tsaUrl: `http://127.0.0.1:${auxPort}/tsa`,
    }),
  );
  policyFile = path.join(work.dir, 'policy.json');
  setPolicy({});
  agent = new AgentChild(lab.config, {
    settingsFile,
    policyFile,
    intermediateFolders: [folder],
    ports: [0],
  });
  port = (await agent.next((event) => event.event === 'ready')).port as number;
}, 120_000);

afterAll(async () => {
  await agent?.stop();
  await new Promise<void>((resolve) => (aux ? aux.close(() => resolve()) : resolve()));
  tsaPki?.remove();
  work?.remove();
});

async function listed(page: Page): Promise<TokenCertificate[]> {
  const answer = await page.ask({ type: 'certificates.list' });
  if (answer.type !== 'certificates.list.result') throw new Error(JSON.stringify(answer));
  return answer.certificates;
}

function signRequest(certificate: TokenCertificate, digest: Buffer) {
  return {
    type: 'sign',
    documentDigest: digest.toString('base64'),
    certificateId: certificate.certificateId,
    documentTitle: 'Hợp đồng mua bán số 7/2026',
    requester: { origin: ORIGIN, serviceName: 'ESign', sessionId: 'ses_1' },
  };
}

describe('agent core with two SoftHSM tokens', () => {
  it('answers the discovery probe with CORS and Private Network Access headers', async () => {
    const response = await fetch(`http://127.0.0.1:${port}/`, { headers: { Origin: ORIGIN } });
    expect(response.headers.get('access-control-allow-origin')).toBe(ORIGIN);
    expect(await response.json()).toEqual({
      name: 'ESign Agent',
      version: '0.1.0-test',
      protocolVersions: [1],
      port,
    });
    const preflight = await fetch(`http://127.0.0.1:${port}/`, {
      method: 'OPTIONS',
      headers: { Origin: ORIGIN, 'Access-Control-Request-Private-Network': 'true' },
    });
    expect(preflight.headers.get('access-control-allow-private-network')).toBe('true');
  });

  it('lists the signing certificates of both tokens, matched to their keys by CKA_ID', async () => {
    const page = await Page.open(port);
    await page.hello();
    const certificates = await listed(page);
    expect(
      certificates.map((entry) => [entry.tokenLabel, entry.keyId, entry.keyAlgorithm]).sort(),
    ).toEqual(
      [
        [rsaToken.label, '01', 'rsa'],
        [ecToken.label, 'a1', 'ec'],
      ].sort(),
    );
    // The encryption-only certificate and the intermediate (no key, a CA) are not offered.
    expect(certificates.find((entry) => entry.keyId === '02')).toBeUndefined();
    expect(certificates[0]!.subject).toMatch(/^CN=/);
    page.close();
  });

  it.each([
    ['RSA-2048', rsaToken],
    ['EC P-256', ecToken],
  ])(
    'signs with the %s key: signature, chain and timestamp verify with openssl',
    async (_, token) => {
      const page = await Page.open(port);
      await page.hello();
      const certificate = (await listed(page)).find((entry) => entry.tokenLabel === token.label)!;
      const document = crypto.randomBytes(2000);
      const digest = crypto.createHash('sha256').update(document).digest();
      const answer = await page.ask(signRequest(certificate, digest));
      if (answer.type !== 'sign.result') throw new Error(JSON.stringify(answer));
      const chain = answer.certificateChain.map((entry) => Buffer.from(entry, 'base64'));
      // Signer, intermediate (from the token or by AIA), root (from the user's folder).
      expect(
        chain.map((der) => new crypto.X509Certificate(der).subject.split('\n').at(-1)),
      ).toEqual([
        expect.stringMatching(/^CN=(Nguyen Van A|Tran Thi B)$/),
        'CN=Test Intermediate',
        'CN=Test Root',
      ]);
      const signature = Buffer.from(answer.signedHash, 'base64');
      const file = (name: string, bytes: Buffer | string) => {
        const at = path.join(work.dir, `${token.label.replace(/\W/g, '')}-${name}`);
        fs.writeFileSync(at, bytes);
        return at;
      };
      // The signature is over the signed attributes (RSA PKCS#1 v1.5, or ECDSA in DER)...
      const signedAttributes = Buffer.from(buildSignedAttributes(digest, chain[0]!));
      const spki = new crypto.X509Certificate(chain[0]!).publicKey.export({
        format: 'der',
        type: 'spki',
      });
      const signatureCheck = opensslVerifies(work.dir, spki, signedAttributes, signature);
      expect(signatureCheck.output).toContain('Verified OK');
      // ...by a certificate whose chain, as the agent built it, leads to the test root.
      const pem = (der: Buffer) => new crypto.X509Certificate(der).toString();
      const chainCheck = attempt('openssl', [
        'verify',
        '-CAfile',
        path.join(work.dir, 'root.pem'),
        '-untrusted',
        file('intermediates.pem', chain.slice(1, -1).map(pem).join('')),
        file('signer.pem', pem(chain[0]!)),
      ]);
      expect(chainCheck.output).toContain(': OK');
      const tsCheck = attempt('openssl', [
        'ts',
        '-verify',
        '-data',
        file('signature.bin', signature),
        '-token_in',
        '-in',
        file('token.der', Buffer.from(answer.timestampToken, 'base64')),
        '-CAfile',
        tsaPki.rootPem,
      ]);
      expect(tsCheck.output).toContain('Verification: OK');
      // The user saw the origin of the handshake, the title, the hash and the certificate.
      const consent = agent.events.filter((event) => event.kind === 'confirmSign').at(-1)!.consent;
      expect(consent).toMatchObject({
        origin: ORIGIN,
        documentTitle: 'Hợp đồng mua bán số 7/2026',
        documentDigestHex: digest.toString('hex'),
        token: { label: token.label },
      });
      page.close();
    },
  );

  it('answers PIN_INCORRECT with what the token says of the tries left', async () => {
    setPolicy({ pins: { [rsaToken.label]: '000000' } });
    const page = await Page.open(port);
    await page.hello();
    const certificate = (await listed(page)).find((entry) => entry.tokenLabel === rsaToken.label)!;
    const answer = await page.ask(signRequest(certificate, crypto.randomBytes(32)));
    expect(answer).toMatchObject({
      type: 'error',
      code: 'PIN_INCORRECT',
      pin: { countLow: true, finalTry: false },
      userMessage: { vi: expect.stringContaining('PIN'), en: expect.stringContaining('PIN') },
    });
    setPolicy({});
    page.close();
  });

  it('answers USER_CANCELLED when the user declines, before any PIN is asked', async () => {
    setPolicy({ confirm: false });
    const asked = agent.events.filter((event) => event.kind === 'askPin').length;
    const page = await Page.open(port);
    await page.hello();
    const certificate = (await listed(page))[0]!;
    expect(await page.ask(signRequest(certificate, crypto.randomBytes(32)))).toMatchObject({
      code: 'USER_CANCELLED',
    });
    expect(agent.events.filter((event) => event.kind === 'askPin')).toHaveLength(asked);
    setPolicy({});
    page.close();
  });

  it('refuses a foreign origin the user does not approve, and remembers one approved', async () => {
    const foreign = await Page.open(port, 'https://evil.example');
    expect(await foreign.receive()).toMatchObject({
      id: null,
      type: 'error',
      code: 'ORIGIN_NOT_ALLOWED',
    });
    expect(await foreign.closedWith).toBe(4003);

    setPolicy({ approveOrigins: ['https://partner.example'] });
    const partner = await Page.open(port, 'https://partner.example');
    await partner.hello();
    partner.close();
    const saved = JSON.parse(fs.readFileSync(settingsFile, 'utf8')) as { allowedOrigins: string[] };
    expect(saved.allowedOrigins).toEqual([ORIGIN, 'https://partner.example']);

    // No Origin header (not a browser page): the handshake itself is refused.
    const bare = new WebSocket(`ws://127.0.0.1:${port}`);
    const status = await new Promise<number>((resolve) =>
      bare.on('unexpected-response', (_, response) => resolve(response.statusCode ?? 0)),
    );
    expect(status).toBe(401);
  });

  it('answers TOKEN_REMOVED for a token pulled out between list and sign, and tells pages', async () => {
    const page = await Page.open(port);
    await page.hello();
    const certificate = (await listed(page)).find((entry) => entry.tokenLabel === ecToken.label)!;
    lab.removeToken(ecToken.label);
    expect(await page.ask(signRequest(certificate, crypto.randomBytes(32)))).toMatchObject({
      code: 'TOKEN_REMOVED',
    });
    const pushed = await page.receive();
    expect(pushed).toMatchObject({ type: 'tokens.changed' });
    expect(pushed.type === 'tokens.changed' && pushed.tokens.map((token) => token.label)).toEqual([
      rsaToken.label,
    ]);
    page.close();
  });

  it('pushes tokens.changed when a token is plugged in while a page is connected', async () => {
    const page = await Page.open(port);
    await page.hello();
    lab.addToken(lateToken);
    const pushed = await page.receive();
    expect(
      pushed.type === 'tokens.changed' && pushed.tokens.map((token) => token.label).sort(),
    ).toEqual([lateToken.label, rsaToken.label].sort());
    expect(pushed.id).toMatch(/^evt-\d+$/);
    page.close();
  });

  it('answers PIN_LOCKED without asking for a PIN when the token reports its PIN locked', async () => {
    // SoftHSM reports the stored flag at once (it never locks a PIN itself: tokenPaths.test.ts).
    lab.setTokenFlags(rsaToken.label, USER_PIN_LOCKED);
    const asked = agent.events.filter((event) => event.kind === 'askPin').length;
    const page = await Page.open(port);
    await page.hello();
    const certificate = (await listed(page)).find((entry) => entry.tokenLabel === rsaToken.label)!;
    expect(await page.ask(signRequest(certificate, crypto.randomBytes(32)))).toMatchObject({
      code: 'PIN_LOCKED',
    });
    expect(agent.events.filter((event) => event.kind === 'askPin')).toHaveLength(asked);
    page.close();
  });

  it('never puts a PIN in a frame on the socket', () => {
    expect(frames.length).toBeGreaterThan(20);
    for (const frame of frames) {
      for (const pin of ALL_PINS) expect(frame).not.toContain(pin);
    }
  });
});
