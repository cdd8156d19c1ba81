import { contractsPath } from '../contracts/fixtures';
import { parseMail } from '../notify/support';
import {
  codeOf,
  dataOf,
  json,
  openSessionWorld,
  persisted,
  type SessionWorld,
  signingPath,
} from './world';

jest.setTimeout(120_000);

let world: SessionWorld;
beforeAll(async () => {
  world = await openSessionWorld();
});
afterAll(() => world?.close());

const two = [
  { name: 'Nguyễn Văn Ánh', email: 'anh@partner.example', phone: '0912345678', order: 1 },
  { name: 'Trần Thị Bình', email: 'binh@partner.example', order: 2 },
];

async function session(contractId: string, email: string, method: string) {
  return dataOf<{ sessionId: string; signingUrl: string; contractHash: string }>(
    await world.initiate(contractId, email, method),
  );
}

describe('each refusal answers its own code and changes nothing', () => {
  it('a placement outside its bounds is refused at contract creation, naming the field', async () => {
    const response = await world.upload(world.acme.orgKey, {
      signers: [{ ...two[0]!, placement: { x: 10, y: 10, width: 5, height: 40 } } as never],
    });
    expect(response.status).toBe(400);
    expect(await json(response)).toMatchObject({
      code: 'VALIDATION_ERROR',
      details: { field: 'signers.0.placement.width' },
    });
  });

  it('wrong turn: 409 NOT_SIGNER_TURN, no session, no preparation, no file', async () => {
    const id = await world.sentContract(two);
    const before = await persisted(world);
    expect(await codeOf(await world.initiate(id, 'binh@partner.example', 'otp_sms'))).toEqual({
      status: 409,
      code: 'NOT_SIGNER_TURN',
    });
    expect(await codeOf(await world.initiate(id, 'nobody@partner.example', 'otp_sms'))).toEqual({
      status: 404,
      code: 'SIGNER_NOT_FOUND',
    });
    expect(
      await codeOf(await world.request('GET', `${signingPath}/verify/${id}`, world.acme.orgKey)),
    ).toEqual({ status: 404, code: 'CONTRACT_NOT_SIGNED' });
    expect(await persisted(world)).toEqual(before);
  });

  it('wrong OTP: 422 OTP_INVALID counting down, the fifth locks (409 SESSION_LOCKED), the right code then too', async () => {
    const id = await world.sentContract(two);
    const { sessionId } = await session(id, 'anh@partner.example', 'otp_sms');
    expect((await world.step(sessionId, 'send-otp')).status).toBe(200);
    await world.deliver();
    const otp = world.otpFor('0912345678');
    const wrong = otp === '000000' ? '111111' : '000000';
    const before = await persisted(world);
    const answers = [];
    for (let i = 0; i < 5; i++) {
      const response = await world.step(sessionId, 'confirm', { otp: wrong });
      const body = await json<{ code: string; details?: { triesLeft?: number } }>(response);
      answers.push({
        status: response.status,
        code: body.code,
        ...(body.details?.triesLeft !== undefined ? { triesLeft: body.details.triesLeft } : {}),
      });
    }
    // The tries left come as a number, the same as the message says.
    expect(answers).toEqual([
      { status: 422, code: 'OTP_INVALID', triesLeft: 4 },
      { status: 422, code: 'OTP_INVALID', triesLeft: 3 },
      { status: 422, code: 'OTP_INVALID', triesLeft: 2 },
      { status: 422, code: 'OTP_INVALID', triesLeft: 1 },
      { status: 409, code: 'SESSION_LOCKED' },
    ]);
    expect(await codeOf(await world.step(sessionId, 'confirm', { otp }))).toEqual({
      status: 409,
      code: 'SESSION_LOCKED',
    });
    const after = await persisted(world);
    // Only the count, the lock and five otp_failed events: no signature, no file, no mail.
    expect(after.versions).toEqual(before.versions);
    expect(after.files).toEqual(before.files);
    expect(after.outbox).toEqual(before.outbox);
    expect(after.signers).toEqual(before.signers);
    expect(after.events.length - before.events.length).toBe(5);
    const row = after.sessions.at(-1)!;
    expect(row).toMatchObject({ state: 'locked', otp_failures: 5 });
    const trail = await dataOf<{
      auditTrail: { action: string; details: Record<string, unknown> }[];
    }>(await world.request('GET', `${contractsPath}/${id}`, world.acme.orgKey));
    const failed = trail.auditTrail.filter((event) => event.action === 'otp_failed');
    expect(failed.map((event) => event.details.attempt)).toEqual([1, 2, 3, 4, 5]);
    // A new initiate opens a fresh session.
    expect((await world.initiate(id, 'anh@partner.example', 'otp_sms')).status).toBe(200);
  });

  it('OTP resend within a minute: 429 OTP_RESEND_TOO_SOON with Retry-After, no second SMS', async () => {
    const id = await world.sentContract(two);
    const { sessionId } = await session(id, 'anh@partner.example', 'otp_sms');
    const first = await world.step(sessionId, 'send-otp');
    const body = await json<{ message: string; data: { channel: string; to: string } }>(first);
    expect(body.data).toMatchObject({ channel: 'sms', to: '09******78' });
    const before = await persisted(world);
    world.h.clock.advance(30_000);
    const again = await world.step(sessionId, 'send-otp');
    expect(await codeOf(again)).toEqual({ status: 429, code: 'OTP_RESEND_TOO_SOON' });
    expect(Number(again.headers.get('retry-after'))).toBeGreaterThan(0);
    expect(Number(again.headers.get('retry-after'))).toBeLessThanOrEqual(30);
    expect(await persisted(world)).toEqual(before);
    world.h.clock.advance(31_000);
    expect((await world.step(sessionId, 'send-otp')).status).toBe(200);
    // The code is kept only as an HMAC, and the queued SMS body only encrypted.
    await world.deliver();
    const otp = world.otpFor('0912345678');
    const row = await world.h.deps.db
      .selectFrom('signing_sessions')
      .select('otp_hash')
      .where('public_id', '=', sessionId)
      .executeTakeFirstOrThrow();
    expect(row.otp_hash).toMatch(/^[0-9a-f]{64}$/);
    expect(row.otp_hash).not.toContain(otp);
    const sms = await world.h.deps.db
      .selectFrom('notify_outbox')
      .select(['text_body', 'sensitive'])
      .where('kind', '=', 'contract_otp')
      .execute();
    for (const message of sms) {
      expect(message.sensitive).toBe(1);
      expect(message.text_body ?? '').not.toMatch(/\d{6}/);
    }
  });

  it('expired OTP: 410 OTP_EXPIRED; expired session: 410 SESSION_EXPIRED', async () => {
    const id = await world.sentContract(two);
    const { sessionId } = await session(id, 'anh@partner.example', 'otp_sms');
    await world.step(sessionId, 'send-otp');
    await world.deliver();
    const otp = world.otpFor('0912345678');
    world.h.clock.advance(5 * 60_000 + 1000);
    const before = await persisted(world);
    expect(await codeOf(await world.step(sessionId, 'confirm', { otp }))).toEqual({
      status: 410,
      code: 'OTP_EXPIRED',
    });
    expect(await persisted(world)).toEqual(before);
    world.h.clock.advance(25 * 60_000);
    expect(await codeOf(await world.step(sessionId, 'confirm', { otp }))).toEqual({
      status: 410,
      code: 'SESSION_EXPIRED',
    });
    expect(await codeOf(await world.step(sessionId, 'reject', { reason: 'Muộn' }))).toEqual({
      status: 410,
      code: 'SESSION_EXPIRED',
    });
    expect(await persisted(world)).toEqual(before);
  });

  it('superseded session: 409 SESSION_SUPERSEDED, its preparation abandoned', async () => {
    const id = await world.sentContract(two);
    const old = await session(id, 'anh@partner.example', 'otp_sms');
    const fresh = await session(id, 'anh@partner.example', 'otp_sms');
    const rows = await persisted(world);
    const [oldRow, freshRow] = rows.sessions.slice(-2);
    expect([oldRow!.state, freshRow!.state]).toEqual(['superseded', 'open']);
    expect(rows.preparations.find((p) => p.id === oldRow!.preparation_id)!.state).toBe('abandoned');
    for (const step of ['send-otp', 'reject'] as const) {
      expect(await codeOf(await world.step(old.sessionId, step, { reason: 'x' }))).toEqual({
        status: 409,
        code: 'SESSION_SUPERSEDED',
      });
    }
    expect(await persisted(world)).toEqual(rows);
    expect((await world.step(fresh.sessionId, 'send-otp')).status).toBe(200);
  });

  it('cancelled contract: 409 CONTRACT_CANCELLED for steps and initiate', async () => {
    const id = await world.sentContract(two);
    const { sessionId } = await session(id, 'anh@partner.example', 'otp_sms');
    const cancel = await world.request('DELETE', `${contractsPath}/${id}`, world.acme.orgKey, {
      reason: 'Sai điều khoản',
    });
    expect(cancel.status).toBe(200);
    const before = await persisted(world);
    expect(await codeOf(await world.step(sessionId, 'send-otp'))).toEqual({
      status: 409,
      code: 'CONTRACT_CANCELLED',
    });
    expect(await codeOf(await world.initiate(id, 'anh@partner.example', 'otp_sms'))).toEqual({
      status: 409,
      code: 'CONTRACT_CANCELLED',
    });
    expect(await persisted(world)).toEqual(before);
  });

  it('reject: reason required (400 VALIDATION_ERROR on reason); with one the contract is rejected, the creator told', async () => {
    const id = await world.sentContract(two);
    const { sessionId } = await session(id, 'anh@partner.example', 'otp_sms');
    const before = await persisted(world);
    const missing = await world.step(sessionId, 'reject', {});
    expect(missing.status).toBe(400);
    expect(await json(missing)).toMatchObject({
      code: 'VALIDATION_ERROR',
      details: { field: 'reason' },
    });
    expect(await persisted(world)).toEqual(before);
    const rejected = await dataOf(
      await world.step(sessionId, 'reject', { reason: 'Giá chưa đúng' }),
    );
    expect(rejected).toEqual({ contractId: id, contractStatus: 'rejected' });
    await world.deliver();
    const detail = await dataOf<{ status: string; signers: { status: string }[] }>(
      await world.request('GET', `${contractsPath}/${id}`, world.acme.orgKey),
    );
    expect(detail.status).toBe('rejected');
    expect(detail.signers[0]!.status).toBe('rejected');
    const told = world.smtp.received
      .filter((mail) => mail.to.includes('admin.acme@example.com'))
      .map((mail) => parseMail(mail.raw))
      .filter((mail) => mail.header('subject')?.includes('Hợp đồng bị từ chối'));
    expect(told).toHaveLength(1);
    expect(told[0]!.text).toContain('Giá chưa đúng');
    expect(await codeOf(await world.step(sessionId, 'reject', { reason: 'again' }))).toEqual({
      status: 409,
      code: 'CONTRACT_REJECTED',
    });
  });

  it('reused session: after the signature, 409 SESSION_ALREADY_USED; the next order is invited', async () => {
    const id = await world.sentContract(two);
    const { sessionId } = await session(id, 'anh@partner.example', 'otp_sms');
    await world.step(sessionId, 'send-otp');
    await world.deliver();
    const otp = world.otpFor('0912345678');
    const signed = await dataOf<{ contractStatus: string; certificateInfo: { subject: string } }>(
      await world.step(sessionId, 'confirm', { otp }),
    );
    expect(signed.contractStatus).toBe('signing');
    const before = await persisted(world);
    expect(await codeOf(await world.step(sessionId, 'confirm', { otp }))).toEqual({
      status: 409,
      code: 'SESSION_ALREADY_USED',
    });
    expect(await persisted(world)).toEqual(before);
    // The second signer's turn has come; the first may not sign again.
    expect(await codeOf(await world.initiate(id, 'anh@partner.example', 'otp_sms'))).toEqual({
      status: 409,
      code: 'SIGNER_ALREADY_SIGNED',
    });
    // No phone: the code goes by e-mail, the message says where.
    const second = await session(id, 'binh@partner.example', 'otp_sms');
    const byMail = await json<{ message: string; data: { channel: string; to: string } }>(
      await world.step(second.sessionId, 'send-otp'),
    );
    expect(byMail.data).toEqual(
      expect.objectContaining({ channel: 'email', to: 'b***@partner.example' }),
    );
  });

  it('the signing link works once; a page credential acts for its own session only; the wrong method is refused', async () => {
    const id = await world.sentContract(two);
    const usb = await session(id, 'anh@partner.example', 'usb_token');
    const token = usb.signingUrl.split('/').at(-1)!;
    const exchange = () =>
      world.h.request('POST', `${signingPath}/page-credential`, { json: { token } });
    const page = await dataOf<{ pageCredential: string }>(await exchange());
    expect(await codeOf(await exchange())).toEqual({ status: 409, code: 'SIGNING_LINK_USED' });
    expect(
      await codeOf(
        await world.h.request('POST', `${signingPath}/page-credential`, {
          json: { token: 'x'.repeat(43) },
        }),
      ),
    ).toEqual({ status: 404, code: 'SIGNING_LINK_NOT_FOUND' });
    expect(
      await codeOf(
        await world.step(usb.sessionId, 'send-otp', undefined, { page: page.pageCredential }),
      ),
    ).toEqual({ status: 409, code: 'SIGNING_METHOD_MISMATCH' });
    const other = await world.sentContract(two);
    const otherSession = await session(other, 'anh@partner.example', 'otp_sms');
    expect(
      await codeOf(
        await world.step(otherSession.sessionId, 'send-otp', undefined, {
          page: page.pageCredential,
        }),
      ),
    ).toEqual({ status: 401, code: 'UNAUTHORIZED' });
    // A partner without signing:initiate may not act.
    const viewer = await world.keyWith(['contract:view-all']);
    expect(
      await codeOf(
        await world.step(otherSession.sessionId, 'send-otp', undefined, { key: viewer }),
      ),
    ).toEqual({
      status: 403,
      code: 'FORBIDDEN',
    });
    // Another tenant does not see the session.
    expect(
      await codeOf(
        await world.step(otherSession.sessionId, 'send-otp', undefined, { key: world.beta.orgKey }),
      ),
    ).toEqual({ status: 404, code: 'SESSION_NOT_FOUND' });
  });
});
