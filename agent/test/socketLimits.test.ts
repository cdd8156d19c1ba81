/**
 * The local server's limits and refusals, against the agent core in a child process with a
 * real SoftHSM token: one sign at a time (BUSY), the request rate (RATE_LIMITED), the frame
 * size (close 1009, the agent serves the next page), versions and malformed messages (the
 * spec'd error frames), port fallback and all ports taken, and an approval revoked the way the
 * settings page does it.
 */
import crypto from 'node:crypto';
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { AGENT_ERROR_MESSAGES, type AgentMessage } from '@esign/shared';
import WebSocket from 'ws';
import { softHsmModule, tempDir } from '../../test/support/tools';
import { AgentChild, SoftHsmLab, TestPki, type TestToken } from './support/testTokens';

jest.setTimeout(60_000);

const ORIGIN = 'https://esign.example.vn';
const PARTNER = 'https://partner.example';
const token: TestToken = { label: 'VNPT-CA Limits', pin: '778899', soPin: '13579135' };

let work: { dir: string; remove(): void };
let lab: SoftHsmLab;
let agent: AgentChild;
let port: number;
let settingsFile: string;
let policyFile: string;

function setPolicy(policy: Record<string, unknown>): void {
  fs.writeFileSync(
    policyFile,
    JSON.stringify({
      approveOrigins: [],
      confirm: true,
      pins: { [token.label]: token.pin },
      ...policy,
    }),
  );
}

/** A page socket that keeps every frame it gets, and how it closed. */
class Page {
  readonly inbox: AgentMessage[] = [];
  private readonly waiting: (() => void)[] = [];
  readonly closed: Promise<number>;
  private counter = 0;

  private constructor(readonly socket: WebSocket) {
    socket.on('message', (data) => {
      this.inbox.push(JSON.parse(data.toString()) as AgentMessage);
      for (const wake of this.waiting.splice(0)) wake();
    });
    this.closed = new Promise((resolve) => socket.on('close', (code) => resolve(code)));
  }

  static async open(origin = ORIGIN, at = port): Promise<Page> {
    const socket = new WebSocket(`ws://127.0.0.1:${at}`, { origin });
    const page = new Page(socket);
    await new Promise((resolve, reject) => socket.once('open', resolve).once('error', reject));
    return page;
  }

  /** The first frame (taken out of the inbox) that `match` accepts. */
  async take(match: (message: AgentMessage) => boolean): Promise<AgentMessage> {
    for (;;) {
      const found = this.inbox.findIndex(match);
      if (found >= 0) return this.inbox.splice(found, 1)[0]!;
      await new Promise<void>((resolve) => this.waiting.push(resolve));
    }
  }

  send(request: Record<string, unknown>): string {
    const id = `s${++this.counter}`;
    this.socket.send(JSON.stringify({ id, ...request }));
    return id;
  }

  ask(request: Record<string, unknown>): Promise<AgentMessage> {
    const id = this.send(request);
    return this.take((message) => message.id === id);
  }

  async hello(): Promise<void> {
    expect((await this.ask({ type: 'hello', versions: [1] })).type).toBe('hello.ok');
  }
}

const errorOf = (code: keyof typeof AGENT_ERROR_MESSAGES, id: string | null, message: unknown) => ({
  id,
  type: 'error',
  code,
  message,
  userMessage: AGENT_ERROR_MESSAGES[code],
});

/** A port nobody listens on now (the system's choice, released at once). */
async function freePort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port: free } = server.address() as net.AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return free;
}

/** Another program holding a port on 127.0.0.1. */
async function occupy(): Promise<{ port: number; release(): Promise<void> }> {
  const server = net.createServer((socket) => socket.destroy());
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    port: (server.address() as net.AddressInfo).port,
    release: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

function startAgent(ports: number[]): AgentChild {
  return new AgentChild(lab.config, { settingsFile, policyFile, intermediateFolders: [], ports });
}

beforeAll(async () => {
  work = tempDir('esign-agent-limits-');
  const pki = new TestPki(work.dir);
  const signer = pki.issue('signer', 'ec', '/C=VN/CN=Le Van C', [
    'basicConstraints=CA:FALSE',
    'keyUsage=critical,digitalSignature',
  ]);
  lab = new SoftHsmLab(path.join(work.dir, 'softhsm'));
  lab.addToken(token);
  await lab.addKeyAndCertificates(token, { file: signer.keyFile, id: '01' }, [
    { id: '01', label: 'signing', der: signer.der },
  ]);
  settingsFile = path.join(work.dir, 'settings.json');
  fs.writeFileSync(
    settingsFile,
    JSON.stringify({
      allowedOrigins: [ORIGIN],
      pkcs11Modules: [{ label: 'SoftHSM2', path: softHsmModule }],
      tokenPollIntervalMs: 500,
      tsaUrl: 'http://127.0.0.1:9/tsa',
      fetchIssuers: false,
    }),
  );
  policyFile = path.join(work.dir, 'policy.json');
  setPolicy({});
  agent = startAgent([0]);
  port = (await agent.next((event) => event.event === 'ready')).port as number;
}, 120_000);

afterAll(async () => {
  await agent?.stop();
  work?.remove();
});

describe('one sign at a time, request rate, frame size', () => {
  it('answers BUSY to a second sign while the first awaits consent; the first goes on', async () => {
    const page = await Page.open();
    await page.hello();
    const listed = await page.ask({ type: 'certificates.list' });
    if (listed.type !== 'certificates.list.result') throw new Error(JSON.stringify(listed));
    const sign = {
      type: 'sign',
      documentDigest: crypto.randomBytes(32).toString('base64'),
      certificateId: listed.certificates[0]!.certificateId,
      documentTitle: 'Hợp đồng',
      requester: { origin: ORIGIN, serviceName: 'ESign' },
    };
    setPolicy({ hold: ['confirmSign'], confirm: false });
    const from = agent.events.length;
    const first = page.send(sign);
    await agent.next(
      (event) => agent.events.indexOf(event) >= from && event.kind === 'confirmSign',
    );
    expect(await page.ask(sign)).toEqual(
      errorOf('BUSY', expect.any(String), 'another sign request is pending'),
    );
    setPolicy({ confirm: false });
    expect(await page.take((message) => message.id === first)).toMatchObject({
      code: 'USER_CANCELLED',
    });
    // Free again: the next sign is not BUSY.
    expect(await page.ask(sign)).toMatchObject({ code: 'USER_CANCELLED' });
    setPolicy({});
    page.socket.close();
  });

  it('answers RATE_LIMITED beyond the burst, and serves the page again a moment later', async () => {
    const page = await Page.open();
    const ids = Array.from({ length: 45 }, () => page.send({ type: 'hello', versions: [1] }));
    const answers = await Promise.all(
      ids.map(() => page.take((message) => message.type === 'hello.ok' || message.id === null)),
    );
    const limited = answers.filter((message) => message.type === 'error');
    // A burst of 30, plus what 10 per second refills while the frames arrive.
    expect(limited.length).toBeGreaterThanOrEqual(10);
    expect(limited.length).toBeLessThanOrEqual(15);
    expect(limited[0]).toEqual(errorOf('RATE_LIMITED', null, 'too many requests'));
    await new Promise((resolve) => setTimeout(resolve, 1000));
    await page.hello();
    page.socket.close();
  });

  it('closes a socket that sends a frame over 64 KiB with 1009, and serves the next page', async () => {
    const page = await Page.open();
    await page.hello();
    page.socket.send(JSON.stringify({ id: 'big', type: 'hello', pad: 'x'.repeat(64 * 1024) }));
    expect(await page.closed).toBe(1009);
    const next = await Page.open();
    await next.hello();
    next.socket.close();
  });
});

describe('versions and malformed messages', () => {
  it('answers UNSUPPORTED_VERSION with the versions it speaks', async () => {
    const page = await Page.open();
    expect(await page.ask({ type: 'hello', versions: [2, 3] })).toEqual({
      ...errorOf('UNSUPPORTED_VERSION', expect.any(String), 'no protocol version in common'),
      supportedVersions: [1],
    });
    page.socket.close();
  });

  it('answers BAD_REQUEST to bad JSON, an unknown type, an answer type, a binary frame, and a request before hello', async () => {
    const page = await Page.open();
    page.socket.send('{"id": "j1", "type": ');
    expect(await page.take(() => true)).toEqual(
      errorOf('BAD_REQUEST', null, 'message is not valid JSON'),
    );
    expect(await page.ask({ type: 'sign.everything' })).toEqual(
      errorOf('BAD_REQUEST', expect.any(String), expect.stringContaining('type')),
    );
    expect(
      await page.ask({
        type: 'hello.ok',
        version: 1,
        agent: { name: 'x', version: '1', platform: 'linux' },
      }),
    ).toEqual(errorOf('BAD_REQUEST', expect.any(String), 'hello.ok is not a request'));
    page.socket.send(Buffer.from('{"id":"b1","type":"hello","versions":[1]}'), { binary: true });
    expect(await page.take(() => true)).toEqual(
      errorOf('BAD_REQUEST', null, 'messages are JSON text'),
    );
    expect(await page.ask({ type: 'certificates.list' })).toEqual(
      errorOf('BAD_REQUEST', expect.any(String), 'hello must come first'),
    );
    // The socket stays open for a good request.
    await page.hello();
    page.socket.close();
  });
});

describe('ports', () => {
  it('binds the next port of its list when the first is taken, and says so in discovery', async () => {
    const taken = await occupy();
    const next = await freePort();
    const second = startAgent([taken.port, next]);
    try {
      const ready = await second.next((event) => event.event !== 'prompt');
      expect(ready).toEqual({ event: 'ready', port: next });
      const discovery = (await (await fetch(`http://127.0.0.1:${next}/`)).json()) as {
        port: number;
      };
      expect(discovery.port).toBe(next);
    } finally {
      await second.stop();
      await taken.release();
    }
  });

  it('fails to start with a clear message when every port is taken', async () => {
    const first = await occupy();
    const second = await occupy();
    const third = startAgent([first.port, second.port]);
    try {
      expect(await third.next((event) => event.event !== 'prompt')).toEqual({
        event: 'failed',
        message: `cannot listen on 127.0.0.1: ports ${first.port}, ${second.port} are all taken (by another program, or an ESign Agent of another user); free one, or set "port" in the settings`,
      });
    } finally {
      await third.stop();
      await first.release();
      await second.release();
    }
  });
});

describe('origin approval revoked from the settings page', () => {
  it('closes the origin’s open sockets, forgets it, and asks again at its next connection', async () => {
    setPolicy({ approveOrigins: [PARTNER] });
    const asked = () =>
      agent.events.filter((event) => event.kind === 'approveOrigin' && event.origin === PARTNER)
        .length;
    const before = asked();
    const partner = await Page.open(PARTNER);
    await partner.hello();
    expect(asked()).toBe(before + 1);
    const other = await Page.open(ORIGIN);
    await other.hello();

    setPolicy({});
    agent.send({ revoke: PARTNER });
    expect(await partner.take(() => true)).toEqual(
      errorOf('ORIGIN_NOT_ALLOWED', null, `${PARTNER} was revoked by the user`),
    );
    expect(await partner.closed).toBe(4003);
    await agent.next((event) => event.event === 'revoked');
    const saved = JSON.parse(fs.readFileSync(settingsFile, 'utf8')) as { allowedOrigins: string[] };
    expect(saved.allowedOrigins).toEqual([ORIGIN]);
    // Other origins keep their sockets.
    await other.hello();
    other.socket.close();

    // Asked again; this time the user says no.
    const again = await Page.open(PARTNER);
    expect(await again.take(() => true)).toEqual(
      errorOf('ORIGIN_NOT_ALLOWED', null, `${PARTNER} is not allowed`),
    );
    expect(await again.closed).toBe(4003);
    expect(asked()).toBe(before + 2);
  });
});
