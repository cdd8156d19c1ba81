/**
 * Tokens in the field do not all pair a certificate with a key pair under one CKA_ID. SoftHSM
 * tokens written with OpenSC's pkcs11-tool, as docs/signing-with-a-token.md tells a partner
 * developer, hold only what was written: a private key and a certificate, no public-key object,
 * and SoftHSM hides private keys until login. Through the headless agent:
 * - "Cert And Key": private key and certificate under CKA_ID 01 (no public-key object), and a
 *   certificate whose key is nowhere (CKA_ID 09);
 * - "Other Ids": an RSA key under a1 for the certificate under 01 (matched by CKA_MODULUS and
 *   CKA_PUBLIC_EXPONENT), an EC key under b2 for the certificate under 02 (SoftHSM's EC private
 *   keys expose no CKA_EC_POINT: the one key on the curve, its signature checked);
 * - "EC Pair": an EC key pair under c3 (the public-key object written too) for the certificate
 *   under 05, beside a second EC key under d4 with no certificate, so only the public-key
 *   object tells which key is the certificate's.
 * Every signature is checked with openssl against the certificate. Then the commands of
 * agent/README.md's "A test token" run as written, and the agent with its policy lists the token.
 */
import { spawnSync } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import type { TokenCertificate } from '@esign/shared';
import { buildSignedAttributes } from '@esign/shared/cms';
import { startHttpTsa } from '../../test/support/opensslTsa';
import { opensslVerifies, tempDir, writeAgentSettings } from '../../test/support/tools';
import { askAgent, HeadlessAgent } from './support/headlessAgent';
import { SoftHsmLab, TestPki, type TestToken } from './support/testTokens';

jest.setTimeout(120_000);

const PAGE = 'https://esign.example.vn';
const certAndKey: TestToken = { label: 'Cert And Key', pin: '111111', soPin: '11111111' };
const otherIds: TestToken = { label: 'Other Ids', pin: '222222', soPin: '22222222' };
const ecPair: TestToken = { label: 'EC Pair', pin: '333333', soPin: '33333333' };

let work: { dir: string; remove(): void };
let tsa: { url: string; close(): Promise<void> };
let agent: HeadlessAgent;
let port: number;

const signing = ['basicConstraints=CA:FALSE', 'keyUsage=critical,digitalSignature,nonRepudiation'];

beforeAll(async () => {
  work = tempDir('esign-key-discovery-');
  tsa = await startHttpTsa();
  const pki = new TestPki(work.dir);
  const issue = (name: string, algorithm: 'rsa' | 'ec', cn: string) =>
    pki.issue(name, algorithm, `/C=VN/O=Cong ty D/CN=${cn}`, signing);
  const a = issue('same-id', 'rsa', 'Same Id');
  const orphan = issue('orphan', 'rsa', 'No Key');
  const rsa = issue('other-rsa', 'rsa', 'Other Id RSA');
  const ec = issue('other-ec', 'ec', 'Other Id EC');
  const paired = issue('ec-pair', 'ec', 'EC With Public Key');
  const decoy = issue('ec-decoy', 'ec', 'Decoy');

  const lab = new SoftHsmLab(path.join(work.dir, 'softhsm'));
  for (const token of [certAndKey, otherIds, ecPair]) lab.addToken(token);
  lab.writeWithPkcs11Tool(certAndKey, [
    { type: 'privkey', keyFile: a.keyFile, id: '01' },
    { type: 'cert', der: a.der, id: '01' },
    { type: 'cert', der: orphan.der, id: '09' },
  ]);
  lab.writeWithPkcs11Tool(otherIds, [
    { type: 'privkey', keyFile: rsa.keyFile, id: 'a1' },
    { type: 'cert', der: rsa.der, id: '01' },
    { type: 'privkey', keyFile: ec.keyFile, id: 'b2' },
    { type: 'cert', der: ec.der, id: '02' },
  ]);
  lab.writeWithPkcs11Tool(ecPair, [
    { type: 'privkey', keyFile: decoy.keyFile, id: 'd4' },
    { type: 'privkey', keyFile: paired.keyFile, id: 'c3' },
    { type: 'pubkey', keyFile: paired.keyFile, id: 'c3' },
    { type: 'cert', der: paired.der, id: '05' },
  ]);

  const settingsFile = writeAgentSettings(work.dir, tsa.url);
  const policyFile = path.join(work.dir, 'policy.json');
  fs.writeFileSync(
    policyFile,
    JSON.stringify({
      settingsFile,
      allowedOrigins: [PAGE],
      autoConsent: [{ origins: [PAGE] }],
      pins: [certAndKey, otherIds, ecPair].map((token) => ({
        tokenLabel: token.label,
        pin: { value: token.pin },
      })),
      requireTicket: false,
    }),
    { mode: 0o600 },
  );
  agent = new HeadlessAgent(policyFile, { SOFTHSM2_CONF: lab.config });
  port = await agent.port;
}, 120_000);

afterAll(async () => {
  await agent?.stop();
  await tsa?.close();
  work?.remove();
});

async function listed(): Promise<TokenCertificate[]> {
  const [, answer] = await askAgent(port, PAGE, [
    { type: 'hello', versions: [1] },
    { type: 'certificates.list' },
  ]);
  if (answer?.type !== 'certificates.list.result') throw new Error(JSON.stringify(answer));
  return answer.certificates;
}

const subjectOf = (entry: TokenCertificate) => /CN=([^,]+)/.exec(entry.subject)![1]!;

async function sign(certificate: TokenCertificate) {
  const digest = crypto.randomBytes(32);
  const [, answer] = await askAgent(port, PAGE, [
    { type: 'hello', versions: [1] },
    {
      type: 'sign',
      documentDigest: digest.toString('base64'),
      certificateId: certificate.certificateId,
      documentTitle: 'Hợp đồng thử khóa',
      requester: { origin: PAGE, serviceName: 'ESign' },
    },
  ]);
  return { answer: answer!, digest };
}

describe('a certificate and its private key without a public-key object', () => {
  it('lists every signing certificate, and the log says why each key was not found by CKA_ID', async () => {
    const certificates = await listed();
    expect(
      certificates.map((entry) => [entry.tokenLabel, entry.keyId, subjectOf(entry)]).sort(),
    ).toEqual(
      [
        [certAndKey.label, '01', 'Same Id'],
        // Listed: the private keys of a token that requires login are hidden until the PIN.
        [certAndKey.label, '09', 'No Key'],
        [otherIds.label, '01', 'Other Id RSA'],
        [otherIds.label, '02', 'Other Id EC'],
        [ecPair.label, '05', 'EC With Public Key'],
      ].sort(),
    );
    const log = agent.log.join('\n');
    expect(log).toContain(
      'token "Cert And Key": certificate "CN=No Key,O=Cong ty D,C=VN" (CKA_ID 09) listed without a visible key',
    );
    expect(log).toContain(
      'token "EC Pair": certificate "CN=EC With Public Key,O=Cong ty D,C=VN" (CKA_ID 05) matched to a key by public key',
    );
    // Each is said once, however often pages list.
    await listed();
    const again = agent.log.join('\n');
    expect(again.split('(CKA_ID 09) listed without a visible key').length).toBe(2);
  });

  it.each([
    ['the same CKA_ID', certAndKey.label, 'Same Id', null],
    ['CKA_MODULUS (another CKA_ID)', otherIds.label, 'Other Id RSA', 'public key'],
    ['the one EC key on the curve', otherIds.label, 'Other Id EC', 'only key on the curve'],
    ['the EC public-key object', ecPair.label, 'EC With Public Key', 'public-key object'],
  ])(
    'signs with the key found by %s; openssl verifies the signature with the certificate',
    async (_, tokenLabel, subject, how) => {
      const certificate = (await listed()).find(
        (entry) => entry.tokenLabel === tokenLabel && subjectOf(entry) === subject,
      )!;
      const { answer, digest } = await sign(certificate);
      if (answer.type !== 'sign.result') throw new Error(JSON.stringify(answer));
      const der = Buffer.from(certificate.certificate, 'base64');
      const spki = new crypto.X509Certificate(der).publicKey.export({
        format: 'der',
        type: 'spki',
      });
      const check = opensslVerifies(
        work.dir,
        spki,
        Buffer.from(buildSignedAttributes(digest, der)),
        Buffer.from(answer.signedHash, 'base64'),
      );
      expect(check.output).toContain('Verified OK');
      if (how) {
        expect(agent.log.join('\n')).toContain(
          `token "${tokenLabel}": certificate "CN=${subject},O=Cong ty D,C=VN" (CKA_ID ${certificate.keyId}): private key found by ${how}`,
        );
      }
    },
  );

  it('answers CERTIFICATE_NOT_FOUND for the certificate with no key, and logs it skipped', async () => {
    const orphan = (await listed()).find((entry) => subjectOf(entry) === 'No Key')!;
    const { answer } = await sign(orphan);
    expect(answer).toMatchObject({
      type: 'error',
      code: 'CERTIFICATE_NOT_FOUND',
      message:
        'token "Cert And Key" holds no private key for certificate "CN=No Key,O=Cong ty D,C=VN" (CKA_ID 09): none of its 1 private keys has its CKA_ID or public key',
    });
    expect(agent.log.join('\n')).toContain(
      'sign refused, CERTIFICATE_NOT_FOUND: token "Cert And Key" holds no private key for certificate "CN=No Key',
    );
  });
});

describe('agent/README.md, "A test token"', () => {
  it('makes a token with its commands as written, and the agent with its policy lists the certificate', async () => {
    const readme = fs.readFileSync(path.resolve(__dirname, '../README.md'), 'utf8');
    const section = readme.slice(readme.indexOf('## A test token'));
    const script = /```sh\n([\s\S]*?)```/.exec(section)![1]!;
    const policy = JSON.parse(/```json\n([\s\S]*?)```/.exec(section)![1]!) as Record<
      string,
      unknown
    >;
    const home = path.join(work.dir, 'home');
    fs.mkdirSync(home);
    const made = spawnSync('bash', ['--norc', '-euo', 'pipefail', '-c', script], {
      cwd: home,
      env: { PATH: process.env.PATH ?? '', HOME: home },
      encoding: 'utf8',
    });
    expect({ status: made.status, stderr: made.stderr }).toMatchObject({ status: 0 });
    // Before login: the certificate and the optional public key, no private key.
    expect(made.stdout.split('Certificate Object').length).toBeGreaterThan(2);
    // The README's policy as written, with a settings file of the test's (its own port).
    const settingsFile = writeAgentSettings(home);
    const policyFile = path.join(home, 'policy.json');
    fs.writeFileSync(policyFile, JSON.stringify({ ...policy, settingsFile }));
    const readmeAgent = new HeadlessAgent(policyFile, {
      HOME: home,
      SOFTHSM2_CONF: path.join(home, 'esign-token', 'softhsm2.conf'),
      TEST_TOKEN_PIN: '123456',
    });
    try {
      const [, answer] = await askAgent(await readmeAgent.port, 'http://127.0.0.1:3000', [
        { type: 'hello', versions: [1] },
        { type: 'certificates.list' },
      ]);
      if (answer?.type !== 'certificates.list.result') throw new Error(JSON.stringify(answer));
      expect(answer.certificates.map((entry) => [entry.tokenLabel, entry.subject])).toEqual([
        ['Test Token', 'CN=Nguyen Van Test,C=VN'],
      ]);
    } finally {
      await readmeAgent.stop();
    }
  });
});
