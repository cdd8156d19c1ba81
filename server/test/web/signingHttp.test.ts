import { recordIssuedSecret } from '../../../test/support/runLog';
import { issueToken } from '../../src/auth/tokens';
import { parseMail } from '../notify/support';
import { dataOf, openSessionWorld, type SessionWorld, signingPath } from '../sessions/world';
import { csrfOf, sessionCookieOf } from '../support/web';

/**
 * The signing page over HTTP: opening a link uses nothing (a scanner fetching it leaves it
 * working); its file is served while the link opens the session and afterwards only to the
 * browser holding the session; the page's POST is guarded (same origin, CSRF with a session) and
 * refuses bad input in the API's error shape.
 */

jest.setTimeout(120_000);

let world: SessionWorld;
beforeAll(async () => {
  world = await openSessionWorld();
});
afterAll(async () => {
  await world?.close();
});

const json = { 'content-type': 'application/json', accept: 'application/json' };
const sameOrigin = { ...json, 'sec-fetch-site': 'same-origin' };

function linkPathOf(signingUrl: string): string {
  return `/app/ky-so/phien/${signingUrl.split('/').at(-1)}`;
}

async function invitationPathOf(email: string, before: number): Promise<string> {
  await world.deliver();
  const mail = world.smtp.received.slice(before).find((m) => m.to.includes(email))!;
  const token = /\/ky-so\/([A-Za-z0-9_-]{43})\b/.exec(parseMail(mail.raw).text ?? '')![1];
  return `/app/ky-so/${token}`;
}

describe('the signing page over HTTP', () => {
  it('opening a session link uses nothing; its file is the contract’s, then only the exchanging browser’s', async () => {
    const contractId = await world.sentContract([
      { name: 'Nguyễn Văn Ánh', email: 'anh@partner.example', phone: '0912345678', order: 1 },
    ]);
    const { signingUrl } = await dataOf<{ signingUrl: string }>(
      await world.initiate(contractId, 'anh@partner.example', 'otp_sms'),
    );
    const path = linkPathOf(signingUrl);
    for (let i = 0; i < 2; i++) {
      const page = await world.h.request('GET', path);
      expect(page.status).toBe(200);
      expect(page.headers.get('cache-control')).toBe('no-store');
      expect(page.headers.get('referrer-policy')).toBe('no-referrer');
    }
    const file = await world.h.request('GET', `${path}/tai-lieu`);
    expect([file.status, file.headers.get('content-type')]).toEqual([200, 'application/pdf']);
    expect(
      Buffer.from(await file.arrayBuffer())
        .subarray(0, 5)
        .toString(),
    ).toBe('%PDF-');

    // The page's exchange: the credential answered, and kept in a cookie on the page's path.
    world.tick();
    const exchanged = await world.h.request('POST', path, { headers: sameOrigin, body: '{}' });
    expect(exchanged.status).toBe(200);
    const started = (await exchanged.json()) as { data: { pageCredential: string } };
    recordIssuedSecret(started.data.pageCredential, 'page credential');
    const cookie = exchanged.headers.get('set-cookie') ?? '';
    expect(cookie).toMatch(/^esign_signing=[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+;/);
    expect(cookie).toContain(`Path=${path}`);
    expect(cookie).toContain('HttpOnly');
    const held = cookie.split(';')[0]!;

    // Used: without the cookie the link says so and its file is gone; with it, both stay.
    expect((await world.h.request('GET', path)).status).toBe(409);
    expect((await world.h.request('GET', `${path}/tai-lieu`)).status).toBe(404);
    const again = await world.h.request('GET', path, { headers: { cookie: held } });
    expect(again.status).toBe(200);
    expect(await again.text()).toContain(started.data.pageCredential);
    const kept = await world.h.request('GET', `${path}/tai-lieu`, { headers: { cookie: held } });
    expect(kept.status).toBe(200);
    // Not signed yet: no signed file.
    const signed = await world.h.request('GET', `${path}/ban-da-ky`, { headers: { cookie: held } });
    expect(signed.status).toBe(404);
  });

  it('a page’s POST: cross-site refused, bad input in the API’s error shape; the session it opens runs on the API', async () => {
    const before = world.smtp.received.length;
    await world.sentContract([{ name: 'Trần Thị Bình', email: 'binh@partner.example', order: 1 }]);
    const path = await invitationPathOf('binh@partner.example', before);
    const post = (body: string, headers: Record<string, string> = sameOrigin) =>
      world.h.request('POST', path, { headers, body });
    const answer = async (response: Response) => ({
      status: response.status,
      ...((await response.json()) as { code: string; details?: { field?: string } }),
    });

    expect(
      await answer(await post('{}', { ...json, 'sec-fetch-site': 'cross-site' })),
    ).toMatchObject({ status: 403, code: 'CSRF_REFUSED' });
    expect(await answer(await post('not json'))).toMatchObject({
      status: 400,
      code: 'INVALID_JSON',
    });
    expect(await answer(await post('{}'))).toMatchObject({
      status: 400,
      code: 'VALIDATION_ERROR',
      details: { field: 'signingMethod' },
    });
    expect(await answer(await post('{"signingMethod":"fax"}'))).toMatchObject({
      status: 400,
      code: 'VALIDATION_ERROR',
      details: { field: 'signingMethod' },
    });
    expect(await answer(await post('{"signingMethod":"otp_sms","extra":1}'))).toMatchObject({
      status: 400,
      code: 'VALIDATION_ERROR',
    });
    world.tick();
    const started = await post('{"signingMethod":"image_signature"}');
    expect(started.status).toBe(200);
    const data = ((await started.json()) as { data: { pageCredential: string; sessionId: string } })
      .data;
    recordIssuedSecret(data.pageCredential, 'page credential');
    // The credential runs the session's steps on the API.
    const rejected = await world.h.request('POST', `${signingPath}/${data.sessionId}/reject`, {
      headers: { 'x-signing-token': data.pageCredential },
      json: { reason: 'Không đồng ý điều khoản' },
    });
    expect(rejected.status).toBe(200);
  });

  it('a signed-in user’s page: its POST needs the session’s CSRF token; a contract they do not sign is not found', async () => {
    const contractId = await world.sentContract([
      { name: 'Admin ACME', email: 'admin.acme@example.com', order: 1 },
    ]);
    const token = await issueToken(world.h.deps, world.acme.adminUserId, 'access');
    recordIssuedSecret(token, 'access token');
    const path = `/app/ky-so/hop-dong/${contractId}`;
    const cookie = sessionCookieOf(await world.h.request('GET', `${path}?at=${token}`));
    const page = await world.h.request('GET', path, { headers: { cookie } });
    expect(page.status).toBe(200);
    const csrf = csrfOf(await page.text());
    const body = '{"signingMethod":"otp_sms"}';
    const without = await world.h.request('POST', path, {
      headers: { ...sameOrigin, cookie },
      body,
    });
    expect(without.status).toBe(403);
    world.tick();
    const withToken = await world.h.request('POST', path, {
      headers: { ...sameOrigin, cookie, 'x-csrf-token': csrf },
      body,
    });
    expect(withToken.status).toBe(200);
    recordIssuedSecret(
      ((await withToken.json()) as { data: { pageCredential: string } }).data.pageCredential,
      'page credential',
    );

    const other = await world.sentContract([
      { name: 'Lê Văn Cường', email: 'cuong@partner.example', order: 1 },
    ]);
    const foreign = await world.h.request('GET', `/app/ky-so/hop-dong/${other}`, {
      headers: { cookie },
    });
    expect(foreign.status).toBe(404);
    const file = await world.h.request('GET', `/app/ky-so/hop-dong/${other}/tai-lieu`, {
      headers: { cookie },
    });
    expect(file.status).toBe(404);
  });
});
