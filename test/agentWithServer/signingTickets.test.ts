/**
 * Signing tickets end to end: a real server on 127.0.0.1 initiates a usb_token session and
 * publishes its keys; the agent core (child process, SoftHSM token certified by the server's
 * development CA) pins the keys, checks the ticket, signs and stamps with the server's TSA; the
 * answer goes to sign-with-token. Bad, expired, foreign, mismatched and replayed tickets are
 * refused with TICKET_INVALID and a reason.
 */
import { execFileSync } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import type { AgentMessage, TokenCertificate } from '@esign/shared';
import { getRequestListener } from '@hono/node-server';
import WebSocket from 'ws';
import { AgentChild, SoftHsmLab, type TestToken } from '../../agent/test/support/testTokens';
import { developmentCa } from '../../server/src/dev/developmentCa';
import { issueAgentTicket } from '../../server/src/sessions/agentTickets';
import { dataOf, openSessionWorld, type SessionWorld } from '../../server/test/sessions/world';
import { softHsmModule, tempDir } from '../support/tools';

jest.setTimeout(120_000);

const PAGE = 'https://app.esign.example';
const token: TestToken = { label: 'VNPT-CA Ticket', pin: '135246', soPin: '97531864' };
const signer = { name: 'Nguyễn Văn Ánh', email: 'anh@partner.example', order: 1 };

let work: { dir: string; remove(): void };
let server: http.Server;
let serverOrigin: string;
let world: SessionWorld;
let agent: AgentChild;
let startAgent: () => AgentChild;
let port: number;
let policyFile: string;
let settingsFile: string;

/** A page's socket to the agent: one request at a time, answers by id. */
async function connect(origin = PAGE) {
  const socket = new WebSocket(`ws://127.0.0.1:${port}`, { origin });
  const inbox: AgentMessage[] = [];
  const waiting: ((message: AgentMessage) => void)[] = [];
  socket.on('message', (data) => {
    const message = JSON.parse(data.toString()) as AgentMessage;
    const waiter = waiting.shift();
    if (waiter) waiter(message);
    else inbox.push(message);
  });
  await new Promise((resolve, reject) => socket.once('open', resolve).once('error', reject));
  let counter = 0;
  const ask = async (request: Record<string, unknown>): Promise<AgentMessage> => {
    const id = `t${++counter}`;
    socket.send(JSON.stringify({ id, ...request }));
    for (;;) {
      const message =
        inbox.shift() ?? (await new Promise<AgentMessage>((resolve) => waiting.push(resolve)));
      if (message.id === id) return message;
    }
  };
  await ask({ type: 'hello', versions: [1] });
  const listed = await ask({ type: 'certificates.list' });
  if (listed.type !== 'certificates.list.result') throw new Error(JSON.stringify(listed));
  return { ask, certificate: listed.certificates[0]!, close: () => socket.close() };
}

function signRequest(
  certificate: TokenCertificate,
  started: { sessionId: string; contractHash: string; ticket: string },
  overrides: Record<string, unknown> = {},
) {
  return {
    type: 'sign',
    documentDigest: Buffer.from(started.contractHash.slice('sha256:'.length), 'hex').toString(
      'base64',
    ),
    certificateId: certificate.certificateId,
    documentTitle: 'Hợp đồng dịch vụ',
    requester: { origin: PAGE, serviceName: 'ESign', sessionId: started.sessionId },
    ticket: started.ticket,
    ...overrides,
  };
}

interface Started {
  sessionId: string;
  contractHash: string;
  tsaUrl: string;
  ticket: string;
  expiresAt: string;
}

async function startSession(): Promise<Started> {
  const contractId = await world.sentContract([signer]);
  return dataOf<Started>(await world.initiate(contractId, signer.email, 'usb_token'));
}

function setPins(pin: string) {
  fs.writeFileSync(
    policyFile,
    JSON.stringify({ approveOrigins: [], confirm: true, pins: { [token.label]: pin } }),
  );
}

beforeAll(async () => {
  work = tempDir('esign-agent-tickets-');
  // The server listens first, so that its PUBLIC_URL (the tickets' issuer) has the real port.
  let handle: http.RequestListener = (_, response) => response.writeHead(503).end();
  server = http.createServer((request, response) => handle(request, response));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  serverOrigin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  world = await openSessionWorld({ PUBLIC_URL: serverOrigin, APP_URL: `${PAGE}/app` });
  handle = getRequestListener((request) => {
    world.tick();
    return world.h.app.fetch(request);
  });

  // A token key certified by the server's development CA, which the server trusts.
  const keyFile = path.join(work.dir, 'signer.key');
  execFileSync('openssl', [
    'genpkey',
    '-algorithm',
    'EC',
    '-pkeyopt',
    'ec_paramgen_curve:P-256',
    '-out',
    keyFile,
  ]);
  const spki = execFileSync('openssl', ['pkey', '-in', keyFile, '-pubout', '-outform', 'DER']);
  const ca = await developmentCa(world.h.deps);
  const certificate = await ca.issue(
    { kind: 'signer', name: signer.name, email: signer.email, organization: 'Đối tác ACME' },
    spki,
  );
  const lab = new SoftHsmLab(path.join(work.dir, 'softhsm'));
  lab.addToken(token);
  await lab.addKeyAndCertificates(token, { file: keyFile, id: '01' }, [
    { id: '01', label: 'signing', der: certificate },
  ]);
  const folder = path.join(work.dir, 'intermediates');
  fs.mkdirSync(folder);
  fs.writeFileSync(path.join(folder, 'development-ca.pem'), ca.certificatePem);

  settingsFile = path.join(work.dir, 'settings.json');
  fs.writeFileSync(
    settingsFile,
    JSON.stringify({
      allowedOrigins: [PAGE, 'https://partner.example'],
      pkcs11Modules: [{ label: 'SoftHSM2', path: softHsmModule }],
      tokenPollIntervalMs: 500,
      ticketServers: [serverOrigin],
      requireTicket: true,
    }),
  );
  policyFile = path.join(work.dir, 'policy.json');
  setPins(token.pin);
  startAgent = () =>
    new AgentChild(lab.config, {
      settingsFile,
      policyFile,
      intermediateFolders: [folder],
      ports: [0],
    });
  agent = startAgent();
  port = (await agent.next((event) => event.event === 'ready')).port as number;
});

afterAll(async () => {
  await agent?.stop();
  await new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve()));
  await world?.close();
  work?.remove();
});

const refusal = (reason: RegExp) => ({
  type: 'error',
  code: 'TICKET_INVALID',
  message: expect.stringMatching(reason),
  userMessage: { vi: expect.any(String), en: expect.any(String) },
});

describe('signing tickets checked by the agent', () => {
  it('signs with a good ticket (after a wrong PIN, the same ticket again), pins the server key, and sign-with-token accepts the answer', async () => {
    const started = await startSession();
    const page = await connect();
    setPins('000000');
    expect(await page.ask(signRequest(page.certificate, started))).toMatchObject({
      code: 'PIN_INCORRECT',
    });
    setPins(token.pin);
    const answer = await page.ask(signRequest(page.certificate, started));
    if (answer.type !== 'sign.result') throw new Error(JSON.stringify(answer));
    const pinned = JSON.parse(fs.readFileSync(settingsFile, 'utf8')) as {
      pinnedTicketKeys: Record<string, { kid: string }[]>;
    };
    expect(pinned.pinnedTicketKeys[serverOrigin]).toHaveLength(2);

    const accepted = await dataOf<{ contractStatus: string; certificateInfo: { subject: string } }>(
      await world.step(started.sessionId, 'sign-with-token', {
        signedHash: answer.signedHash,
        certificateChain: answer.certificateChain,
        timestampToken: answer.timestampToken,
      }),
    );
    expect(accepted.contractStatus).toBe('completed');
    expect(accepted.certificateInfo.subject).toContain(signer.name);

    // The same ticket once more: a replay.
    expect(await page.ask(signRequest(page.certificate, started))).toMatchObject(
      refusal(/replayed nonce/),
    );
    page.close();
  });

  it('refuses a ticket replayed after the agent restarts: spent nonces are kept beside the settings', async () => {
    const started = await startSession();
    const page = await connect();
    expect((await page.ask(signRequest(page.certificate, started))).type).toBe('sign.result');
    page.close();

    await agent.stop();
    const spentFile = path.join(path.dirname(settingsFile), 'spent-tickets.json');
    expect(fs.statSync(spentFile).mode & 0o777).toBe(0o600);
    const nonce = (
      JSON.parse(Buffer.from(started.ticket.split('.')[1]!, 'base64url').toString('utf8')) as {
        nonce: string;
      }
    ).nonce;
    const stored = JSON.parse(fs.readFileSync(spentFile, 'utf8')) as {
      spent: Record<string, number>;
    };
    expect(Object.keys(stored.spent)).toContain(`${serverOrigin} ${nonce}`);

    agent = startAgent();
    port = (await agent.next((event) => event.event === 'ready')).port as number;
    const again = await connect();
    expect(await again.ask(signRequest(again.certificate, started))).toMatchObject(
      refusal(/replayed nonce/),
    );
    again.close();
  });

  it('refuses a ticket with a bad signature', async () => {
    const started = await startSession();
    const [header, payload, signature] = started.ticket.split('.') as [string, string, string];
    const flipped = `${signature.slice(0, 10)}${signature[10] === 'A' ? 'B' : 'A'}${signature.slice(11)}`;
    const page = await connect();
    expect(
      await page.ask(
        signRequest(page.certificate, { ...started, ticket: `${header}.${payload}.${flipped}` }),
      ),
    ).toMatchObject(refusal(/bad signature/));
    page.close();
  });

  it('refuses an expired ticket', async () => {
    const started = await startSession();
    const expired = await issueAgentTicket(world.h.deps, {
      origin: PAGE,
      sessionId: started.sessionId,
      contractHash: started.contractHash,
      tsaUrl: started.tsaUrl,
      expiresAt: new Date(Date.now() - 5 * 60_000),
    });
    const page = await connect();
    expect(
      await page.ask(signRequest(page.certificate, { ...started, ticket: expired })),
    ).toMatchObject(refusal(/expired/));
    page.close();
  });

  it('refuses a ticket issued for another page origin', async () => {
    const started = await startSession();
    const page = await connect('https://partner.example');
    expect(
      await page.ask(
        signRequest(page.certificate, started, {
          requester: { origin: 'https://partner.example', serviceName: 'ESign' },
        }),
      ),
    ).toMatchObject(
      refusal(/is for the page https:\/\/app\.esign\.example, not https:\/\/partner\.example/),
    );
    page.close();
  });

  it('refuses a ticket for another document hash', async () => {
    const started = await startSession();
    const page = await connect();
    expect(
      await page.ask(
        signRequest(page.certificate, started, {
          documentDigest: crypto.randomBytes(32).toString('base64'),
        }),
      ),
    ).toMatchObject(refusal(/another document/));
    page.close();
  });

  it('refuses a sign without a ticket when the settings require one, before any prompt', async () => {
    const prompts = agent.events.filter((event) => event.event === 'prompt').length;
    const started = await startSession();
    const page = await connect();
    const { ticket: _, ...request } = signRequest(page.certificate, started);
    expect(await page.ask(request)).toMatchObject(refusal(/missing/));
    expect(agent.events.filter((event) => event.event === 'prompt')).toHaveLength(prompts);
    page.close();
  });
});
