/**
 * A user PIN that really locks, on an openCryptoki 3.8 software token (SoftHSM never locks, see
 * tokenPaths.test.ts). The swtok counts wrong PINs: COUNT_LOW after one, FINAL_TRY after two,
 * LOCKED after three, then C_Login answers CKR_PIN_LOCKED whatever the PIN. Through the agent:
 *
 * - three wrong PINs: PIN_INCORRECT with the tries flags the token reports after each, then
 *   PIN_LOCKED "is now locked" (C_Login's CKR_PIN_INCORRECT, then the flag read after it);
 * - the right PIN on the locked token: PIN_LOCKED "is locked" before consent or PIN (the flag
 *   check before login);
 * - the right PIN typed while another program locks the token: PIN_LOCKED "is locked" after the
 *   PIN window, answered by C_Login's own CKR_PIN_LOCKED.
 *
 * Needs root (it starts pkcsslotd on the system paths openCryptoki is built with) and the
 * opencryptoki package. In CI (CI=true), where .ci/run installs it as root, a missing package,
 * no root or a foreign pkcsslotd FAILS the test; elsewhere the test is skipped, saying why.
 */
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { AGENT_ERROR_MESSAGES, type AgentMessage } from '@esign/shared';
import { tempDir } from '../../test/support/tools';
import { askAgent } from './support/headlessAgent';
import {
  OpenCryptokiLab,
  openCryptokiModule,
  openCryptokiUnavailable,
  runningInCi,
} from './support/openCryptoki';
import { AgentChild, runTsx, TestPki, type TestToken } from './support/testTokens';

jest.setTimeout(60_000);

const ORIGIN = 'https://esign.example.vn';
const token: TestToken = { label: 'Khoa PIN', pin: '246810', soPin: '13579135' };
const WRONG_PIN = '999999';
const CKR_PIN_INCORRECT = 0xa0;
const CKR_PIN_LOCKED = 0xa4;

const unavailable = openCryptokiUnavailable();
const skipped = unavailable !== undefined && !runningInCi();
if (skipped) {
  process.stderr.write(
    `pinLocked.test.ts skipped: ${unavailable} (in CI, CI=true, this is a failure)\n`,
  );
}
const describeIfAvailable = skipped ? describe.skip : describe;

let work: { dir: string; remove(): void };
let lab: OpenCryptokiLab | undefined;
let agent: AgentChild | undefined;
let policyFile: string;
let certificateId: string;

function writePolicy(pin: string, hold: 'askPin'[] = []): void {
  fs.writeFileSync(
    policyFile,
    JSON.stringify({ approveOrigins: [], confirm: true, pins: { [token.label]: pin }, hold }),
  );
}

async function port(): Promise<number> {
  return (await agent!.next((event) => event.event === 'ready')).port as number;
}

async function sign(): Promise<AgentMessage> {
  const request = {
    type: 'sign',
    documentDigest: crypto.randomBytes(32).toString('base64'),
    certificateId,
    documentTitle: 'Hợp đồng số 10/2026',
    requester: { origin: ORIGIN, serviceName: 'ESign' },
  };
  const answers = await askAgent(await port(), ORIGIN, [{ type: 'hello', versions: [1] }, request]);
  return answers[1]!;
}

/** The PIN questions the agent asked since event `from`, as the tries flags it showed. */
const pinQuestions = (from: number) =>
  agent!.events
    .slice(from)
    .filter((event) => event.event === 'prompt' && event.kind === 'askPin')
    .map((event) => {
      const { countLow, finalTry } = event.question as { countLow: boolean; finalTry: boolean };
      return { countLow, finalTry };
    });

const consentPrompts = (from: number) =>
  agent!.events.slice(from).filter((event) => event.kind === 'confirmSign');

describeIfAvailable('a user PIN that locks (openCryptoki software token)', () => {
  beforeAll(async () => {
    if (unavailable) throw new Error(`openCryptoki is required in CI (CI=true): ${unavailable}`);
    work = tempDir('esign-agent-pinlock-');
    const pki = new TestPki(work.dir);
    const issued = pki.issue('khoapin', 'rsa', `/C=VN/CN=${token.label}`, [
      'basicConstraints=CA:FALSE',
      'keyUsage=critical,digitalSignature',
    ]);
    lab = new OpenCryptokiLab();
    await lab.start();
    lab.initToken(token);
    const target = { module: openCryptokiModule, tokenLabel: token.label, pin: token.pin };
    await runTsx(
      path.join(__dirname, 'support/importRsaKey.ts'),
      [JSON.stringify({ ...target, keyFile: issued.keyFile, id: '01' })],
      {},
    );
    await runTsx(
      path.join(__dirname, 'support/writeCertificates.ts'),
      [
        JSON.stringify({
          ...target,
          certificates: [{ id: '01', label: 'signing', der: issued.der.toString('base64') }],
        }),
      ],
      {},
    );

    const settingsFile = path.join(work.dir, 'settings.json');
    fs.writeFileSync(
      settingsFile,
      JSON.stringify({
        allowedOrigins: [ORIGIN],
        pkcs11Modules: [{ label: 'openCryptoki', path: openCryptokiModule }],
        tokenPollIntervalMs: 200,
        // Required before the PIN is asked; never reached, as no signature is made here.
        tsaUrl: 'http://127.0.0.1:9/tsa',
        fetchIssuers: false,
      }),
    );
    policyFile = path.join(work.dir, 'policy.json');
    writePolicy(WRONG_PIN);
    // No SoftHSM here: its configuration variable points at nothing.
    agent = new AgentChild(path.join(work.dir, 'no-softhsm.conf'), {
      settingsFile,
      policyFile,
      intermediateFolders: [],
      ports: [0],
    });
    const [hello, listed] = await askAgent(await port(), ORIGIN, [
      { type: 'hello', versions: [1] },
      { type: 'certificates.list' },
    ]);
    expect(hello?.type).toBe('hello.ok');
    if (listed?.type !== 'certificates.list.result') throw new Error(JSON.stringify(listed));
    const certificate = listed.certificates.find((entry) => entry.tokenLabel === token.label);
    if (!certificate) throw new Error(`${token.label} not listed: ${JSON.stringify(listed)}`);
    certificateId = certificate.certificateId;
  }, 120_000);

  afterAll(async () => {
    // A question still held (a failed test) would keep the agent from stopping.
    if (policyFile) writePolicy(token.pin);
    await agent?.stop();
    await lab?.stop();
    work?.remove();
  });

  it('three wrong PINs: PIN_INCORRECT with count low, then final try, then PIN_LOCKED "is now locked"; the right PIN then "is locked" before consent', async () => {
    writePolicy(WRONG_PIN);
    const from = agent!.events.length;
    expect(await sign()).toMatchObject({
      code: 'PIN_INCORRECT',
      message: `wrong PIN for "${token.label}"`,
      pin: { countLow: true, finalTry: false },
    });
    expect(await sign()).toMatchObject({
      code: 'PIN_INCORRECT',
      pin: { countLow: false, finalTry: true },
    });
    expect(await sign()).toEqual({
      id: expect.any(String),
      type: 'error',
      code: 'PIN_LOCKED',
      message: `the user PIN of "${token.label}" is now locked`,
      userMessage: AGENT_ERROR_MESSAGES.PIN_LOCKED,
      pin: { countLow: false, finalTry: false },
    });
    // What the PIN window showed before each try: the flags the previous one left.
    expect(pinQuestions(from)).toEqual([
      { countLow: false, finalTry: false },
      { countLow: true, finalTry: false },
      { countLow: false, finalTry: true },
    ]);

    writePolicy(token.pin);
    const locked = agent!.events.length;
    expect(await sign()).toEqual({
      id: expect.any(String),
      type: 'error',
      code: 'PIN_LOCKED',
      message: `the user PIN of "${token.label}" is locked`,
      userMessage: AGENT_ERROR_MESSAGES.PIN_LOCKED,
    });
    // The flag check before login answered: no consent asked, no PIN sent to the token.
    expect(consentPrompts(locked)).toEqual([]);
    expect(pinQuestions(locked)).toEqual([]);
  });

  it('the right PIN typed while another program locks the token: C_Login answers CKR_PIN_LOCKED, the agent PIN_LOCKED "is locked"', async () => {
    lab!.resetUserPin(token);
    writePolicy(token.pin, ['askPin']);
    const from = agent!.events.length;
    const answer = sign();
    await agent!.next((event) => agent!.events.indexOf(event) >= from && event.kind === 'askPin');
    // The PIN window is open: the token locks under it, three wrong PINs from pkcsconf.
    for (let attempt = 0; attempt < 3; attempt++) {
      expect(lab!.otherLogin(WRONG_PIN)).toBe(CKR_PIN_INCORRECT);
    }
    expect(lab!.otherLogin(token.pin)).toBe(CKR_PIN_LOCKED);
    writePolicy(token.pin);
    // C_Login's own CKR_PIN_LOCKED: no tries flags (the flag path after a wrong PIN has them).
    expect(await answer).toEqual({
      id: expect.any(String),
      type: 'error',
      code: 'PIN_LOCKED',
      message: `the user PIN of "${token.label}" is locked`,
      userMessage: AGENT_ERROR_MESSAGES.PIN_LOCKED,
    });
    expect(pinQuestions(from)).toEqual([{ countLow: false, finalTry: false }]);
  });
});
