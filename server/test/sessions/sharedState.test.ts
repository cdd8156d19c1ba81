import type { Harness } from '../support/harness';
import { anotherInstance, type Instance } from '../support/instances';
import { codeOf, dataOf, json, openSessionWorld, type SessionWorld, signingPath } from './world';

jest.setTimeout(120_000);

/**
 * What a signing session remembers lives in its row, so two instances behind one address see
 * one state: a signing link spent on one is spent on the other (also when both exchange it at
 * the same moment), and wrong codes entered on either count toward one lock. Instance A is the
 * world's harness, B a second runtime over the same database (test/support/instances.ts).
 */

let world: SessionWorld;
let second: Instance;
beforeAll(async () => {
  world = await openSessionWorld();
  second = anotherInstance(world.h);
});
afterAll(async () => {
  await second?.close();
  await world?.close();
});

const signers = [
  { name: 'Nguyễn Văn Ánh', email: 'anh@partner.example', phone: '0912345678', order: 1 },
];

async function session(method: string) {
  const id = await world.sentContract(signers);
  return dataOf<{ sessionId: string; signingUrl: string }>(
    await world.initiate(id, 'anh@partner.example', method),
  );
}

type Requester = Harness['request'] | Instance['request'];

const exchange = (request: Requester, token: string) =>
  request('POST', `${signingPath}/page-credential`, { json: { token } });

const confirm = (request: Requester, sessionId: string, otp: string) => {
  world.tick();
  return request('POST', `${signingPath}/${sessionId}/confirm`, {
    headers: { 'x-api-key': world.acme.orgKey },
    json: { otp },
  });
};

describe('signing sessions across instances', () => {
  it('a signing link exchanged on A is refused on B (409 SIGNING_LINK_USED)', async () => {
    const { signingUrl } = await session('usb_token');
    const token = signingUrl.split('/').at(-1)!;
    expect((await exchange(world.h.request, token)).status).toBe(200);
    expect(await codeOf(await exchange(second.request, token))).toEqual({
      status: 409,
      code: 'SIGNING_LINK_USED',
    });
  });

  // At once on one instance: on PostgreSQL its pool runs the four on four connections, as four
  // instances would. Not spread over A and B here: two SQLite connections in one process cannot
  // wait for each other (better-sqlite3 waits for a lock synchronously, blocking the very event
  // loop that would release it); separate processes on one SQLite file do.
  it('one link exchanged four times at the same moment: exactly one page credential', async () => {
    const { sessionId, signingUrl } = await session('usb_token');
    const token = signingUrl.split('/').at(-1)!;
    const answers = await Promise.all(
      Array.from({ length: 4 }, () => exchange(world.h.request, token)),
    );
    const codes = await Promise.all(answers.map((answer) => codeOf(answer.clone())));
    expect(codes.filter((code) => code.status === 200)).toHaveLength(1);
    expect(codes.filter((code) => code.code === 'SIGNING_LINK_USED')).toHaveLength(3);
    const winner = answers[codes.findIndex((code) => code.status === 200)]!;
    const { pageCredential } = await dataOf<{ pageCredential: string }>(winner);
    // The credential handed out is the one the row holds: B accepts it (and then says a usb_token
    // session has no code to send), where a credential it did not know would be 401.
    const onB = await second.request('POST', `${signingPath}/${sessionId}/send-otp`, {
      headers: { 'x-signing-token': pageCredential },
    });
    expect(await codeOf(onB)).toEqual({ status: 409, code: 'SIGNING_METHOD_MISMATCH' });
  });

  it('a code sent on A cannot be sent again on B within the minute', async () => {
    const { sessionId } = await session('otp_sms');
    expect((await world.step(sessionId, 'send-otp')).status).toBe(200);
    const again = await second.request('POST', `${signingPath}/${sessionId}/send-otp`, {
      headers: { 'x-api-key': world.acme.orgKey },
    });
    expect(again.status).toBe(429);
    expect((await json<{ code: string }>(again)).code).toBe('OTP_RESEND_TOO_SOON');
    expect(Number(again.headers.get('Retry-After'))).toBeGreaterThan(0);
  });

  it('wrong codes entered on A and B count toward one lock: the fifth locks, on either', async () => {
    const { sessionId } = await session('otp_sms');
    expect((await world.step(sessionId, 'send-otp')).status).toBe(200);
    await world.deliver();
    const otp = world.otpFor('0912345678');
    const wrong = otp === '000000' ? '111111' : '000000';
    const answers = [];
    for (const request of [world.h.request, second.request, world.h.request, second.request]) {
      const body = await json<{ code: string; details?: { triesLeft?: number } }>(
        await confirm(request, sessionId, wrong),
      );
      answers.push([body.code, body.details?.triesLeft]);
    }
    expect(answers).toEqual([
      ['OTP_INVALID', 4],
      ['OTP_INVALID', 3],
      ['OTP_INVALID', 2],
      ['OTP_INVALID', 1],
    ]);
    expect(await codeOf(await confirm(world.h.request, sessionId, wrong))).toEqual({
      status: 409,
      code: 'SESSION_LOCKED',
    });
    // The right code is refused on B too: the lock is the row's.
    expect(await codeOf(await confirm(second.request, sessionId, otp))).toEqual({
      status: 409,
      code: 'SESSION_LOCKED',
    });
  });

  it('five sends of one session at once: one code goes out, four answer OTP_RESEND_TOO_SOON', async () => {
    const { sessionId } = await session('otp_sms');
    const smsBefore = await smsCount();
    world.tick();
    const answers = await Promise.all(
      Array.from({ length: 5 }, () =>
        world.h.request('POST', `${signingPath}/${sessionId}/send-otp`, {
          headers: { 'x-api-key': world.acme.orgKey },
        }),
      ),
    );
    const codes = await Promise.all(answers.map((answer) => codeOf(answer)));
    expect(codes.filter((code) => code.status === 200)).toHaveLength(1);
    expect(codes.filter((code) => code.code === 'OTP_RESEND_TOO_SOON')).toHaveLength(4);
    expect((await smsCount()) - smsBefore).toBe(1);
  });

  it('twenty wrong codes at once: four answer OTP_INVALID, the rest SESSION_LOCKED, five counted', async () => {
    const { sessionId } = await session('otp_sms');
    expect((await world.step(sessionId, 'send-otp')).status).toBe(200);
    await world.deliver();
    const otp = world.otpFor('0912345678');
    const wrong = otp === '000000' ? '111111' : '000000';
    const answers = await Promise.all(
      Array.from({ length: 20 }, () => confirm(world.h.request, sessionId, wrong)),
    );
    const codes = (await Promise.all(answers.map((answer) => codeOf(answer)))).map(
      (code) => code.code,
    );
    expect(codes.filter((code) => code === 'OTP_INVALID')).toHaveLength(4);
    expect(codes.filter((code) => code === 'SESSION_LOCKED')).toHaveLength(16);
    const row = await second.deps.db
      .selectFrom('signing_sessions')
      .select(['state', 'otp_failures'])
      .where('public_id', '=', sessionId)
      .executeTakeFirstOrThrow();
    expect(row).toEqual({ state: 'locked', otp_failures: 5 });
  });
});

async function smsCount(): Promise<number> {
  const rows = await world.h.deps.db
    .selectFrom('notify_outbox')
    .select('id')
    .where('channel', '=', 'sms')
    .execute();
  return rows.length;
}
