import crypto from 'node:crypto';
import { contractPdf } from '../contracts/fixtures';
import {
  addProcess,
  type World as DossierWorld,
  openWorld,
  partnerToken,
} from '../dossiers/fixtures';
import { parseMail } from '../notify/support';
import { openTask } from '../support/dossiers';
import { codeOf, dataOf, json, openSessionWorld, type SessionWorld, signingPath } from './world';

jest.setTimeout(180_000);

/**
 * One-time codes are limited per signer across sessions, through the API with the development
 * SMS outbox: at most 5 codes sent per signer in any hour, at most 10 wrong codes in any 24
 * hours; opening a new session (initiate, the invitation link, a task's signing session) resets
 * neither. Both limits answer 429 with Retry-After.
 */

const minute = 60_000;

describe('a contract signer', () => {
  let world: SessionWorld;
  beforeAll(async () => {
    world = await openSessionWorld();
  });
  afterAll(() => world?.close());

  const signers = [
    { name: 'Nguyễn Văn Ánh', email: 'anh@partner.example', phone: '0912345678', order: 1 },
  ];

  async function newSession(contractId: string): Promise<string> {
    return (
      await dataOf<{ sessionId: string }>(
        await world.initiate(contractId, 'anh@partner.example', 'otp_sms'),
      )
    ).sessionId;
  }

  /** The e-mailed invitation link's token of the contract's signer. */
  async function invitationToken(): Promise<string> {
    await world.deliver();
    const mail = world.smtp.received.filter((m) => m.to.includes('anh@partner.example')).at(-1);
    const text = parseMail(mail!.raw).text ?? '';
    return /\/ky-so\/([A-Za-z0-9_-]{43})\b/.exec(text)![1]!;
  }

  /** A session opened from the invitation link, as the audit did: no partner credential. */
  async function invitationSession(token: string): Promise<{ sessionId: string; page: string }> {
    world.tick();
    const started = await dataOf<{ sessionId: string; pageCredential: string }>(
      await world.h.request('POST', `${signingPath}/invitation/session`, {
        json: { token, signingMethod: 'otp_sms' },
      }),
    );
    return { sessionId: started.sessionId, page: started.pageCredential };
  }

  async function smsCount(): Promise<number> {
    const rows = await world.h.deps.db
      .selectFrom('notify_outbox')
      .select('id')
      .where('channel', '=', 'sms')
      .execute();
    return rows.length;
  }

  it('codes sent: the sixth in an hour is refused (429 OTP_SEND_LIMIT_REACHED, Retry-After), new sessions or not, no SMS', async () => {
    const id = await world.sentContract(signers);
    const statuses: number[] = [];
    // Five codes over three sessions, a minute and a bit apart (each session's own resend rule).
    for (let i = 0; i < 5; i++) {
      const sessionId = i % 2 === 0 ? await newSession(id) : undefined;
      const current = sessionId ?? (await lastSessionId());
      statuses.push((await world.step(current, 'send-otp')).status);
      world.h.clock.advance(minute + 1000);
    }
    expect(statuses).toEqual([200, 200, 200, 200, 200]);
    const sent = await smsCount();

    const fresh = await newSession(id);
    const refused = await world.step(fresh, 'send-otp');
    expect(await codeOf(refused.clone())).toEqual({ status: 429, code: 'OTP_SEND_LIMIT_REACHED' });
    // The first code leaves the hour 60 min after it was sent: that is the wait announced.
    const first = await world.h.deps.db
      .selectFrom('otp_events')
      .select('at')
      .where('kind', '=', 'sent')
      .orderBy('at')
      .executeTakeFirstOrThrow();
    const elapsed = world.h.clock.now().getTime() - Date.parse(first.at);
    expect(Number(refused.headers.get('retry-after'))).toBe(
      Math.ceil((60 * minute - elapsed) / 1000),
    );
    expect(await smsCount()).toBe(sent);

    // Once the first code is an hour old, one more may go (in a new session: the last expired).
    world.h.clock.advance(Number(refused.headers.get('retry-after')) * 1000);
    expect((await world.step(await newSession(id), 'send-otp')).status).toBe(200);
    expect(await smsCount()).toBe(sent + 1);
  });

  async function lastSessionId(): Promise<string> {
    const row = await world.h.deps.db
      .selectFrom('signing_sessions')
      .select('public_id')
      .orderBy('id', 'desc')
      .executeTakeFirstOrThrow();
    return row.public_id;
  }

  it('wrong codes: 10 in 24 hours whatever the session; then every try, the right code included, and every send is 429 OTP_FAILURE_LIMIT_REACHED', async () => {
    const id = await world.sentContract(signers);
    const link = await invitationToken();
    const answers: string[] = [];
    let otp = '';
    const wrongCode = () => (otp === '000000' ? '111111' : '000000');
    // Each session from the same invitation link, its steps with its page credential.
    const pages = new Map<string, string>();
    const step = (sessionId: string, name: 'send-otp' | 'confirm', body?: unknown) =>
      world.step(sessionId, name, body, { page: pages.get(sessionId)! });
    const sessionWithCode = async () => {
      const { sessionId, page } = await invitationSession(link);
      pages.set(sessionId, page);
      expect((await step(sessionId, 'send-otp')).status).toBe(200);
      await world.deliver();
      otp = world.otpFor('0912345678');
      world.h.clock.advance(minute + 1000);
      return sessionId;
    };
    const tryWrong = async (sessionId: string) => {
      const response = await step(sessionId, 'confirm', { otp: wrongCode() });
      const body = await json<{ code: string; message: string }>(response);
      answers.push(`${response.status} ${body.code}`);
      return { response, body };
    };

    // Session 1: four wrong codes (one short of its own lock); session 2: four more.
    for (const _ of [1, 2]) {
      const sessionId = await sessionWithCode();
      for (let i = 0; i < 4; i++) await tryWrong(sessionId);
    }
    expect(answers).toEqual(Array(8).fill('422 OTP_INVALID'));
    // Session 3: the signer has 2 wrong codes left, fewer than the session's 5.
    const third = await sessionWithCode();
    const ninth = await tryWrong(third);
    expect(ninth.body.message).toBe(
      'Wrong code; 1 more wrong try and no code is taken for a while',
    );
    // The tenth and two more at once: the tenth fills the window; the others are not compared.
    const [tenth, ...others] = await Promise.all([
      step(third, 'confirm', { otp: wrongCode() }),
      step(third, 'confirm', { otp: wrongCode() }),
      step(third, 'confirm', { otp }),
    ]);
    for (const response of [tenth!, ...others]) {
      expect(await codeOf(response.clone())).toEqual({
        status: 429,
        code: 'OTP_FAILURE_LIMIT_REACHED',
      });
      expect(Number(response.headers.get('retry-after'))).toBeGreaterThan(23 * 60 * 60);
    }
    const failed = await world.h.deps.db
      .selectFrom('otp_events')
      .select((eb) => eb.fn.countAll<number>().as('count'))
      .where('kind', '=', 'failed')
      .executeTakeFirstOrThrow();
    expect(failed.count).toBe(10);

    // The right code is not taken; a new session resets nothing: no code is sent.
    expect(await codeOf(await step(third, 'confirm', { otp }))).toEqual({
      status: 429,
      code: 'OTP_FAILURE_LIMIT_REACHED',
    });
    const fourth = await invitationSession(link);
    pages.set(fourth.sessionId, fourth.page);
    const send = await step(fourth.sessionId, 'send-otp');
    expect(await codeOf(send)).toEqual({ status: 429, code: 'OTP_FAILURE_LIMIT_REACHED' });
    const contract = await dataOf<{ status: string }>(
      await world.request('GET', `/api/contracts/${id}`, world.acme.orgKey),
    );
    expect(contract.status).toBe('signing');

    // A day after the first wrong code, codes are sent and tried again.
    world.h.clock.advance(24 * 60 * minute);
    const fifth = await newSession(id);
    expect((await world.step(fifth, 'send-otp')).status).toBe(200);
    await world.deliver();
    const late = await world.step(fifth, 'confirm', { otp: wrongCode() });
    expect(await codeOf(late)).toEqual({ status: 422, code: 'OTP_INVALID' });
  });
});

describe('a dossier task signer', () => {
  let world: DossierWorld;
  beforeAll(async () => {
    world = await openWorld();
    await addProcess(
      world.h,
      { tenantId: world.acme.tenantId, organizationId: world.acme.rootOrganizationId },
      'KYSO',
      ['HD'],
      [
        {
          stepCode: 'GIAM_DOC',
          name: 'Giám đốc ký số',
          kind: 'internal',
          signType: 'digital_signature',
          defaultUserId: world.directorId,
        },
      ],
    );
  });
  afterAll(() => world?.close());

  it('codes sent over five signing sessions of the task: the sixth is 429 OTP_SEND_LIMIT_REACHED', async () => {
    const { h } = world;
    const documentId = `KS-${crypto.randomUUID()}`;
    const created = await world.create({
      documentId,
      documentTitle: 'Hợp đồng',
      processDefCode: 'KYSO',
      signers: [],
      files: [
        { source: 'url', fileUrl: world.serve(await contractPdf(documentId)), title: 'Hợp đồng' },
      ],
    });
    expect(created.status).toBe(201);
    const { id: dossierId } = await h.deps.db
      .selectFrom('dossiers')
      .select('id')
      .where('document_id', '=', documentId)
      .executeTakeFirstOrThrow();
    const task = (await openTask(h, dossierId))!.code;
    const director = await partnerToken(world, 'giam.doc');
    const call = async (url: string, body?: unknown) => {
      // The TSA and the certificates live in real time.
      if (new Date() > h.clock.now()) h.clock.set(new Date());
      return h.request('POST', url, {
        headers: { 'x-access-token': director },
        ...(body === undefined ? {} : { json: body }),
      });
    };
    const statuses: number[] = [];
    for (let i = 0; i < 6; i++) {
      const session = await dataOf<{ sessionId: string }>(
        await call(`/api/tasks/${task}/signing-session`, { signingMethod: 'cloud_hsm' }),
      );
      const sent = await call(`/api/signing/${session.sessionId}/send-otp`);
      statuses.push(sent.status);
      if (sent.status === 429) {
        expect(await codeOf(sent)).toEqual({ status: 429, code: 'OTP_SEND_LIMIT_REACHED' });
      }
      h.clock.advance(minute + 1000);
    }
    expect(statuses).toEqual([200, 200, 200, 200, 200, 429]);
  });
});
