/**
 * `npm run agent -- --headless --policy FILE`: the core under plain Node, the user replaced by a
 * policy file (origins, consent rules, PIN sources), with a SoftHSM token and an openssl TSA.
 */
import { spawnSync } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { AGENT_ERROR_MESSAGES } from '@esign/shared';
import { startHttpTsa } from '../../test/support/opensslTsa';
import { run, softHsmModule, tempDir, writeAgentSettings } from '../../test/support/tools';
import { askAgent, HeadlessAgent } from './support/headlessAgent';
import { SoftHsmLab, TestPki, type TestToken } from './support/testTokens';

jest.setTimeout(120_000);

const repoRoot = path.resolve(__dirname, '../..');
const PAGE = 'https://esign.example.vn';
const token: TestToken = { label: 'Headless RSA', pin: '424242', soPin: '97531864' };
/** Its PIN goes wrong once in a test: the others keep theirs. */
const triesToken: TestToken = { label: 'Headless Tries', pin: '515151', soPin: '86420975' };

let work: { dir: string; remove(): void };
let lab: SoftHsmLab;
let tsa: { url: string; close(): Promise<void> };
let settingsFile: string;

/** `npm run agent -- <args>` to its end: exit code and what it wrote. */
function runAgentScript(args: string[]) {
  const result = spawnSync('npm', ['run', '-s', 'agent', '--', ...args], {
    cwd: repoRoot,
    encoding: 'utf8',
    env: { ...process.env, SOFTHSM2_CONF: lab.config },
    timeout: 60_000,
  });
  return { status: result.status, output: `${result.stdout}${result.stderr}` };
}

function writePolicy(name: string, policy: Record<string, unknown>, mode = 0o600): string {
  const file = path.join(work.dir, name);
  fs.writeFileSync(file, JSON.stringify({ settingsFile, ...policy }), { mode });
  fs.chmodSync(file, mode);
  return file;
}

const ask = askAgent;

class Headless extends HeadlessAgent {
  constructor(policyFile: string, env: Record<string, string> = {}) {
    super(policyFile, { SOFTHSM2_CONF: lab.config, ...env });
  }
}

function signOf(certificateId: string) {
  return {
    type: 'sign',
    documentDigest: crypto.randomBytes(32).toString('base64'),
    certificateId,
    documentTitle: 'Hợp đồng tự động',
    requester: { origin: PAGE, serviceName: 'ESign' },
  };
}

beforeAll(async () => {
  work = tempDir('esign-headless-');
  tsa = await startHttpTsa();
  const pki = new TestPki(work.dir);
  const signer = pki.issue('headless', 'rsa', '/C=VN/O=Cong ty C/CN=May ky tu dong', [
    'basicConstraints=CA:FALSE',
    'keyUsage=critical,digitalSignature,nonRepudiation',
  ]);
  lab = new SoftHsmLab(path.join(work.dir, 'softhsm'));
  lab.addToken(token);
  await lab.addKeyAndCertificates(token, { file: signer.keyFile, id: '07' }, [
    { id: '07', label: 'signing', der: signer.der },
  ]);
  lab.addToken(triesToken);
  await lab.addKeyAndCertificates(triesToken, { file: signer.keyFile, id: '08' }, [
    { id: '08', label: 'signing', der: signer.der },
  ]);
  settingsFile = writeAgentSettings(work.dir, tsa.url);
}, 120_000);

afterAll(async () => {
  await tsa?.close();
  work?.remove();
});

describe('the headless agent', () => {
  it('starts only with the explicit flag and a policy', () => {
    const noPolicy = runAgentScript(['--headless']);
    expect(noPolicy.status).toBe(2);
    expect(noPolicy.output).toContain('--headless needs --policy FILE');
    const noFlag = runAgentScript(['--policy', writePolicy('p0.json', {})]);
    expect(noFlag.status).toBe(2);
    expect(noFlag.output).toContain('--policy needs --headless');
  });

  it('refuses a policy file readable by others that holds a PIN, and a shared PIN file', () => {
    const open = writePolicy('open.json', { pins: [{ pin: { value: token.pin } }] }, 0o644);
    const refused = runAgentScript(['--headless', '--policy', open]);
    expect(refused.status).toBe(1);
    expect(refused.output).toContain('holds a PIN and is readable by other users (mode 644)');
    const pinFile = path.join(work.dir, 'pin.txt');
    fs.writeFileSync(pinFile, `${token.pin}\n`, { mode: 0o640 });
    const shared = runAgentScript([
      '--headless',
      '--policy',
      writePolicy('shared.json', { pins: [{ pin: { file: pinFile } }] }),
    ]);
    expect(shared.status).toBe(1);
    expect(shared.output).toContain(`${pinFile} holds a PIN and is readable by other users`);
  });

  it('refuses a policy that is not valid, naming the field', () => {
    const bad = runAgentScript([
      '--headless',
      '--policy',
      writePolicy('bad.json', { allowedOrigins: ['http://evil.example'] }),
    ]);
    expect(bad.status).toBe(1);
    expect(bad.output).toMatch(/allowedOrigins\[0\] .*must use https/);
  });

  it('signs for an allowed origin under an auto-consent rule with the PIN from an environment variable', async () => {
    const policy = writePolicy(
      'sign.json',
      {
        allowedOrigins: [PAGE],
        autoConsent: [{ origins: [PAGE], tokenLabel: token.label }],
        pins: [{ tokenLabel: token.label, pin: { env: 'HEADLESS_TEST_PIN' } }],
        requireTicket: false,
      },
      0o644, // no PIN in the file: readable is fine
    );
    const agent = new Headless(policy, { HEADLESS_TEST_PIN: token.pin });
    try {
      const port = await agent.port;
      const [hello, listed] = await ask(port, PAGE, [
        { type: 'hello', versions: [1] },
        { type: 'certificates.list' },
      ]);
      expect(hello?.type).toBe('hello.ok');
      if (listed?.type !== 'certificates.list.result') throw new Error(JSON.stringify(listed));
      const certificateId = listed.certificates.find(
        (c) => c.tokenLabel === token.label,
      )!.certificateId;
      const [, signed] = await ask(port, PAGE, [
        { type: 'hello', versions: [1] },
        signOf(certificateId),
      ]);
      expect(signed).toMatchObject({ type: 'sign.result' });
      expect(agent.log.join('\n')).toContain(`consented: ${PAGE} "Hợp đồng tự động"`);
      // Any other origin is refused: there is nobody to ask.
      const [foreign] = await ask(port, 'https://other.example', [
        { type: 'hello', versions: [1] },
      ]);
      expect(foreign).toMatchObject({ code: 'ORIGIN_NOT_ALLOWED' });
      // The settings file was not rewritten with the policy's origins.
      expect(JSON.parse(fs.readFileSync(settingsFile, 'utf8')).allowedOrigins).toBeUndefined();
    } finally {
      await agent.stop();
    }
  });

  it('declines what no consent rule covers, and requires tickets by default', async () => {
    const policy = writePolicy('decline.json', {
      allowedOrigins: [PAGE],
      autoConsent: [{ origins: [PAGE], tokenLabel: 'Another token' }],
      pins: [{ pin: { value: token.pin } }],
      requireTicket: false,
    });
    const strict = writePolicy('strict.json', {
      allowedOrigins: [PAGE],
      autoConsent: [{ origins: [PAGE] }],
      pins: [{ pin: { value: token.pin } }],
    });
    for (const [file, code] of [
      [policy, 'USER_CANCELLED'],
      [strict, 'TICKET_INVALID'],
    ] as const) {
      const agent = new Headless(file);
      try {
        const port = await agent.port;
        const [, listed] = await ask(port, PAGE, [
          { type: 'hello', versions: [1] },
          { type: 'certificates.list' },
        ]);
        if (listed?.type !== 'certificates.list.result') throw new Error(JSON.stringify(listed));
        const [, answer] = await ask(port, PAGE, [
          { type: 'hello', versions: [1] },
          signOf(listed.certificates.find((c) => c.tokenLabel === token.label)!.certificateId),
        ]);
        expect(answer).toMatchObject({ type: 'error', code });
      } finally {
        await agent.stop();
      }
    }
  });

  it('after a wrong PIN the token reports few tries left: PIN_TRIES_LOW (not USER_CANCELLED) until a person logs in with the right PIN', async () => {
    const pinFile = path.join(work.dir, 'tries.pin');
    fs.writeFileSync(pinFile, '000000\n', { mode: 0o600 });
    const policy = writePolicy('tries.json', {
      allowedOrigins: [PAGE],
      autoConsent: [{ origins: [PAGE], tokenLabel: triesToken.label }],
      pins: [{ tokenLabel: triesToken.label, pin: { file: pinFile } }],
      requireTicket: false,
    });
    const agent = new Headless(policy);
    try {
      const port = await agent.port;
      const signOnTriesToken = async () => {
        const [, listed] = await ask(port, PAGE, [
          { type: 'hello', versions: [1] },
          { type: 'certificates.list' },
        ]);
        if (listed?.type !== 'certificates.list.result') throw new Error(JSON.stringify(listed));
        const certificate = listed.certificates.find((c) => c.tokenLabel === triesToken.label)!;
        const [, answer] = await ask(port, PAGE, [
          { type: 'hello', versions: [1] },
          signOf(certificate.certificateId),
        ]);
        return answer;
      };
      // The policy's PIN is wrong: SoftHSM then reports CKF_USER_PIN_COUNT_LOW.
      expect(await signOnTriesToken()).toMatchObject({
        code: 'PIN_INCORRECT',
        pin: { countLow: true, finalTry: false },
      });
      const refusal = {
        type: 'error',
        code: 'PIN_TRIES_LOW',
        message: `no PIN given to "${triesToken.label}": it reports few tries left after a wrong PIN; log in once by hand with the right PIN (e.g. pkcs11-tool --login --list-objects) to clear it, and check the policy's PIN`,
        userMessage: AGENT_ERROR_MESSAGES.PIN_TRIES_LOW,
        pin: { countLow: true, finalTry: false },
      };
      expect(await signOnTriesToken()).toEqual({ id: 'h1', ...refusal });
      // The right PIN in the file changes nothing: the agent tries no PIN while the flag stands.
      fs.writeFileSync(pinFile, `${triesToken.pin}\n`);
      expect(await signOnTriesToken()).toMatchObject(refusal);
      expect(agent.log.join('\n')).toContain(refusal.message);
      // A person logs in once with the right PIN: the token clears the flag, signing resumes.
      run(
        'pkcs11-tool',
        [
          '--module',
          softHsmModule,
          '--token-label',
          triesToken.label,
          '--login',
          '--pin',
          triesToken.pin,
          '--list-objects',
        ],
        { SOFTHSM2_CONF: lab.config },
      );
      expect(await signOnTriesToken()).toMatchObject({ type: 'sign.result' });
    } finally {
      await agent.stop();
    }
  });
});
