import { recordIssuedSecret } from '../../../test/support/runLog';
import { issueToken } from '../../src/auth/tokens';
import { type BrowserWorld, openBrowserWorld, signInThroughPage } from '../support/browser';
import { createHarness, type Harness, type SeededTenant, seedTenant } from '../support/harness';

/** Signing in, in Debian's Chromium: the form, and `?at=` leaving no token in URL or history. */

jest.setTimeout(120_000);

let h: Harness;
let world: BrowserWorld;
let tenant: SeededTenant;
const password = 'Mật-khẩu-đủ-dài-2026';

beforeAll(async () => {
  h = createHarness();
  tenant = await seedTenant(h, 'WEBB', { adminPassword: password });
  world = await openBrowserWorld(h);
});
afterAll(async () => {
  await world?.close();
  await h?.close();
});
afterEach(() => expect(world.takeErrors()).toEqual([]));

describe('signing in to the web app', () => {
  it('signs in with the password form and out again', async () => {
    const context = await world.newContext();
    const page = await world.newPage(context);
    await signInThroughPage(world, page, tenant.adminUsername, password);
    await expect(page.locator('.user-name').textContent()).resolves.toContain(tenant.adminUsername);
    await Promise.all([
      page.waitForURL(/dang-nhap\?ended=signed-out/),
      page.click('.sign-out button'),
    ]);
    await page.goto(`${world.origin}/app/dashboard`);
    expect(new URL(page.url()).pathname).toBe('/app/dang-nhap');
    await context.close();
  });

  it('opens a page with ?at= and leaves the token neither in the address bar nor in history', async () => {
    const token = await issueToken(h.deps, tenant.adminUserId, 'access');
    recordIssuedSecret(token, 'access token');
    const context = await world.newContext();
    const page = await world.newPage(context);
    await page.goto(`${world.origin}/app/dashboard?at=${token}`);
    expect(page.url()).toBe(`${world.origin}/app/dashboard`);
    expect(await page.evaluate('location.href')).not.toContain(token);
    // The redirect replaced the entry: going back leaves the app rather than revisiting the token.
    await page.goBack();
    expect(page.url()).toBe('about:blank');
    await context.close();
  });
});
