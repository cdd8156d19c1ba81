import { contractsPath } from '../contracts/fixtures';
import { parseMail } from '../notify/support';
import { pdfsig, pdfsigSignatures } from '../signing/pdf/corpus';
import {
  codeOf,
  dataOf,
  developmentTsa,
  openSessionWorld,
  persisted,
  type SessionWorld,
  SoftToken,
} from './world';

jest.setTimeout(180_000);

let world: SessionWorld;
let token: SoftToken;
beforeAll(async () => {
  world = await openSessionWorld();
  token = await SoftToken.create(world, { name: 'Nguyễn Văn Ánh', email: 'anh@partner.example' });
});
afterAll(async () => {
  token?.remove();
  await world?.close();
});

/** Two signers of order 1 in parallel, one of order 2 after them. */
const parallel = [
  { name: 'Nguyễn Văn Ánh', email: 'anh@partner.example', phone: '0912345678', order: 1 },
  { name: 'Phạm Thị Dung', email: 'dung@partner.example', phone: '0933333333', order: 1 },
  { name: 'Trần Thị Bình', email: 'binh@partner.example', order: 2 },
];

async function otpSession(contractId: string, email: string, phone: string) {
  const { sessionId } = await dataOf<{ sessionId: string }>(
    await world.initiate(contractId, email, 'otp_sms'),
  );
  expect((await world.step(sessionId, 'send-otp')).status).toBe(200);
  await world.deliver();
  return { sessionId, otp: world.otpFor(phone) };
}

const versionsOf = async (contractId: string) => {
  const contract = await world.h.deps.db
    .selectFrom('contracts')
    .select('id')
    .where('uuid', '=', contractId)
    .executeTakeFirstOrThrow();
  return world.h.deps.db
    .selectFrom('contract_file_versions')
    .selectAll()
    .where('contract_id', '=', contract.id)
    .orderBy('version')
    .execute();
};

describe('parallel signers of one order, both prepared from the same version', () => {
  it('server-key methods: the second confirm is prepared again from the newest version; both signatures stay', async () => {
    const id = await world.sentContract(parallel);
    // Both sessions are prepared from version 1 before either signs.
    const anh = await otpSession(id, 'anh@partner.example', '0912345678');
    const dung = await otpSession(id, 'dung@partner.example', '0933333333');
    const first = await dataOf<{ contractStatus: string }>(
      await world.step(anh.sessionId, 'confirm', { otp: anh.otp }),
    );
    expect(first.contractStatus).toBe('signing');
    // The order is not done: nobody of order 2 is invited yet.
    let detail = await dataOf<{ signers: { email: string; status: string }[] }>(
      await world.request('GET', `${contractsPath}/${id}`, world.acme.orgKey),
    );
    expect(detail.signers.find((s) => s.email === 'binh@partner.example')!.status).toBe('waiting');

    const second = await dataOf<{ contractStatus: string }>(
      await world.step(dung.sessionId, 'confirm', { otp: dung.otp }),
    );
    expect(second.contractStatus).toBe('signing');
    const versions = await versionsOf(id);
    expect(versions.map((v) => v.version)).toEqual([1, 2, 3]);
    const verdicts = pdfsigSignatures(pdfsig(await world.signedFile(id, 'parallel-seal.pdf')));
    expect(verdicts.map((s) => s.valid)).toEqual([true, true]);

    detail = await dataOf(await world.request('GET', `${contractsPath}/${id}`, world.acme.orgKey));
    expect(detail.signers.map((s) => s.status)).toEqual(['signed', 'signed', 'invited']);
    await world.deliver();
    const turnMails = world.smtp.received
      .map((mail) => parseMail(mail.raw))
      .filter((mail) => mail.header('subject')?.includes('Một lượt ký đã xong'))
      .filter((mail) => mail.text?.includes(id));
    expect(turnMails).toHaveLength(1);
    expect(turnMails[0]!.text).toContain('Nguyễn Văn Ánh, Phạm Thị Dung');
  });

  it('server-key methods confirmed at the same moment: the one that loses the race signs again on the newest version', async () => {
    const id = await world.sentContract(parallel);
    const anh = await otpSession(id, 'anh@partner.example', '0912345678');
    const dung = await otpSession(id, 'dung@partner.example', '0933333333');
    const before = await persisted(world);
    const answers = await Promise.all([
      world.step(anh.sessionId, 'confirm', { otp: anh.otp }),
      world.step(dung.sessionId, 'confirm', { otp: dung.otp }),
    ]);
    expect(answers.map((a) => a.status)).toEqual([200, 200]);
    expect((await versionsOf(id)).map((v) => v.version)).toEqual([1, 2, 3]);
    // Each confirm prepares anew (its /M is the moment of signing); the loser's preparation
    // was given up and a new one made from version 2.
    const after = await persisted(world);
    const made = after.preparations.filter((p) => !before.preparations.some((b) => b.id === p.id));
    expect(made.map((p) => p.state).sort()).toEqual(['abandoned', 'finalized', 'finalized']);
    const verdicts = pdfsigSignatures(pdfsig(await world.signedFile(id, 'parallel-race.pdf')));
    expect(verdicts.map((s) => s.valid)).toEqual([true, true]);
  });

  it('usb_token: a signature over the outdated revision answers 409 DOCUMENT_CHANGED and changes nothing; a new initiate signs', async () => {
    const id = await world.sentContract(parallel);
    const usb = await dataOf<{ sessionId: string; contractHash: string; tsaUrl: string }>(
      await world.initiate(id, 'anh@partner.example', 'usb_token'),
    );
    const dung = await otpSession(id, 'dung@partner.example', '0933333333');
    expect((await world.step(dung.sessionId, 'confirm', { otp: dung.otp })).status).toBe(200);

    const tsa = developmentTsa(world, usb.tsaUrl);
    try {
      const outdated = await token.signAsClient(usb.contractHash, tsa.stamp);
      const before = await persisted(world);
      expect(await codeOf(await world.step(usb.sessionId, 'sign-with-token', outdated))).toEqual({
        status: 409,
        code: 'DOCUMENT_CHANGED',
      });
      expect(await persisted(world)).toEqual(before);

      const again = await dataOf<{ sessionId: string; contractHash: string }>(
        await world.initiate(id, 'anh@partner.example', 'usb_token'),
      );
      expect(again.contractHash).not.toBe(usb.contractHash);
      const body = await token.signAsClient(again.contractHash, tsa.stamp);
      const signed = await dataOf<{ contractStatus: string }>(
        await world.step(again.sessionId, 'sign-with-token', body),
      );
      expect(signed.contractStatus).toBe('signing');
    } finally {
      tsa.remove();
    }
    expect((await versionsOf(id)).map((v) => v.version)).toEqual([1, 2, 3]);
    const verdicts = pdfsigSignatures(pdfsig(await world.signedFile(id, 'parallel-token.pdf')));
    expect(verdicts.map((s) => s.valid)).toEqual([true, true]);
  });

  it('a refused token signature leaves the session open for another try', async () => {
    const id = await world.sentContract(parallel);
    const usb = await dataOf<{ sessionId: string; contractHash: string; tsaUrl: string }>(
      await world.initiate(id, 'anh@partner.example', 'usb_token'),
    );
    const tsa = developmentTsa(world, usb.tsaUrl);
    try {
      const body = await token.signAsClient(usb.contractHash, tsa.stamp);
      const before = await persisted(world);
      const tampered = { ...body, signedHash: Buffer.alloc(256, 7).toString('base64') };
      const refused = await codeOf(await world.step(usb.sessionId, 'sign-with-token', tampered));
      expect(refused.status).toBe(422);
      expect(await persisted(world)).toEqual(before);
      expect((await world.step(usb.sessionId, 'sign-with-token', body)).status).toBe(200);
    } finally {
      tsa.remove();
    }
  });
});
