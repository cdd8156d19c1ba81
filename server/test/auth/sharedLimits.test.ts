import { RateLimiter } from '../../src/auth/rateLimit';
import type { Harness, SeededTenant } from '../support/harness';
import { anotherInstance, type Instance } from '../support/instances';
import {
  errorOf,
  oneMinute,
  type ProbeApp,
  probeApp,
  send,
  twoTenants,
  wrongKey,
} from './fixtures';

/**
 * Several instances behind one address draw on one budget: the rate-limit windows and the failed
 * credential checks are counted in the database, so a client that spreads its requests over the
 * instances gets no more tries than from one. Instance A is the harness's app, B a second runtime
 * and app over the same database (test/support/instances.ts), both on the harness's clock.
 */

const limits = { RATE_LIMIT_AUTH: '5', RATE_LIMIT_API: '5', RATE_LIMIT_UPLOAD: '5' };

let h: Harness, a: ProbeApp, b: ProbeApp, second: Instance, acme: SeededTenant;

beforeAll(async () => {
  ({ h, app: a, acme } = await twoTenants({ env: limits }));
  second = anotherInstance(h);
  b = probeApp(second.deps);
});
afterAll(async () => {
  await second.close();
  await h.close();
});

/** Each test starts at the beginning of a fresh one-minute window. */
beforeEach(() => {
  const now = h.clock.now().getTime();
  h.clock.set(new Date(now - (now % oneMinute) + oneMinute));
});

async function expectTooMany(response: Response, retryAfter: string) {
  expect(response.status).toBe(429);
  expect(response.headers.get('Retry-After')).toBe(retryAfter);
  expect((await errorOf(response)).code).toBe('RATE_LIMITED');
}

describe('rate limits across instances', () => {
  it('limit 5 a minute per key: 3 requests on A and 2 on B pass, the sixth (on either) is refused', async () => {
    const call = (app: ProbeApp) =>
      send(app, 'GET', '/probe/rate/api', { headers: { 'X-API-Key': acme.orgKey } });
    const seen: number[] = [];
    for (const app of [a, a, a, b, b]) seen.push((await call(app)).status);
    expect(seen).toEqual([200, 200, 200, 200, 200]);
    await expectTooMany(await call(b), '60');
    h.clock.advance(20_000);
    await expectTooMany(await call(a), '40');
    // The next minute is a fresh window on both.
    h.clock.advance(40_000);
    expect((await call(b)).status).toBe(200);
    expect((await call(a)).status).toBe(200);
  });

  it('anonymous auth requests per address: 3 on A and 3 on B, the sixth is refused', async () => {
    const refresh = (app: ProbeApp) =>
      send(app, 'POST', '/api/auth/refresh', {
        address: '203.0.113.40',
        json: { refreshToken: 'rt_nope' },
      });
    const seen: number[] = [];
    for (const app of [a, b, a, b, a, b]) seen.push((await refresh(app)).status);
    expect(seen).toEqual([401, 401, 401, 401, 401, 429]);
  });

  it('failed credential checks: 5 wrong keys spread over A and B, then a right key is refused on both', async () => {
    const address = '203.0.113.41';
    const directory = (app: ProbeApp, key: string) =>
      send(app, 'GET', '/probe/directory', { address, headers: { 'X-API-Key': key } });
    const seen: number[] = [];
    for (const [index, app] of [a, b, a, b, a].entries()) {
      seen.push((await directory(app, `${wrongKey.slice(0, -2)}${index}x`)).status);
    }
    expect(seen).toEqual([401, 401, 401, 401, 401]);
    await expectTooMany(await directory(b, acme.orgKey), '60');
    await expectTooMany(await directory(a, acme.orgKey), '60');
    // Another address is not affected; a minute later this one may try again.
    expect(
      (
        await send(b, 'GET', '/probe/directory', {
          address: '203.0.113.42',
          headers: { 'X-API-Key': acme.orgKey },
        })
      ).status,
    ).toBe(200);
    h.clock.advance(oneMinute);
    expect((await directory(b, acme.orgKey)).status).toBe(200);
  });

  it('a sign-in form locked out on A after wrong passwords is locked out on B', async () => {
    const signIn = (app: ProbeApp, password: string) =>
      send(app, 'POST', '/app/dang-nhap', {
        address: '203.0.113.43',
        headers: {
          'content-type': 'application/x-www-form-urlencoded',
          'sec-fetch-site': 'same-origin',
        },
        body: new URLSearchParams({ username: acme.adminUsername, password }).toString(),
      });
    const seen: number[] = [];
    for (let index = 0; index < 5; index += 1)
      seen.push((await signIn(a, `wrong-${index}`)).status);
    expect(seen).toEqual([401, 401, 401, 401, 401]);
    const refused = await signIn(b, 'still wrong');
    expect(refused.status).toBe(429);
    expect(refused.headers.get('Retry-After')).toBe('60');
  });
});

describe('one statement per check holds under concurrency', () => {
  it('50 checks at once of one caller against a limit of 10, over two instances: exactly 10 pass', async () => {
    const limiter = new RateLimiter({ auth: 10, api: 10, upload: 10 });
    const now = h.clock.now().getTime();
    const waits = await Promise.all(
      Array.from({ length: 50 }, (_, index) =>
        limiter.consume((index % 2 === 0 ? h.deps : second.deps).db, 'api', 'key:concurrent', now),
      ),
    );
    expect(waits.filter((wait) => wait === 0)).toHaveLength(10);
    expect(waits.filter((wait) => wait > 0)).toHaveLength(40);
    const counted = await h.deps.db
      .selectFrom('rate_windows')
      .select('count')
      .where('caller', '=', 'key:concurrent')
      .execute();
    expect(counted).toEqual([{ count: 50 }]);
  });

  it('windows older than the previous minute are pruned as the minutes pass', async () => {
    const limiter = new RateLimiter({ auth: 10, api: 10, upload: 10 });
    const start = h.clock.now().getTime();
    await limiter.consume(h.deps.db, 'api', 'key:old', start);
    await limiter.consume(h.deps.db, 'api', 'key:old', start + oneMinute);
    const windows = () =>
      h.deps.db
        .selectFrom('rate_windows')
        .select('window_start')
        .where('caller', '=', 'key:old')
        .orderBy('window_start')
        .execute();
    expect(await windows()).toHaveLength(2);
    await limiter.consume(h.deps.db, 'api', 'key:other', start + 2 * oneMinute);
    expect(await windows()).toEqual([{ window_start: new Date(start + oneMinute).toISOString() }]);
  });
});
