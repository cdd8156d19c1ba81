import { createHarness, type Harness, readJson, seedTenant } from '../support/harness';

describe('Login (general API)', () => {
  let h: Harness;
  beforeAll(() => {
    h = createHarness();
  });
  afterAll(() => h.close());

  it('returns an access token of 1 hour and a refresh token for e-mail or login name', async () => {
    const tenant = await seedTenant(h, 'ACME', { adminPassword: 'correct horse' });
    for (const username of [tenant.adminUsername, `${tenant.adminUsername}@EXAMPLE.com`]) {
      const response = await h.request('POST', '/api/auth/login', {
        json: { username, password: 'correct horse' },
      });
      expect(response.status).toBe(200);
      const body = await readJson<{ statusCode: number; data: Record<string, unknown> }>(response);
      expect(body.statusCode).toBe(200);
      expect(body.data.expiresIn).toBe(3600);
      expect(typeof body.data.accessToken).toBe('string');
      expect(body.data.refreshToken).toMatch(/^rt_/);
    }
  });
});
