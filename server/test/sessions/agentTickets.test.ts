import { AGENT_TICKET_KEYS_PATH, parseAgentTicketClaims } from '@esign/shared';
import { createLocalJWKSet, decodeProtectedHeader, jwtVerify } from 'jose';
import { addEmbeddingOrigin } from '../../src/tenancy/embeddingOrigins';
import { tenantById } from '../../src/tenancy/queries';
import { createHarness } from '../support/harness';
import { codeOf, dataOf, openSessionWorld, type SessionWorld, signingPath } from './world';

jest.setTimeout(60_000);

let world: SessionWorld;
beforeAll(async () => {
  world = await openSessionWorld();
});
afterAll(() => world?.close());

const signer = { name: 'Nguyễn Văn Ánh', email: 'anh@partner.example', order: 1 };

async function keySet(w: { h: { app: { request(path: string): Response | Promise<Response> } } }) {
  const response = await w.h.app.request(AGENT_TICKET_KEYS_PATH);
  expect(response.status).toBe(200);
  return (await response.json()) as { keys: { kid: string; kty: string; crv: string }[] };
}

describe('signing tickets for the desktop agent', () => {
  it('publishes the ticket keys at the well-known URL: this generation and the next', async () => {
    const { keys } = await keySet(world);
    expect(keys).toHaveLength(2);
    expect(keys[0]).toMatchObject({ kty: 'EC', crv: 'P-256', alg: 'ES256', use: 'sig' });
    expect(keys[0]!.kid).not.toBe(keys[1]!.kid);
    // The next generation publishes the current "next" key first: one rotation needs no re-pin.
    const rotated = createHarness({ SECRET_KEY: 'same master', AGENT_TICKET_KEY_GENERATION: '2' });
    const before = createHarness({ SECRET_KEY: 'same master' });
    const [now, next] = [await keySet({ h: before }), await keySet({ h: rotated })];
    expect(next.keys[0]!.kid).toBe(now.keys[1]!.kid);
    await Promise.all([rotated.close(), before.close()]);
  });

  it('answers a usb_token initiate with a ticket for the signing page, signed by a published key', async () => {
    const contractId = await world.sentContract([signer]);
    const started = await dataOf<{
      sessionId: string;
      contractHash: string;
      tsaUrl: string;
      expiresAt: string;
      ticket: string;
    }>(await world.initiate(contractId, signer.email, 'usb_token'));
    const { keys } = await keySet(world);
    expect(decodeProtectedHeader(started.ticket)).toMatchObject({
      alg: 'ES256',
      typ: 'esign-agent-ticket+jwt',
      kid: keys[0]!.kid,
    });
    const { payload } = await jwtVerify(started.ticket, createLocalJWKSet({ keys }), {
      currentDate: world.h.clock.now(),
    });
    const parsed = parseAgentTicketClaims(payload);
    if (!parsed.ok) throw new Error(parsed.reason);
    expect(parsed.claims).toMatchObject({
      iss: 'http://127.0.0.1:3000',
      aud: 'esign-agent',
      origin: 'https://app.esign.example',
      sid: started.sessionId,
      contractHash: started.contractHash,
      tsaUrl: started.tsaUrl,
    });
    expect(parsed.claims.exp * 1000).toBeLessThanOrEqual(Date.parse(started.expiresAt));
    // Each initiate, a new nonce.
    const again = await dataOf<{ ticket: string }>(
      await world.initiate(contractId, signer.email, 'usb_token'),
    );
    const nonceOf = async (ticket: string) =>
      (await jwtVerify(ticket, createLocalJWKSet({ keys }), { currentDate: world.h.clock.now() }))
        .payload.nonce;
    expect(await nonceOf(again.ticket)).not.toBe(await nonceOf(started.ticket));
  });

  it('names a partner page only when it is an embedding origin of the tenant', async () => {
    const contractId = await world.sentContract([signer]);
    const initiate = (origin: string) =>
      world.request('POST', `${signingPath}/initiate`, world.acme.orgKey, {
        contractId,
        signerEmail: signer.email,
        signingMethod: 'usb_token',
        origin,
      });
    expect(await codeOf(await initiate('https://partner.example'))).toEqual({
      status: 400,
      code: 'ORIGIN_NOT_REGISTERED',
    });
    expect(await codeOf(await initiate('https://partner.example/path'))).toEqual({
      status: 400,
      code: 'VALIDATION_ERROR',
    });
    const tenant = (await tenantById(world.h.deps.db, world.acme.tenantId))!;
    await addEmbeddingOrigin(world.h.deps.db, tenant, world.h.now(), 'https://partner.example');
    const started = await dataOf<{ ticket: string }>(await initiate('https://Partner.example'));
    const { keys } = await keySet(world);
    const { payload } = await jwtVerify(started.ticket, createLocalJWKSet({ keys }), {
      currentDate: world.h.clock.now(),
    });
    expect(payload.origin).toBe('https://partner.example');
  });

  it('gives no ticket to other methods, and the OpenAPI document describes both', async () => {
    const contractId = await world.sentContract([{ ...signer, phone: '0912345678' }]);
    const cloud = await dataOf(await world.initiate(contractId, signer.email, 'cloud_hsm'));
    expect(cloud.ticket).toBeUndefined();
    const document = (await (await world.h.app.request('/api/openapi.json')).json()) as {
      paths: Record<string, Record<string, { operationId: string }>>;
      components: { schemas: Record<string, { properties: Record<string, unknown> }> };
    };
    expect(document.paths[AGENT_TICKET_KEYS_PATH]?.get?.operationId).toBe('agentTicketKeys');
    expect(document.components.schemas.SigningSession!.properties).toHaveProperty('ticket');
    expect(document.components.schemas.SigningInitiateBody!.properties).toHaveProperty('origin');
  });
});
