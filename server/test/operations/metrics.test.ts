import { codeOf, dataOf, openSessionWorld, type SessionWorld } from '../sessions/world';
import { sample } from './prometheus';

/**
 * The domain counters move with what really happened, each once: a wrong one-time code, a
 * committed signature (method and PAdES level), a PDF refused by its code; read through
 * GET /metrics of a real app on a real SQLite file, signing with the development CA and TSA.
 * (The counters belong to the process: each test compares before and after.)
 */

jest.setTimeout(120_000);

const token = 'metrics-test-token-0123456789';

let world: SessionWorld;
beforeAll(async () => {
  world = await openSessionWorld({ METRICS_TOKEN: token });
});
afterAll(() => world?.close());

async function scrape(): Promise<string> {
  const response = await world.h.request('GET', '/metrics', {
    headers: { authorization: `Bearer ${token}` },
  });
  expect(response.status).toBe(200);
  return response.text();
}

/** The value of one sample (0 when the series does not exist yet). */
const count = (text: string, name: string, labels: Record<string, string>) =>
  sample(text, name, labels) ?? 0;

const signer = { name: 'Nguyễn Văn Ánh', email: 'anh@partner.example', phone: '0912345678' };

describe('domain counters', () => {
  it('a wrong OTP counts one failure; the right one then counts one otp_sms signature at the level its revision proves', async () => {
    const id = await world.sentContract([{ ...signer, order: 1 }]);
    const { sessionId } = await dataOf<{ sessionId: string }>(
      await world.initiate(id, signer.email, 'otp_sms'),
    );
    expect((await world.step(sessionId, 'send-otp')).status).toBe(200);
    await world.deliver();
    const otp = world.otpFor(signer.phone);
    const wrong = otp === '000000' ? '111111' : '000000';

    const before = await scrape();
    expect(await codeOf(await world.step(sessionId, 'confirm', { otp: wrong }))).toEqual({
      status: 422,
      code: 'OTP_INVALID',
    });
    const afterWrong = await scrape();
    expect(count(afterWrong, 'esign_otp_failures_total', { method: 'otp_sms' })).toBe(
      count(before, 'esign_otp_failures_total', { method: 'otp_sms' }) + 1,
    );

    const signed = await world.step(sessionId, 'confirm', { otp });
    expect(signed.status).toBe(200);
    const after = await scrape();
    // Signed with the seal and a timestamp from the development TSA: B-T.
    const labels = { method: 'otp_sms', level: 'B-T' };
    expect(count(after, 'esign_signatures_total', labels)).toBe(
      count(before, 'esign_signatures_total', labels) + 1,
    );
    // A right code is no failure.
    expect(count(after, 'esign_otp_failures_total', { method: 'otp_sms' })).toBe(
      count(afterWrong, 'esign_otp_failures_total', { method: 'otp_sms' }),
    );
    // Every series counts requests by route pattern: the session id is nowhere.
    expect(after).not.toContain(sessionId);
    expect(
      count(after, 'esign_http_requests_total', {
        route: '/api/signing/:sessionId/confirm',
        status: '422',
      }),
    ).toBeGreaterThanOrEqual(1);
  });

  it('a contract upload that is not a PDF counts one NOT_A_PDF refusal', async () => {
    const before = count(await scrape(), 'esign_pdf_refusals_total', { code: 'NOT_A_PDF' });
    const refused = await world.upload(world.acme.orgKey, {
      file: { name: 'hop-dong.pdf', bytes: Buffer.from('not a PDF at all') },
    });
    expect(await codeOf(refused)).toEqual({ status: 415, code: 'NOT_A_PDF' });
    expect(count(await scrape(), 'esign_pdf_refusals_total', { code: 'NOT_A_PDF' })).toBe(
      before + 1,
    );
  });
});
