import { inviteSigners } from '../../src/contracts/invitations';
import { contractById, signersOf } from '../../src/contracts/queries';
import { inTransaction } from '../../src/db/database';
import { contractsPath } from '../contracts/fixtures';
import { parseMail } from '../notify/support';
import { codeOf, dataOf, openSessionWorld, type SessionWorld, signingPath } from './world';

/**
 * The e-mailed invitation link ({APP_URL}/ky-so/<token>) through HTTP: the signer reads it,
 * starts a session without any partner credential and signs with the page credential.
 */

jest.setTimeout(180_000);

let world: SessionWorld;
beforeAll(async () => {
  world = await openSessionWorld();
});
afterAll(async () => {
  await world?.close();
});

interface InvitationView {
  contract: { id: string; title: string; expiredAt: string };
  signer: { name: string; email: string; role: string; status: string };
  yourTurn: boolean;
  waitingForOrder: number | null;
  signingMethods: string[];
}

interface Started {
  sessionId: string;
  pageCredential: string;
  signingMethod: string;
  contractHash: string;
  contract: { id: string; title: string };
  signer: { name: string; email: string };
}

/** The invitation tokens e-mailed to `email` since `before` (index into the sink), newest last. */
async function invitationTokens(email: string, before: number): Promise<string[]> {
  await world.deliver();
  return world.smtp.received
    .slice(before)
    .filter((mail) => mail.to.includes(email))
    .map((mail) => parseMail(mail.raw).text ?? '')
    .map((text) => /https:\/\/app\.esign\.example\/ky-so\/([A-Za-z0-9_-]{43})\b/.exec(text)?.[1])
    .filter((token): token is string => token !== undefined);
}

function read(token: string) {
  world.tick();
  return world.h.request('POST', `${signingPath}/invitation`, { json: { token } });
}

function start(token: string, signingMethod: string) {
  world.tick();
  return world.h.request('POST', `${signingPath}/invitation/session`, {
    json: { token, signingMethod },
  });
}

async function auditActions(contractId: string): Promise<{ action: string; details: unknown }[]> {
  const detail = await dataOf<{ auditTrail: { action: string; details: unknown }[] }>(
    await world.request('GET', `${contractsPath}/${contractId}`, world.acme.orgKey),
  );
  return detail.auditTrail;
}

describe('the invitation link', () => {
  it('reads, starts otp_sms, confirms with the SMS code: signed; the link stays the signer’s', async () => {
    const before = world.smtp.received.length;
    const contractId = await world.sentContract(
      [
        { name: 'Nguyễn Văn Ánh', email: 'anh@partner.example', phone: '0912345678', order: 1 },
        { name: 'Trần Thị Bình', email: 'binh@partner.example', order: 2 },
      ],
      { title: 'Hợp đồng dịch vụ' },
    );
    const [token] = await invitationTokens('anh@partner.example', before);
    expect(token).toBeDefined();

    const view = await dataOf<InvitationView>(await read(token!));
    expect(view).toEqual({
      contract: { id: contractId, title: 'Hợp đồng dịch vụ', expiredAt: expect.any(String) },
      signer: {
        name: 'Nguyễn Văn Ánh',
        email: 'anh@partner.example',
        role: 'signer',
        status: 'invited',
      },
      yourTurn: true,
      waitingForOrder: null,
      signingMethods: ['usb_token', 'cloud_hsm', 'otp_sms', 'image_signature'],
    });

    // A first session, then a second from the same link: the second supersedes the first.
    const first = await dataOf<Started>(await start(token!, 'image_signature'));
    const started = await dataOf<Started>(await start(token!, 'otp_sms'));
    expect(started).toMatchObject({
      signingMethod: 'otp_sms',
      contract: { id: contractId, title: 'Hợp đồng dịch vụ' },
      signer: { name: 'Nguyễn Văn Ánh', email: 'anh@partner.example' },
    });
    expect(started.contractHash).toMatch(/^sha256:[0-9a-f]{64}$/);
    expect(
      await codeOf(
        await world.step(first.sessionId, 'send-otp', {}, { page: first.pageCredential }),
      ),
    ).toEqual({ status: 409, code: 'SESSION_SUPERSEDED' });

    const page = { page: started.pageCredential };
    expect((await world.step(started.sessionId, 'send-otp', {}, page)).status).toBe(200);
    await world.deliver();
    const otp = world.otpFor('0912345678');
    const signed = await world.step(started.sessionId, 'confirm', { otp }, page);
    expect(signed.status).toBe(200);

    const after = await dataOf<InvitationView>(await read(token!));
    expect(after).toMatchObject({
      signer: { status: 'signed' },
      yourTurn: false,
      signingMethods: [],
    });
    expect(await codeOf(await start(token!, 'otp_sms'))).toEqual({
      status: 409,
      code: 'SIGNER_ALREADY_SIGNED',
    });

    const trail = await auditActions(contractId);
    const initiated = trail.filter((event) => event.action === 'session_initiated');
    expect(initiated).toHaveLength(2);
    expect(trail.filter((event) => event.action === 'viewed').map((e) => e.details)).toEqual(
      expect.arrayContaining([{ via: 'invitation' }, { via: 'invitation', method: 'otp_sms' }]),
    );
  });

  it('refuses a signer whose order has not come: NOT_SIGNER_TURN; a viewer: SIGNER_IS_VIEWER', async () => {
    const sent = world.smtp.received.length;
    const contractId = await world.sentContract([
      { name: 'Phạm Thị Dung', email: 'dung@partner.example', order: 1 },
      { name: 'Lê Văn Cường', email: 'cuong@partner.example', order: 2 },
      { name: 'Lê Quan Sát', email: 'viewer@partner.example', order: 3, role: 'viewer' },
    ]);
    const [viewerToken] = await invitationTokens('viewer@partner.example', sent);
    expect(await dataOf<InvitationView>(await read(viewerToken!))).toMatchObject({
      signer: { role: 'viewer' },
      yourTurn: false,
      signingMethods: [],
    });
    expect(await codeOf(await start(viewerToken!, 'otp_sms'))).toEqual({
      status: 409,
      code: 'SIGNER_IS_VIEWER',
    });
    const before = world.smtp.received.length;
    // A link for order 2 before order 1 signed (as a resend by mistake would make).
    const deps = world.h.deps;
    const { id } = await deps.db
      .selectFrom('contracts')
      .select('id')
      .where('uuid', '=', contractId)
      .executeTakeFirstOrThrow();
    const row = (await contractById(deps.db, id))!;
    const cuong = (await signersOf(deps.db, row.id)).find(
      (s) => s.email === 'cuong@partner.example',
    )!;
    await inTransaction(deps.db, (trx) => inviteSigners(trx, deps, row, [cuong], null));
    const [token] = await invitationTokens('cuong@partner.example', before);

    const view = await dataOf<InvitationView>(await read(token!));
    expect(view).toMatchObject({ yourTurn: false, waitingForOrder: 1 });
    expect(await codeOf(await start(token!, 'otp_sms'))).toEqual({
      status: 409,
      code: 'NOT_SIGNER_TURN',
    });
  });

  it('answers 410 INVITATION_EXPIRED once the contract is cancelled, 404 for an unknown token', async () => {
    const before = world.smtp.received.length;
    const contractId = await world.sentContract([
      { name: 'Võ Thị Em', email: 'em@partner.example', phone: '0900000001', order: 1 },
    ]);
    const [token] = await invitationTokens('em@partner.example', before);
    expect((await read(token!)).status).toBe(200);
    const cancelled = await world.request(
      'DELETE',
      `${contractsPath}/${contractId}`,
      world.acme.orgKey,
      { reason: 'Sai thông tin' },
    );
    expect(cancelled.status).toBe(200);
    expect(await codeOf(await read(token!))).toEqual({ status: 410, code: 'INVITATION_EXPIRED' });
    expect(await codeOf(await start(token!, 'otp_sms'))).toEqual({
      status: 410,
      code: 'INVITATION_EXPIRED',
    });
    expect(await codeOf(await read('A'.repeat(43)))).toEqual({
      status: 404,
      code: 'INVITATION_NOT_FOUND',
    });
  });

  it('answers 410 INVITATION_EXPIRED after the deadline', async () => {
    const before = world.smtp.received.length;
    await world.sentContract([{ name: 'Đỗ Văn Phúc', email: 'phuc@partner.example', order: 1 }]);
    const [token] = await invitationTokens('phuc@partner.example', before);
    world.h.clock.set(new Date(Date.now() + 8 * 86_400_000));
    const response = await world.h.request('POST', `${signingPath}/invitation`, {
      json: { token },
    });
    expect(await codeOf(response)).toEqual({ status: 410, code: 'INVITATION_EXPIRED' });
    world.h.clock.set(new Date());
  });
});
