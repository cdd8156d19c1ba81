import crypto from 'node:crypto';
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import type { AgentMessage } from '@esign/shared';
import type { Session } from 'graphene-pk11';
import WebSocket from 'ws';
import { requestTimestamp } from '../../agent/src/core/timestamp';
import { HeadlessAgent } from '../../agent/test/support/headlessAgent';
import { SoftHsmLab, TestPki, type TestToken } from '../../agent/test/support/testTokens';
import { timestampResponse } from '../../server/src/dev/tsaResponder';
import { softHsmModule, writeAgentSettings } from '../../test/support/tools';
import { median, printColumns } from './figures';

/**
 * Agent bench: on ONE SoftHSM token (temporary SOFTHSM2_CONF) holding an RSA-2048 and an EC
 * P-256 key, in the same run, BENCH_AGENT_SIGNS (200) signs of each:
 * - raw C_Sign: graphene in this process, one session logged in once, the agent's mechanism
 *   (SHA256_RSA_PKCS over 250 bytes, as big as signed attributes; ECDSA over a SHA-256 digest);
 * - raw session: the same with what the agent does per sign on the token, which never keeps a PIN:
 *   open, C_Login, find the key, C_Sign, logout, close;
 * - agent: the headless agent (`--headless`, a policy that admits the origin, auto-consents and
 *   gives the PIN; no ticket) in a child process, one page socket (hello once), the `sign`
 *   request's round trip. The agent always stamps: its TSA is a LOCAL STUB, the server's
 *   RFC 3161 responder on 127.0.0.1 in this process with an RSA-2048 TSA key; the stub's own
 *   round trip (the agent's requestTimestamp against it, same count) is timed beside and
 *   subtracted for the "agent − TSA" column.
 * Overheads are medians' differences, against raw C_Sign and against raw session. Prints
 * figures only; asserts nothing. Runs alone with `node --import tsx scripts/bench/agent.ts`.
 */

const signs = Number(process.env.BENCH_AGENT_SIGNS || 200);
const warmUp = 20;
const PAGE = 'https://bench.esign.example';
const token: TestToken = { label: 'Bench token', pin: '123456', soPin: '87654321' };
const keys = [
  { name: 'RSA-2048', algorithm: 'rsa', id: '01' },
  { name: 'EC P-256', algorithm: 'ec', id: '02' },
] as const;

async function timed(count: number, call: () => Promise<unknown> | unknown): Promise<number> {
  for (let warm = 0; warm < warmUp; warm += 1) await call();
  const times: number[] = [];
  for (let run = 0; run < count; run += 1) {
    const began = performance.now();
    await call();
    times.push(performance.now() - began);
  }
  return median(times);
}

/** The stub TSA: the server's responder, a throw-away TSA certificate, answering on 127.0.0.1. */
async function startStubTsa(pki: TestPki): Promise<{ url: string; close(): Promise<void> }> {
  const tsa = pki.issue('tsa', 'rsa', '/C=VN/O=Bench/CN=Bench TSA', [
    'basicConstraints=CA:FALSE',
    'keyUsage=critical,digitalSignature',
    'extendedKeyUsage=critical,timeStamping',
  ]);
  const privateKey = crypto.createPrivateKey(fs.readFileSync(tsa.keyFile));
  const deps = {
    clock: { now: () => new Date() },
    tsaSigner: {
      certificateChain: [tsa.der],
      sign: async (data: Buffer) => crypto.sign('sha256', data, privateKey),
    },
  };
  const server = http.createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      void timestampResponse(deps, Buffer.concat(chunks)).then((reply) =>
        response.writeHead(200, { 'Content-Type': 'application/timestamp-reply' }).end(reply),
      );
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/tsa`,
    close: () =>
      new Promise((resolve) => {
        server.close(() => resolve());
        // Kept-alive sockets of the timed requests would hold close() open.
        server.closeAllConnections();
      }),
  };
}

/** One page socket: requests answered by id; an error without one (rate, origin) fails all. */
async function pageSocket(port: number) {
  const socket = new WebSocket(`ws://127.0.0.1:${port}`, { origin: PAGE });
  const waiting = new Map<string, (message: AgentMessage) => void>();
  socket.on('message', (data) => {
    const message = JSON.parse(data.toString()) as AgentMessage;
    if (message.id) waiting.get(message.id)?.(message);
    else for (const resolve of waiting.values()) resolve(message);
  });
  await new Promise((resolve, reject) => socket.once('open', resolve).once('error', reject));
  let counter = 0;
  const ask = (request: Record<string, unknown>) =>
    new Promise<AgentMessage>((resolve) => {
      const id = `b${++counter}`;
      waiting.set(id, (message) => {
        waiting.delete(id);
        resolve(message);
      });
      socket.send(JSON.stringify({ id, ...request }));
    });
  return { ask, close: () => socket.close() };
}

export async function benchAgent(): Promise<void> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'esign-bench-agent-'));
  let agent: HeadlessAgent | undefined;
  let tsa: Awaited<ReturnType<typeof startStubTsa>> | undefined;
  let close: (() => void) | undefined;
  try {
    const pki = new TestPki(dir);
    const lab = new SoftHsmLab(path.join(dir, 'softhsm'));
    lab.addToken(token);
    for (const key of keys) {
      const issued = pki.issue(key.id, key.algorithm, `/C=VN/O=Bench/CN=Bench ${key.name}`, [
        'basicConstraints=CA:FALSE',
        'keyUsage=critical,digitalSignature,nonRepudiation',
      ]);
      await lab.addKeyAndCertificates(token, { file: issued.keyFile, id: key.id }, [
        { id: key.id, label: key.name, der: issued.der },
      ]);
    }
    tsa = await startStubTsa(pki);

    // The raw side: graphene in this process on the same token.
    process.env.SOFTHSM2_CONF = lab.config;
    const graphene = await import('graphene-pk11');
    const module = graphene.Module.load(softHsmModule, 'SoftHSM2');
    module.initialize();
    close = () => module.finalize();
    const slot = module.getSlots(true).items(0);
    const openKey = (session: Session, id: string) =>
      session
        .find({ class: graphene.ObjectClass.PRIVATE_KEY, id: Buffer.from(id, 'hex') })
        .items(0)
        .toType<import('graphene-pk11').PrivateKey>();
    const rawSign = (session: Session, key: (typeof keys)[number]) => {
      const privateKey = openKey(session, key.id);
      return key.algorithm === 'rsa'
        ? session.createSign('SHA256_RSA_PKCS', privateKey).once(crypto.randomBytes(250))
        : session
            .createSign('ECDSA', privateKey)
            .once(crypto.createHash('sha256').update(crypto.randomBytes(250)).digest());
    };
    // Logged in only while the raw C_Sign is timed: a login is the process's, for all sessions.
    const held = slot.open(graphene.SessionFlag.SERIAL_SESSION);

    // The agent side: headless, in a child process.
    const settingsFile = writeAgentSettings(dir, tsa.url);
    const policyFile = path.join(dir, 'policy.json');
    fs.writeFileSync(
      policyFile,
      JSON.stringify({
        settingsFile,
        allowedOrigins: [PAGE],
        autoConsent: [{ origins: [PAGE] }],
        pins: [{ pin: { env: 'BENCH_AGENT_PIN' } }],
        requireTicket: false,
      }),
    );
    agent = new HeadlessAgent(policyFile, {
      SOFTHSM2_CONF: lab.config,
      BENCH_AGENT_PIN: token.pin,
    });
    const port = await agent.port;
    const page = await pageSocket(port);
    await page.ask({ type: 'hello', versions: [1] });
    const listed = await page.ask({ type: 'certificates.list' });
    page.close();
    if (listed.type !== 'certificates.list.result') throw new Error(JSON.stringify(listed));
    const stubTsa = await timed(signs, () => requestTimestamp(tsa!.url, crypto.randomBytes(32)));

    const rows = [
      [
        `${signs} signs`,
        'raw C_Sign',
        'raw session',
        'connect+hello',
        'agent sign',
        'stub TSA',
        'agent − TSA',
        'overhead vs C_Sign',
        'vs session',
      ],
    ];
    const ms = (value: number) => `${value.toFixed(2)} ms`;
    for (const key of keys) {
      const certificate = listed.certificates.find((entry) =>
        entry.subject.includes(`Bench ${key.name}`),
      );
      if (!certificate) throw new Error(`no certificate for ${key.name}`);
      held.login(token.pin, graphene.UserType.USER);
      const raw = await timed(signs, () => rawSign(held, key));
      held.logout();
      const session = await timed(signs, () => {
        const opened = slot.open(graphene.SessionFlag.SERIAL_SESSION);
        try {
          opened.login(token.pin, graphene.UserType.USER);
          rawSign(opened, key);
          opened.logout();
        } finally {
          opened.close();
        }
      });
      // A socket per sign (the agent allows a page 10 messages a second): connect and hello
      // timed apart from the sign's round trip.
      const connecting: number[] = [];
      const signing: number[] = [];
      for (let run = 0; run < warmUp + signs; run += 1) {
        const began = performance.now();
        const socket = await pageSocket(port);
        await socket.ask({ type: 'hello', versions: [1] });
        const asked = performance.now();
        const answer = await socket.ask({
          type: 'sign',
          documentDigest: crypto.randomBytes(32).toString('base64'),
          certificateId: certificate.certificateId,
          documentTitle: 'Bench',
          requester: { origin: PAGE, serviceName: 'Bench' },
        });
        const answered = performance.now();
        socket.close();
        if (answer.type !== 'sign.result') throw new Error(JSON.stringify(answer));
        if (run < warmUp) continue;
        connecting.push(asked - began);
        signing.push(answered - asked);
      }
      const viaAgent = median(signing);
      const withoutTsa = viaAgent - stubTsa;
      rows.push([
        key.name,
        ms(raw),
        ms(session),
        ms(median(connecting)),
        ms(viaAgent),
        ms(stubTsa),
        ms(withoutTsa),
        ms(withoutTsa - raw),
        ms(withoutTsa - session),
      ]);
    }
    held.close();
    process.stdout.write(
      `Agent sign round trip (WebSocket, headless agent in a child process, one SoftHSM token; the agent's TSA is a local stub whose median is subtracted; medians; target overhead <= 5 ms):\n`,
    );
    printColumns(rows);
  } finally {
    await agent?.stop();
    close?.();
    await tsa?.close();
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

if (require.main === module) {
  benchAgent().catch((error: unknown) => {
    process.stderr.write(`${error instanceof Error ? (error.stack ?? error.message) : error}\n`);
    process.exit(1);
  });
}
