/**
 * The agent's token paths that the happy path never takes, on real SoftHSM2 tokens:
 *
 * - Locked PIN. SoftHSM 2.6 never locks a PIN: a wrong one answers CKR_PIN_INCORRECT and sets
 *   CKF_USER_PIN_COUNT_LOW however often it comes, never CKF_USER_PIN_LOCKED or
 *   CKR_PIN_LOCKED (asserted below). What it does is report the flags stored in its token
 *   file, so the tests set CKF_USER_PIN_LOCKED there: (a) before the request, the flag check
 *   before login answers PIN_LOCKED without consent or PIN; (b) while the PIN window is open,
 *   C_Login's CKR_PIN_INCORRECT is followed by the flag read after it, which answers PIN_LOCKED.
 *   C_Login returning CKR_PIN_LOCKED itself (hardware tokens) cannot be produced with SoftHSM.
 * - Mechanisms: a module's `avoidMechanisms` setting (RSA signs through CKM_RSA_PKCS over a
 *   DigestInfo, verified with openssl; EC with CKM_ECDSA avoided is MECHANISM_UNSUPPORTED), and
 *   a key whose CKA_ALLOWED_MECHANISMS makes SoftHSM refuse the advertised CKM_SHA256_RSA_PKCS at
 *   C_SignInit: the agent signs with CKM_RSA_PKCS instead.
 */
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { AGENT_ERROR_MESSAGES, type AgentMessage, type TokenCertificate } from '@esign/shared';
import { buildSignedAttributes } from '@esign/shared/cms';
import WebSocket from 'ws';
import { startHttpTsa } from '../../test/support/opensslTsa';
import { attempt, softHsmModule, tempDir } from '../../test/support/tools';
import { AgentChild, SoftHsmLab, TestPki, type TestToken } from './support/testTokens';

jest.setTimeout(60_000);

const ORIGIN = 'https://esign.example.vn';
const SO_PIN = '13579135';
const lockedBefore: TestToken = { label: 'Locked Before', pin: '112233', soPin: SO_PIN };
const lockedDuring: TestToken = { label: 'Locked During', pin: '223344', soPin: SO_PIN };
const restricted: TestToken = { label: 'Old Firmware', pin: '334455', soPin: SO_PIN };
const avoidingRsa: TestToken = { label: 'ePass2003 RSA', pin: '445566', soPin: SO_PIN };
const avoidingEc: TestToken = { label: 'ePass2003 EC', pin: '556677', soPin: SO_PIN };
const USER_PIN_LOCKED = 0x40000;
const CKM_RSA_PKCS = 0x1;

let work: { dir: string; remove(): void };
let pki: TestPki;
/** Two labs, one agent each: the avoid list applies to every token of a module. */
let plainLab: SoftHsmLab;
let avoidLab: SoftHsmLab;
let plainAgent: AgentChild;
let avoidAgent: AgentChild;
const keyFiles = new Map<string, string>();
const certificates = new Map<string, Buffer>();

function writePolicy(file: string, policy: Record<string, unknown>): void {
  const pins = Object.fromEntries(
    [lockedBefore, lockedDuring, restricted, avoidingRsa, avoidingEc].map((t) => [t.label, t.pin]),
  );
  fs.writeFileSync(file, JSON.stringify({ approveOrigins: [], confirm: true, pins, ...policy }));
}

async function startAgent(
  lab: SoftHsmLab,
  name: string,
  avoidMechanisms: string[],
): Promise<AgentChild> {
  const settingsFile = path.join(work.dir, `${name}-settings.json`);
  fs.writeFileSync(
    settingsFile,
    JSON.stringify({
      allowedOrigins: [ORIGIN],
      pkcs11Modules: [{ label: 'SoftHSM2', path: softHsmModule, avoidMechanisms }],
      tokenPollIntervalMs: 200,
      tsaUrl: tsa.url,
      fetchIssuers: false,
    }),
  );
  const policyFile = path.join(work.dir, `${name}-policy.json`);
  writePolicy(policyFile, {});
  const agent = new AgentChild(lab.config, {
    settingsFile,
    policyFile,
    intermediateFolders: [],
    ports: [0],
  });
  await agent.next((event) => event.event === 'ready');
  return agent;
}

/** The policy of the agent without avoided mechanisms (the PIN tests change its answers). */
const plainPolicyFile = () => path.join(work.dir, 'plain-policy.json');

async function portOf(agent: AgentChild): Promise<number> {
  return (await agent.next((event) => event.event === 'ready')).port as number;
}

/** One page socket: hello, the certificate of `token`, then the requests the test sends. */
async function pageFor(agent: AgentChild, token: TestToken) {
  const socket = new WebSocket(`ws://127.0.0.1:${await portOf(agent)}`, { origin: ORIGIN });
  const inbox: AgentMessage[] = [];
  const waiting: (() => void)[] = [];
  socket.on('message', (data) => {
    inbox.push(JSON.parse(data.toString()) as AgentMessage);
    waiting.shift()?.();
  });
  await new Promise((resolve, reject) => socket.once('open', resolve).once('error', reject));
  let counter = 0;
  const ask = async (request: Record<string, unknown>): Promise<AgentMessage> => {
    const id = `p${++counter}`;
    socket.send(JSON.stringify({ id, ...request }));
    for (;;) {
      const found = inbox.findIndex((message) => message.id === id);
      if (found >= 0) return inbox.splice(found, 1)[0]!;
      await new Promise<void>((resolve) => waiting.push(resolve));
    }
  };
  await ask({ type: 'hello', versions: [1] });
  const listed = await ask({ type: 'certificates.list' });
  if (listed.type !== 'certificates.list.result') throw new Error(JSON.stringify(listed));
  const certificate = listed.certificates.find((entry) => entry.tokenLabel === token.label);
  if (!certificate) throw new Error(`${token.label} not listed: ${JSON.stringify(listed)}`);
  return { ask, certificate, close: () => socket.close() };
}

function signRequest(certificate: TokenCertificate, digest: Buffer) {
  return {
    type: 'sign',
    documentDigest: digest.toString('base64'),
    certificateId: certificate.certificateId,
    documentTitle: 'Hợp đồng số 9/2026',
    requester: { origin: ORIGIN, serviceName: 'ESign' },
  };
}

/** Prompts the agent showed for a token since `from` (an index in its events). */
const promptsFor = (agent: AgentChild, token: TestToken, from: number) =>
  agent.events.slice(from).filter((event) => {
    if (event.event !== 'prompt') return false;
    const about = (event.consent ?? event.question) as { token: { label: string } };
    return about.token.label === token.label;
  });

let tsa: { url: string; close(): Promise<void> };

beforeAll(async () => {
  work = tempDir('esign-agent-paths-');
  pki = new TestPki(work.dir);
  const signing = ['basicConstraints=CA:FALSE', 'keyUsage=critical,digitalSignature'];
  for (const token of [lockedBefore, lockedDuring, restricted, avoidingRsa]) {
    const name = token.label.replace(/\W/g, '').toLowerCase();
    const issued = pki.issue(name, 'rsa', `/C=VN/CN=${token.label}`, signing);
    keyFiles.set(token.label, issued.keyFile);
    certificates.set(token.label, issued.der);
  }
  const ec = pki.issue('epassec', 'ec', `/C=VN/CN=${avoidingEc.label}`, signing);
  keyFiles.set(avoidingEc.label, ec.keyFile);
  certificates.set(avoidingEc.label, ec.der);

  plainLab = new SoftHsmLab(path.join(work.dir, 'plain'));
  avoidLab = new SoftHsmLab(path.join(work.dir, 'avoid'));
  const certificateOf = (token: TestToken) => [
    { id: '01', label: 'signing', der: certificates.get(token.label)! },
  ];
  for (const [lab, token] of [
    [plainLab, lockedBefore],
    [plainLab, lockedDuring],
    [avoidLab, avoidingRsa],
    [avoidLab, avoidingEc],
  ] as const) {
    lab.addToken(token);
    await lab.addKeyAndCertificates(
      token,
      { file: keyFiles.get(token.label)!, id: '01' },
      certificateOf(token),
    );
  }
  plainLab.addToken(restricted);
  await plainLab.addRestrictedKey(
    restricted,
    { file: keyFiles.get(restricted.label)!, id: '01' },
    [CKM_RSA_PKCS],
    'SHA256_RSA_PKCS',
  );
  await plainLab.addKeyAndCertificates(restricted, null, certificateOf(restricted));

  tsa = await startHttpTsa();
  plainAgent = await startAgent(plainLab, 'plain', []);
  avoidAgent = await startAgent(avoidLab, 'avoid', ['CKM_SHA256_RSA_PKCS', 'CKM_ECDSA']);
}, 120_000);

afterAll(async () => {
  await plainAgent?.stop();
  await avoidAgent?.stop();
  await tsa?.close();
  work?.remove();
});

/** Signs through the agent and checks the RSA signature with openssl over the attributes. */
async function signAndVerifyRsa(agent: AgentChild, token: TestToken): Promise<Buffer> {
  const page = await pageFor(agent, token);
  const digest = crypto.randomBytes(32);
  const answer = await page.ask(signRequest(page.certificate, digest));
  page.close();
  if (answer.type !== 'sign.result') throw new Error(JSON.stringify(answer));
  const signature = Buffer.from(answer.signedHash, 'base64');
  const attributes = Buffer.from(buildSignedAttributes(digest, certificates.get(token.label)!));
  const file = (name: string, bytes: Buffer | string) => {
    const at = path.join(work.dir, `${token.label.replace(/\W/g, '')}-${name}`);
    fs.writeFileSync(at, bytes);
    return at;
  };
  const publicKey = new crypto.X509Certificate(certificates.get(token.label)!).publicKey;
  const verified = attempt('openssl', [
    'pkeyutl',
    '-verify',
    '-pubin',
    '-inkey',
    file('public.pem', publicKey.export({ type: 'spki', format: 'pem' })),
    '-in',
    file('attributes.sha256', crypto.createHash('sha256').update(attributes).digest()),
    '-sigfile',
    file('signature.bin', signature),
    '-pkeyopt',
    'digest:sha256',
  ]);
  expect(verified.output).toContain('Signature Verified Successfully');
  // PKCS#1 v1.5 is deterministic: the same bytes CKM_SHA256_RSA_PKCS would have produced.
  const expected = crypto.sign('sha256', attributes, fs.readFileSync(keyFiles.get(token.label)!));
  expect(signature.equals(expected)).toBe(true);
  return signature;
}

describe('locked PIN (SoftHSM reports stored flags, never locks by itself)', () => {
  it('SoftHSM never locks: ten wrong PINs are ten PIN_INCORRECT with "few tries left", then the right PIN signs', async () => {
    const policyFile = plainPolicyFile();
    writePolicy(policyFile, { pins: { [lockedDuring.label]: '999999' } });
    const page = await pageFor(plainAgent, lockedDuring);
    for (let attempt = 0; attempt < 10; attempt++) {
      expect(await page.ask(signRequest(page.certificate, crypto.randomBytes(32)))).toMatchObject({
        code: 'PIN_INCORRECT',
        pin: { countLow: true, finalTry: false },
      });
    }
    page.close();
    writePolicy(policyFile, {});
    await signAndVerifyRsa(plainAgent, lockedDuring);
  });

  it('flag before login: a token reporting CKF_USER_PIN_LOCKED answers PIN_LOCKED, vi and en, without consent or PIN', async () => {
    plainLab.setTokenFlags(lockedBefore.label, USER_PIN_LOCKED);
    const from = plainAgent.events.length;
    const page = await pageFor(plainAgent, lockedBefore);
    expect(await page.ask(signRequest(page.certificate, crypto.randomBytes(32)))).toEqual({
      id: expect.any(String),
      type: 'error',
      code: 'PIN_LOCKED',
      message: `the user PIN of "${lockedBefore.label}" is locked`,
      userMessage: AGENT_ERROR_MESSAGES.PIN_LOCKED,
    });
    expect(promptsFor(plainAgent, lockedBefore, from)).toEqual([]);
    page.close();
  });

  it('flag after C_Login: a wrong PIN after which the token reports CKF_USER_PIN_LOCKED answers PIN_LOCKED with its tries flags', async () => {
    const policyFile = plainPolicyFile();
    writePolicy(policyFile, { pins: { [lockedDuring.label]: '999999' }, hold: ['askPin'] });
    const from = plainAgent.events.length;
    const page = await pageFor(plainAgent, lockedDuring);
    const answer = page.ask(signRequest(page.certificate, crypto.randomBytes(32)));
    const asked = await plainAgent.next(
      (event) => plainAgent.events.indexOf(event) >= from && event.kind === 'askPin',
    );
    expect(asked.question).toMatchObject({ token: { label: lockedDuring.label } });
    // The token locks on this try: what a hardware token does at its last wrong PIN.
    plainLab.setTokenFlags(lockedDuring.label, USER_PIN_LOCKED);
    writePolicy(policyFile, { pins: { [lockedDuring.label]: '999999' } });
    expect(await answer).toMatchObject({
      type: 'error',
      code: 'PIN_LOCKED',
      message: `the user PIN of "${lockedDuring.label}" is now locked`,
      userMessage: AGENT_ERROR_MESSAGES.PIN_LOCKED,
      pin: { countLow: true, finalTry: false },
    });
    writePolicy(policyFile, {});
    page.close();
  });
});

describe('signature mechanisms', () => {
  it('signs with CKM_RSA_PKCS over a DigestInfo when the module avoids CKM_SHA256_RSA_PKCS', async () => {
    await signAndVerifyRsa(avoidAgent, avoidingRsa);
  });

  it('answers MECHANISM_UNSUPPORTED, vi and en, for an EC key when the module avoids CKM_ECDSA, before consent', async () => {
    const from = avoidAgent.events.length;
    const page = await pageFor(avoidAgent, avoidingEc);
    expect(await page.ask(signRequest(page.certificate, crypto.randomBytes(32)))).toEqual({
      id: expect.any(String),
      type: 'error',
      code: 'MECHANISM_UNSUPPORTED',
      message:
        'the token offers none of CKM_ECDSA, CKM_ECDSA_SHA256 for this EC key (the settings avoid CKM_SHA256_RSA_PKCS, CKM_ECDSA)',
      userMessage: AGENT_ERROR_MESSAGES.MECHANISM_UNSUPPORTED,
    });
    expect(promptsFor(avoidAgent, avoidingEc, from)).toEqual([]);
    page.close();
  });

  it('retries with CKM_RSA_PKCS when C_SignInit refuses the advertised CKM_SHA256_RSA_PKCS', async () => {
    await signAndVerifyRsa(plainAgent, restricted);
  });
});
