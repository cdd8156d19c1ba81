import 'reflect-metadata';
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { attempt, derToPem, tempDir } from '../../../test/support/tools';
import { inTransaction } from '../../src/db/database';
import { developmentCa, developmentTsaCredentials } from '../../src/dev/developmentCa';
import { sealKey } from '../../src/keys/signingKeys';
import { prepareSigningKeys } from '../../src/keys/startup';
import { devOutboxMessages } from '../../src/notify/devOutbox';
import { contractMail, otpSms } from '../../src/notify/messages';
import { queueMail, queueSms } from '../../src/notify/outbox';
import { lastOutboxMessages, mailDetail } from '../../src/notify/views';
import { readCertificate } from '../../src/signing/certificates/certificate';
import { manualWorker } from '../notify/support';
import { createHarness, type Harness, seedTenant } from '../support/harness';

/**
 * What several instances on one database share instead of keeping it under their own DATA_DIR
 * (issue 19): the development CA and the seal, and the development outboxes. Each "instance" is
 * a runtime with its own DATA_DIR on the database of the first, with the same SECRET_KEY;
 * nothing here is SQLite-specific (Kysely and the harness only).
 */

jest.setTimeout(120_000);

const secret = { SECRET_KEY: 'one master secret for every instance' };
const temp = tempDir('esign-instances-');
const opened: Harness[] = [];
afterAll(async () => {
  // Instances sharing a database close before the one that owns it.
  for (const h of opened.reverse()) await h.close();
  temp.remove();
});

function instances(count: number): Harness[] {
  const first = createHarness(secret);
  const all = [first];
  for (let i = 1; i < count; i++) all.push(createHarness(secret, { sameDatabaseAs: first }));
  opened.push(...all);
  return all;
}

const pemFile = (name: string, der: Buffer) => {
  const file = path.join(temp.dir, `${name}.pem`);
  fs.writeFileSync(file, derToPem(der));
  return file;
};

describe('two instances starting together on one database', () => {
  it('make one development CA and one seal, whose certificate chains to it', async () => {
    const [a, b] = instances(2);
    // Both start-ups create at once (a server and a second instance, or the CLI).
    await Promise.all([prepareSigningKeys(a!.deps), prepareSigningKeys(b!.deps)]);
    const [caA, caB] = await Promise.all([developmentCa(a!.deps), developmentCa(b!.deps)]);
    expect(caA.certificate.equals(caB.certificate)).toBe(true);
    const [sealA, sealB] = await Promise.all([sealKey(a!.deps), sealKey(b!.deps)]);
    expect(sealA.id).toBe(sealB.id);
    expect(sealA.certificate).not.toBeNull();
    expect(sealA.certificate!.equals(sealB.certificate!)).toBe(true);
    // One CA row; the loser's CA left nothing behind. Its records hold the TSA and the seal (a
    // second certificate for the same seal key, issued by the instance that lost the race to
    // record one, is kept too: the seal row keeps the first).
    expect(await a!.deps.db.selectFrom('development_ca').select('id').execute()).toEqual([
      { id: 1 },
    ]);
    const issued = await a!.deps.db
      .selectFrom('development_ca_issued')
      .select('serial_hex')
      .execute();
    const tsa = await developmentTsaCredentials(b!.deps);
    expect(issued.map((row) => row.serial_hex)).toEqual(
      expect.arrayContaining([
        readCertificate(tsa.certificate).serialHex,
        readCertificate(sealA.certificate!).serialHex,
      ]),
    );
    expect(issued.length).toBeLessThanOrEqual(3);
    // openssl: the seal (made by whichever won) and the TSA chain to the CA both instances trust.
    const root = pemFile('shared-root', caB.certificate);
    for (const [name, der] of [
      ['seal', sealA.certificate!],
      ['tsa', tsa.certificate],
    ] as const) {
      expect(attempt('openssl', ['verify', '-CAfile', root, pemFile(name, der)]).status).toBe(0);
    }
    // The OCSP record of the seal is seen by the other instance.
    expect(await caB.hasIssued(readCertificate(sealA.certificate!).serialHex)).toBe(true);
    // Nothing of it under either DATA_DIR.
    for (const h of [a!, b!]) expect(fs.existsSync(path.join(h.dataDir, 'dev-ca'))).toBe(false);
  });
});

describe('the development outboxes', () => {
  it('what one instance sent, another shows (sensitive bodies included), sealed at rest', async () => {
    const [a, b] = instances(2);
    const { tenantId } = await seedTenant(a!, 'ACME');
    const link = 'http://127.0.0.1:3000/app/ky-so/shared-instance-link';
    const invitation = contractMail(
      'invitation',
      {
        recipientName: 'Nguyễn Văn Ánh',
        contractId: 'c-1',
        contractTitle: 'Hợp đồng 02/2026',
        senderName: 'Trần Thị Bình',
        link,
        deadline: '2026-12-02T08:00:00.000Z',
        reason: null,
      },
      { locale: 'vi', serviceName: 'ESign' },
    );
    const { mailId, smsId } = await inTransaction(a!.deps.db, async (trx) => ({
      mailId: (
        await queueMail(trx, a!.deps, {
          tenantId,
          kind: 'contract_invitation',
          to: 'anh@example.com',
          toName: 'Nguyễn Văn Ánh',
          ...invitation,
        })
      ).id,
      smsId: (
        await queueSms(trx, a!.deps, {
          tenantId,
          kind: 'otp',
          to: '0912345678',
          text: otpSms('vi', '042917', 5),
          sensitive: true,
        })
      ).id,
    }));
    const worker = manualWorker(a!.deps);
    await worker.drain();
    await worker.stop();

    // B never wrote an outbox file, yet shows both bodies.
    expect(fs.existsSync(path.join(b!.dataDir, 'outbox'))).toBe(false);
    const sms = await lastOutboxMessages(b!.deps, { channel: 'sms', limit: 10 });
    expect(sms.find((m) => m.id === smsId)).toMatchObject({
      status: 'sent',
      text: expect.stringContaining('042917'),
    });
    const mail = await mailDetail(b!.deps, mailId);
    expect(mail.text).toContain(link);
    expect(mail.html).toContain(`href="${link}"`);
    expect(await devOutboxMessages(b!.deps, 'sms', '0912345678')).toEqual([
      expect.objectContaining({ content: expect.stringContaining('042917') }),
    ]);

    // At rest the code and the link are sealed; another master secret opens nothing.
    const rows = await b!.deps.db.selectFrom('dev_outbox').selectAll().execute();
    expect(rows.map((row) => row.channel).sort()).toEqual(['mail', 'sms']);
    for (const row of rows) {
      expect(row.sealed_content).not.toContain('042917');
      expect(row.sealed_content).not.toContain('shared-instance-link');
    }
  });
});

describe('an upgraded single host', () => {
  it('imports DATA_DIR/dev-ca into the database on first start and renames it dev-ca.imported', async () => {
    // A CA as versions before migration 029 left it: the same sealed formats, in files.
    const [old] = instances(1);
    const oldCa = await developmentCa(old!.deps);
    const oldIssued = await oldCa.issue({ kind: 'seal', serviceName: 'ESign' }, subjectKey());
    const row = await old!.deps.db
      .selectFrom('development_ca')
      .selectAll()
      .executeTakeFirstOrThrow();

    const [upgraded] = instances(1);
    const dir = path.join(upgraded!.dataDir, 'dev-ca');
    fs.mkdirSync(path.join(dir, 'issued'), { recursive: true, mode: 0o700 });
    fs.writeFileSync(path.join(dir, 'ca.pem'), derToPem(row.ca_certificate_der));
    fs.writeFileSync(path.join(dir, 'ca.key'), row.ca_private_key, { mode: 0o600 });
    fs.writeFileSync(path.join(dir, 'tsa.pem'), derToPem(row.tsa_certificate_der));
    fs.writeFileSync(path.join(dir, 'tsa.key'), row.tsa_private_key, { mode: 0o600 });
    const issuedSerial = readCertificate(oldIssued).serialHex;
    fs.writeFileSync(path.join(dir, 'issued', `${issuedSerial}.der`), oldIssued);

    await prepareSigningKeys(upgraded!.deps);
    const imported = await developmentCa(upgraded!.deps);
    expect(imported.certificate.equals(oldCa.certificate)).toBe(true);
    // The imported keys open under the same master secret: the TSA signs, the CA issues.
    const tsa = await developmentTsaCredentials(upgraded!.deps);
    expect(tsa.certificate.equals(row.tsa_certificate_der)).toBe(true);
    const seal = await sealKey(upgraded!.deps);
    const root = pemFile('imported-root', imported.certificate);
    expect(
      attempt('openssl', ['verify', '-CAfile', root, pemFile('imported-seal', seal.certificate!)])
        .status,
    ).toBe(0);
    // What the old CA issued stays known to its OCSP responder.
    expect(await imported.hasIssued(issuedSerial)).toBe(true);
    expect(await imported.hasIssued(readCertificate(tsa.certificate).serialHex)).toBe(true);
    // The folder is read no more: renamed, whole.
    expect(fs.existsSync(dir)).toBe(false);
    expect(fs.readdirSync(path.join(upgraded!.dataDir, 'dev-ca.imported')).sort()).toEqual([
      'ca.key',
      'ca.pem',
      'issued',
      'tsa.key',
      'tsa.pem',
    ]);
  });
});

/** A public key to certify, DER SPKI. */
function subjectKey(): Buffer {
  return crypto
    .generateKeyPairSync('ec', { namedCurve: 'prime256v1' })
    .publicKey.export({ format: 'der', type: 'spki' });
}
