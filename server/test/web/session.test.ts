import { recordIssuedSecret } from '../../../test/support/runLog';
import { issueToken } from '../../src/auth/tokens';
import { createHarness, type Harness, type SeededTenant, seedTenant } from '../support/harness';
import { csrfOf, sameOriginForm, sessionCookieOf, webSignIn } from '../support/web';

/**
 * The web application's sessions over HTTP: sign-in with a password, `?at=` exchanged for a
 * cookie and gone from the URL, sign-out, the CSRF guard, the pages' security headers and the
 * clear pages for a refused token. The browser tests (Chromium) build on these.
 */

let h: Harness;
let tenant: SeededTenant;
const password = 'Mật-khẩu-đủ-dài-2026';

beforeAll(async () => {
  h = createHarness();
  tenant = await seedTenant(h, 'WEBS', { adminPassword: password });
});
afterAll(() => h.close());

describe('web sessions', () => {
  it('sends a visitor without a session to sign in, and back after', async () => {
    const response = await h.request('GET', '/app/ho-so?status=1');
    expect(response.status).toBe(303);
    expect(response.headers.get('location')).toBe(
      `/app/dang-nhap?next=${encodeURIComponent('/app/ho-so?status=1')}`,
    );
    const page = await h.request('GET', '/app/dang-nhap');
    expect(page.status).toBe(200);
    const csp = page.headers.get('content-security-policy') ?? '';
    expect(csp).toContain("script-src 'self'");
    expect(csp).toContain("frame-ancestors 'none'");
    expect(csp).not.toContain('unsafe-inline');
    expect(page.headers.get('referrer-policy')).toBe('no-referrer');
    const html = await page.text();
    expect(html).toContain('<html lang="vi">');
    expect(html).toContain('Đăng nhập');
  });

  it('refuses a wrong password with the same page and 401, and opens a session with the right one', async () => {
    const wrong = await h.request('POST', '/app/dang-nhap', {
      headers: sameOriginForm,
      body: new URLSearchParams({ username: tenant.adminUsername, password: 'sai' }).toString(),
    });
    expect(wrong.status).toBe(401);
    expect(wrong.headers.get('set-cookie')).toBeNull();
    expect(await wrong.text()).toContain('Tên đăng nhập hoặc mật khẩu không đúng.');

    const cookie = await webSignIn(h, tenant.adminUsername, password);
    const dashboard = await h.request('GET', '/app/dashboard', { headers: { cookie } });
    expect(dashboard.status).toBe(200);
    expect(await dashboard.text()).toContain(tenant.adminUsername);
  });

  it('refuses a sign-in form posted from another site', async () => {
    const response = await h.request('POST', '/app/dang-nhap', {
      headers: {
        'content-type': 'application/x-www-form-urlencoded',
        'sec-fetch-site': 'cross-site',
      },
      body: new URLSearchParams({ username: tenant.adminUsername, password }).toString(),
    });
    expect(response.status).toBe(403);
    expect(response.headers.get('set-cookie')).toBeNull();
  });

  it('exchanges ?at= for a cookie and sends the browser to the same URL without it', async () => {
    const token = await issueToken(h.deps, tenant.adminUserId, 'access');
    recordIssuedSecret(token, 'access token');
    const response = await h.request('GET', `/app/ho-so?status=1&at=${token}&page=2`);
    expect(response.status).toBe(303);
    expect(response.headers.get('location')).toBe('/app/ho-so?status=1&page=2');
    const setCookie = response.headers.get('set-cookie') ?? '';
    expect(setCookie).toContain('HttpOnly');
    expect(setCookie).toContain('SameSite=Lax');
    const cookie = sessionCookieOf(response);
    const dashboard = await h.request('GET', '/app/dashboard', { headers: { cookie } });
    expect(dashboard.status).toBe(200);
  });

  it('answers an expired token and a locked user with a page that says so', async () => {
    const token = await issueToken(h.deps, tenant.adminUserId, 'access');
    recordIssuedSecret(token, 'access token');
    h.clock.advance(2 * 3600_000);
    const expired = await h.request('GET', `/app/dashboard?at=${token}`);
    expect(expired.status).toBe(303);
    // The page that says why has no token in its address.
    expect(expired.headers.get('location')).toBe('/app/lien-ket-truy-cap?ly-do=expired');
    const explained = await h.request('GET', expired.headers.get('location')!);
    expect(explained.status).toBe(401);
    expect(await explained.text()).toContain('Liên kết truy cập không còn hiệu lực');

    const fresh = await issueToken(h.deps, tenant.adminUserId, 'partner');
    recordIssuedSecret(fresh, 'partner token');
    await h.deps.db
      .updateTable('users')
      .set({ status: 3 })
      .where('id', '=', tenant.adminUserId)
      .execute();
    try {
      const locked = await h.request('GET', `/app/dashboard?at=${fresh}`);
      expect(locked.headers.get('location')).toBe('/app/lien-ket-truy-cap?ly-do=locked');
      const explained = await h.request('GET', locked.headers.get('location')!);
      expect(await explained.text()).toContain('Tài khoản của bạn đã bị khóa');
    } finally {
      await h.deps.db
        .updateTable('users')
        .set({ status: 2 })
        .where('id', '=', tenant.adminUserId)
        .execute();
    }
  });

  it('signs out only with the page CSRF token, and the session is over server-side', async () => {
    const cookie = await webSignIn(h, tenant.adminUsername, password);
    const page = await h.request('GET', '/app/dashboard', { headers: { cookie } });
    const csrf = csrfOf(await page.text());
    const forged = await h.request('POST', '/app/dang-xuat', {
      headers: { ...sameOriginForm, cookie },
      body: '_csrf=wrong',
    });
    expect(forged.status).toBe(403);
    const out = await h.request('POST', '/app/dang-xuat', {
      headers: { ...sameOriginForm, cookie },
      body: new URLSearchParams({ _csrf: csrf }).toString(),
    });
    expect(out.status).toBe(303);
    // The old cookie opens nothing any more, even if the browser kept it.
    const after = await h.request('GET', '/app/dashboard', { headers: { cookie } });
    expect(after.status).toBe(303);
  });

  it('ends a session left idle for more than 30 minutes', async () => {
    const cookie = await webSignIn(h, tenant.adminUsername, password);
    h.clock.advance(31 * 60_000);
    const after = await h.request('GET', '/app/dashboard', { headers: { cookie } });
    expect(after.status).toBe(303);
  });

  it('switches to English and keeps the choice', async () => {
    const cookie = await webSignIn(h, tenant.adminUsername, password);
    const switched = await h.request('GET', '/app/dashboard?lang=en', { headers: { cookie } });
    expect(switched.status).toBe(303);
    expect(switched.headers.get('location')).toBe('/app/dashboard');
    const lang = /(esign_lang=en)/.exec(switched.headers.get('set-cookie') ?? '')?.[1];
    expect(lang).toBeDefined();
    const page = await h.request('GET', '/app/dashboard', {
      headers: { cookie: `${cookie}; ${lang}` },
    });
    const html = await page.text();
    expect(html).toContain('<html lang="en">');
    expect(html).toContain('Sign out');
  });

  it('answers an unknown page with the not-found page', async () => {
    const cookie = await webSignIn(h, tenant.adminUsername, password);
    const response = await h.request('GET', '/app/khong-co', { headers: { cookie } });
    expect(response.status).toBe(404);
    expect(await response.text()).toContain('Không tìm thấy trang');
  });
});
