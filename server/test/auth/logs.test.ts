import { type Harness, readJson, type SeededTenant } from '../support/harness';
import { linesLogger } from '../support/testLogger';
import { type ProbeApp, send, tenantUser, twoTenants } from './fixtures';

const password = 'S3cret-pass-phrase!';
let h: Harness, app: ProbeApp, acme: SeededTenant;
const lines: string[] = [];

beforeAll(async () => {
  const logger = linesLogger('trace', lines);
  ({ h, app, acme } = await twoTenants({ adminPassword: password, logger }));
  await tenantUser(h, acme, {
    username: 'signer@partner.example',
    identityNumber: '001090000321',
    type: 'external',
  });
});
afterAll(() => h.close());

interface Session {
  data: { accessToken: string; refreshToken: string };
}

/** Every secret the flows below send or receive. */
async function runAuthFlows(): Promise<string[]> {
  const secrets = [password, 'wrong-password-guess', acme.orgKey];
  const login = await send(app, 'POST', '/api/auth/login', {
    json: { username: acme.adminUsername, password },
  });
  expect(login.status).toBe(200);
  const first = (await readJson<Session>(login)).data;
  await send(app, 'POST', '/api/auth/login', {
    json: { username: acme.adminUsername, password: 'wrong-password-guess' },
  });
  const refreshed = await send(app, 'POST', '/api/auth/refresh', {
    json: { refreshToken: first.refreshToken },
  });
  expect(refreshed.status).toBe(200);
  const second = (await readJson<Session>(refreshed)).data;
  // Reuse of the spent token (family revoked) logs too.
  await send(app, 'POST', '/api/auth/refresh', { json: { refreshToken: first.refreshToken } });
  const server = await send(app, 'POST', '/api/auth/login-server', {
    json: { secretKey: acme.orgKey, cccd: '001090000321' },
  });
  expect(server.status).toBe(200);
  const third = (await readJson<Session>(server)).data;
  const partner = await send(app, 'POST', '/api/auth/partner-login', {
    headers: { 'x-api-key': acme.orgKey },
    json: { username: 'signer@partner.example' },
  });
  expect(partner.status).toBe(201);
  const partnerToken = (await readJson<{ data: { accessToken: string } }>(partner)).data
    .accessToken;
  await send(app, 'GET', '/probe/contracts', {
    headers: { Authorization: `Bearer ${second.accessToken}` },
  });
  await send(app, 'GET', '/probe/integration', { headers: { 'x-access-token': partnerToken } });
  await send(app, 'GET', '/probe/integration', { headers: { apikey: acme.orgKey } });
  secrets.push(
    first.accessToken,
    first.refreshToken,
    second.accessToken,
    second.refreshToken,
    third.accessToken,
    third.refreshToken,
    partnerToken,
  );
  return secrets;
}

describe('Logs', () => {
  it('no password, key, refresh token or access token appears in any log line', async () => {
    const secrets = await runAuthFlows();
    // One request line per request, so the check below had something to look at.
    const records = lines.map((line) => JSON.parse(line) as Record<string, unknown>);
    const requests = records.filter((record) => record.msg === 'request');
    expect(requests.map((record) => [record.method, record.path, record.status])).toEqual([
      ['POST', '/api/auth/login', 200],
      ['POST', '/api/auth/login', 401],
      ['POST', '/api/auth/refresh', 200],
      ['POST', '/api/auth/refresh', 401],
      ['POST', '/api/auth/login-server', 200],
      ['POST', '/api/auth/partner-login', 201],
      ['GET', '/probe/contracts', 200],
      ['GET', '/probe/integration', 200],
      ['GET', '/probe/integration', 401],
    ]);
    for (const record of requests) expect(typeof record.requestId).toBe('string');
    const everything = lines.join('\n');
    for (const secret of secrets) {
      expect(secret.length).toBeGreaterThan(10);
      expect(everything).not.toContain(secret);
      // Nor a recognisable part of it (the secret half of a key, a token's signature).
      const tail = secret.slice(-20);
      expect(everything).not.toContain(tail);
    }
  });

  it('secrets logged by mistake under their usual names are redacted', () => {
    lines.length = 0;
    const logger = linesLogger('trace', lines);
    logger.info(
      {
        req: {
          headers: {
            authorization: 'Bearer leaked-access-token',
            'x-api-key': 'leaked-api-key',
            'x-access-token': 'leaked-partner-token',
            apikey: 'leaked-legacy-key',
          },
          body: { password: 'leaked-password', refreshToken: 'leaked-refresh' },
        },
        body: { secretKey: 'leaked-secret-key', cccd: '001090000321' },
        apiKey: 'leaked-top-level-key',
      },
      'mistake',
    );
    expect(lines).toHaveLength(1);
    expect(lines[0]).not.toMatch(/leaked-/);
    const record = JSON.parse(lines[0]!) as {
      req: { headers: Record<string, string>; body: Record<string, string> };
      body: Record<string, string>;
    };
    expect(record.req.headers.authorization).toBe('[redacted]');
    expect(record.req.body.password).toBe('[redacted]');
    // Fields that are not secrets stay readable.
    expect(record.body.cccd).toBe('001090000321');
  });
});
