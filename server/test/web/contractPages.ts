import { recordIssuedSecret } from '../../../test/support/runLog';
import { issueToken } from '../../src/auth/tokens';
import type { Permission } from '../../src/tenancy/permissionCatalog';
import { createRole } from '../../src/tenancy/service';
import { dataOf, type SessionWorld } from '../sessions/world';
import { strokePng } from '../signing/pdf/pngs';
import { addUser, type Harness } from '../support/harness';
import { sessionCookieOf } from '../support/web';

/**
 * What the contract pages' and dashboard's tests share: web sessions of the world's people
 * (through `?at=`, as an embedding partner opens them) and signing through the real API.
 */

/** A web session of `userId`: an access token exchanged on `/app/dashboard?at=`. */
export async function webCookieOf(h: Harness, userId: number): Promise<string> {
  const token = await issueToken(h.deps, userId, 'access');
  recordIssuedSecret(token, 'access token');
  const response = await h.request('GET', `/app/dashboard?at=${token}`);
  if (response.status !== 303) throw new Error(`?at= answered ${response.status}`);
  return sessionCookieOf(response);
}

let people = 0;

/** A new ACME user holding only `permissions`, and their web session. */
export async function acmePersonWith(
  world: SessionWorld,
  permissions: Permission[],
): Promise<{ id: number; cookie: string }> {
  const { h, acme } = world;
  people += 1;
  const tenant = await h.deps.db
    .selectFrom('tenants')
    .selectAll()
    .where('id', '=', acme.tenantId)
    .executeTakeFirstOrThrow();
  const role = await createRole(h.deps.db, tenant, h.now(), {
    organizationCode: 'ACME',
    name: `Vai trò trang ${people}`,
    code: `WEB_ROLE_${people}`,
    permissions,
  });
  const user = await addUser(
    h,
    {
      tenantId: acme.tenantId,
      organizationId: acme.rootOrganizationId,
      code: `WEB${people}`,
      username: `web.user${people}`,
      email: `web.user${people}@acme.example`,
      name: `Nhân viên ${people}`,
      status: 2,
      type: 'internal',
    },
    [{ organizationId: acme.rootOrganizationId, roleId: role.id }],
  );
  return { id: user.id, cookie: await webCookieOf(h, user.id) };
}

const picture = `data:image/png;base64,${strokePng().toString('base64')}`;

/** Signs `contractId` as `email` with a drawn image, through the partner's API. */
export async function signWithImage(
  world: SessionWorld,
  contractId: string,
  email: string,
): Promise<void> {
  const session = await dataOf<{ sessionId: string }>(
    await world.initiate(contractId, email, 'image_signature'),
  );
  await dataOf(await world.step(session.sessionId, 'confirm', { signatureImage: picture }));
}

/** Refuses `contractId` as `email` with `reason`, through the partner's API. */
export async function rejectAs(
  world: SessionWorld,
  contractId: string,
  email: string,
  reason: string,
): Promise<void> {
  const session = await dataOf<{ sessionId: string }>(
    await world.initiate(contractId, email, 'image_signature'),
  );
  await dataOf(await world.step(session.sessionId, 'reject', { reason }));
}

/** The page's `<main>`: what a person reads, without the per-session CSRF token of the head. */
export function mainOf(html: string): string {
  const match = /<main[^>]*>([\s\S]*)<\/main>/.exec(html);
  if (!match) throw new Error('no <main> on the page');
  return match[1]!;
}

/** The page's text, tags removed and spaces collapsed, for "the page says" checks. */
export function textOf(html: string): string {
  return mainOf(html)
    .replace(/<[^>]+>/g, ' ')
    .replace(/&amp;/g, '&')
    .replace(/&quot;/g, '"')
    .replace(/&#39;/g, "'")
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>')
    .replace(/\s+/g, ' ')
    .trim();
}
