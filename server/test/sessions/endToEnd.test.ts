import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import type { TestHttpsServer } from '../../../test/support/httpsServer';
import {
  createOpensslPki,
  type OpensslPki,
  opensslReply,
  sendReply,
  startTsaServer,
} from '../../../test/support/opensslTsa';
import { verifyPdfSignatures } from '../../src/signing/verification';
import { localStoreOf } from '../../src/storage/localFileStore';
import { addTrustAnchor } from '../../src/trust/service';
import { contractsPath } from '../contracts/fixtures';
import { parseMail } from '../notify/support';
import { pdfsig, pdfsigSignatures } from '../signing/pdf/corpus';
import { strokePng } from '../signing/pdf/pngs';
import {
  dataOf,
  json,
  openSessionWorld,
  remoteTsa,
  type SessionWorld,
  SoftToken,
  signingPath,
} from './world';

jest.setTimeout(180_000);

let world: SessionWorld;
let token: SoftToken;
/** The TSA: `openssl ts` behind an HTTPS wrapper, trusted as a global anchor; TSA_URL names it. */
let tsaPki: OpensslPki;
let tsaServer: TestHttpsServer;
beforeAll(async () => {
  tsaPki = createOpensslPki();
  tsaServer = await startTsaServer({
    '/tsa': (query, _request, response) => sendReply(response, opensslReply(tsaPki, query)),
  });
  world = await openSessionWorld({
    TSA_URL: tsaServer.url('/tsa'),
    OUTBOUND_ALLOWLIST: '127.0.0.1',
  });
  await addTrustAnchor(world.h.deps.db, world.h.now(), {
    tenantId: null,
    certificateFile: tsaPki.rootDer,
  });
  token = await SoftToken.create(world, { name: 'Nguyễn Văn Ánh', email: 'anh@partner.example' });
});
afterAll(async () => {
  token?.remove();
  await world?.close();
  await tsaServer?.close();
  tsaPki?.remove();
});

const signers = [
  { name: 'Nguyễn Văn Ánh', email: 'anh@partner.example', phone: '0912345678', order: 1 },
  { name: 'Trần Thị Bình', email: 'binh@partner.example', phone: '0987654321', order: 2 },
  {
    name: 'Lê Văn Cường',
    email: 'cuong@partner.example',
    order: 3,
    placement: { x: 320, y: 420, width: 200, height: 100 },
  },
];

interface SignatureResult {
  signatureId: string;
  signedAt: string;
  certificateInfo: { subject: string; issuer: string; validFrom: string; validTo: string };
  contractStatus: string;
}

describe('a contract signed by usb_token, cloud_hsm and image_signature in turn', () => {
  let contractId: string;
  const creatorMail = () =>
    world.smtp.received
      .filter((mail) => mail.to.includes('admin.acme@example.com'))
      .map((mail) => parseMail(mail.raw).header('subject') ?? '');

  it('runs through HTTP from send to completed; pdfsig, the audit PDF and the e-mails agree', async () => {
    contractId = await world.sentContract(signers, { title: 'Hợp đồng ba bên' });
    await world.deliver();

    // 1. usb_token: the signature is made on the SoftHSM token over the shared builder's attributes.
    const usb = await dataOf<{
      sessionId: string;
      contractHash: string;
      tsaUrl: string;
      signingUrl: string;
      expiresAt: string;
    }>(await world.initiate(contractId, 'anh@partner.example', 'usb_token'));
    expect(usb.contractHash).toMatch(/^sha256:[0-9a-f]{64}$/);
    expect(usb.sessionId).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(usb.signingUrl).toMatch(
      /^https:\/\/app\.esign\.example\/ky-so\/phien\/[A-Za-z0-9_-]{43}$/,
    );
    expect(usb.tsaUrl).toBe(tsaServer.url('/tsa'));
    expect(new Date(usb.expiresAt).getTime() - world.h.clock.now().getTime()).toBeLessThanOrEqual(
      30 * 60_000,
    );
    const tsa = remoteTsa(usb.tsaUrl);
    const body = await token.signAsClient(usb.contractHash, tsa.stamp);
    tsa.remove();
    const first = await dataOf<SignatureResult>(
      await world.step(usb.sessionId, 'sign-with-token', body),
    );
    expect(first.contractStatus).toBe('signing');
    expect(first.certificateInfo.subject).toContain('Nguyễn Văn Ánh');
    await world.deliver();

    // 2. cloud_hsm: the signer's own key (made on first use in development), OTP by SMS.
    const cloud = await dataOf<{ sessionId: string; tsaUrl?: string }>(
      await world.initiate(contractId, 'binh@partner.example', 'cloud_hsm'),
    );
    expect(cloud.tsaUrl).toBeUndefined();
    const sent = await world.step(cloud.sessionId, 'send-otp');
    const sentBody = await json<{ message: string; data: { otpExpiredAt: string } }>(sent);
    expect(sent.status).toBe(200);
    expect(sentBody.message).toContain('09******21');
    expect(new Date(sentBody.data.otpExpiredAt).getTime() - world.h.clock.now().getTime()).toBe(
      5 * 60_000,
    );
    await world.deliver();
    const otp = world.otpFor('0987654321');
    const second = await dataOf<SignatureResult>(
      await world.step(cloud.sessionId, 'confirm', { otp }),
    );
    expect(second.contractStatus).toBe('signing');
    expect(second.certificateInfo.subject).toContain('Trần Thị Bình');
    await world.deliver();

    // 3. image_signature, on the signing page opened from signingUrl (no partner credential).
    const image = await dataOf<{ sessionId: string; signingUrl: string }>(
      await world.initiate(contractId, 'cuong@partner.example', 'image_signature'),
    );
    const linkToken = image.signingUrl.split('/').at(-1)!;
    const page = await dataOf<{
      sessionId: string;
      pageCredential: string;
      signer: { name: string };
    }>(
      await world.h.request('POST', `${signingPath}/page-credential`, {
        json: { token: linkToken },
      }),
    );
    expect(page.sessionId).toBe(image.sessionId);
    expect(page.signer.name).toBe('Lê Văn Cường');
    const picture = `data:image/png;base64,${strokePng().toString('base64')}`;
    const third = await dataOf<SignatureResult>(
      await world.step(
        image.sessionId,
        'confirm',
        { signatureImage: picture },
        { page: page.pageCredential },
      ),
    );
    expect(third.contractStatus).toBe('completed');
    await world.deliver();

    // The signed file: three valid signatures for pdfsig, the picture on the last page, then the
    // archive's document timestamp (pdfsig lists it; poppler does not validate RFC 3161 ones).
    const file = await world.signedFile(contractId, 'signed.pdf');
    const verdicts = pdfsigSignatures(pdfsig(file));
    expect(verdicts.map((s) => s.valid)).toEqual([true, true, true, false]);
    expect(verdicts[3]!.text).toContain('Signature Field Name: DocumentTimestamp1');
    expect(verdicts[3]!.total).toBe(true);
    const images = execFileSync('pdfimages', ['-list', file], { encoding: 'utf8' });
    expect(images).toMatch(/image\s+40\s+20\s+rgb/);
    expect(images).toMatch(/smask\s+40\s+20\s+gray/);
    const text = execFileSync('pdftotext', [file, '-'], { encoding: 'utf8' });
    for (const name of ['Nguyễn Văn Ánh', 'Trần Thị Bình', 'Lê Văn Cường']) {
      expect(text).toContain(`Ký bởi: ${name}`);
    }

    // The service's verification agrees with pdfsig, and names the signers.
    const verification = await dataOf<{
      isValid: boolean;
      signatures: {
        signerName: string;
        fieldName: string;
        isValid: boolean;
        integrityCheck: string;
        certificateStatus: string;
        timestampVerified: boolean;
        level: string;
        problems: string[];
      }[];
    }>(await world.request('GET', `${signingPath}/verify/${contractId}`, world.acme.orgKey));
    expect(verification.isValid).toBe(true);
    const archive = verification.signatures[3];
    expect(
      verification.signatures.map((s) => [
        s.signerName,
        s.isValid,
        s.integrityCheck,
        s.timestampVerified,
      ]),
    ).toEqual([
      ['Nguyễn Văn Ánh', true, 'passed', true],
      ['Trần Thị Bình', true, 'passed', true],
      ['Lê Văn Cường', true, 'passed', true],
      [archive!.signerName, true, 'passed', true],
    ]);
    expect(archive!.fieldName).toBe('DocumentTimestamp1');
    expect(verification.signatures.map((s) => s.certificateStatus)).toEqual([
      'valid',
      'valid',
      'valid',
      'valid',
    ]);
    // Completed: the DSS answers for every chain and a document timestamp covers it (B-LTA).
    expect(verification.signatures.map((s) => s.level)).toEqual(['B-LTA', 'B-LTA', 'B-LTA', 'B-T']);

    // The detail: every signer signed with their method.
    const detail = await dataOf<{
      status: string;
      signers: { email: string; status: string; method: string }[];
      auditTrail: { action: string; details: Record<string, unknown> }[];
    }>(await world.request('GET', `${contractsPath}/${contractId}`, world.acme.orgKey));
    expect(detail.status).toBe('completed');
    expect(detail.signers.map((s) => [s.status, s.method])).toEqual([
      ['signed', 'usb_token'],
      ['signed', 'cloud_hsm'],
      ['signed', 'image_signature'],
    ]);

    // The audit trail says the levels verification says: the completion, for the final file;
    // each signature, for the version it made (verified again here).
    const completed = detail.auditTrail.find((event) => event.action === 'completed')!;
    expect(completed.details.levels).toEqual(
      Object.fromEntries(verification.signatures.slice(0, 3).map((s) => [s.fieldName, s.level])),
    );
    expect(completed.details).toMatchObject({
      fileVersion: 5,
      documentTimestamp: { fieldName: 'DocumentTimestamp1' },
    });
    const versions = await world.h.deps.db
      .selectFrom('contract_file_versions')
      .innerJoin('contracts', 'contracts.id', 'contract_file_versions.contract_id')
      .select([
        'contract_file_versions.sha256',
        'contract_file_versions.kind',
        'contracts.tenant_id',
      ])
      .where('contracts.uuid', '=', contractId)
      .orderBy('contract_file_versions.version')
      .execute();
    expect(versions.map((v) => v.kind)).toEqual([
      'original',
      'signature',
      'signature',
      'signature',
      'archive',
    ]);
    const signedEvents = detail.auditTrail.filter((event) => event.action === 'signed');
    for (const [index, event] of signedEvents.entries()) {
      const version = versions[index + 1]!;
      const then = await verifyPdfSignatures(
        world.h.deps,
        localStoreOf(world.h.deps.files).pathOf(version.sha256),
        {
          tenantId: version.tenant_id,
        },
      );
      expect({ index, level: event.details.level }).toEqual({
        index,
        level: then.signatures[index]!.level,
      });
    }

    // The audit PDF names the signers and every step.
    const audit = await world.request(
      'GET',
      `${contractsPath}/${contractId}/download?type=audit`,
      world.acme.orgKey,
    );
    const auditFile = path.join(world.h.dataDir, 'audit.pdf');
    fs.writeFileSync(auditFile, Buffer.from(await audit.arrayBuffer()));
    const trail = execFileSync('pdftotext', ['-layout', auditFile, '-'], { encoding: 'utf8' });
    for (const expected of [
      'Tạo hợp đồng',
      'Gửi ký',
      'Bắt đầu phiên ký',
      'Gửi OTP',
      'Đã ký',
      'Hoàn tất',
      'Nguyễn Văn Ánh',
      'Trần Thị Bình',
      'Lê Văn Cường',
      'usb_token',
      'cloud_hsm',
      'image_signature',
      '09******21',
      'B-LTA',
    ]) {
      expect(trail).toContain(expected);
    }

    // The creator heard of each finished turn and of the completion.
    const subjects = creatorMail();
    expect(subjects.filter((s) => s.includes('Một lượt ký đã xong'))).toHaveLength(2);
    expect(subjects.filter((s) => s.includes('Hợp đồng đã được ký xong'))).toHaveLength(1);
    // Each signer was invited when their turn came.
    for (const signer of signers) {
      expect(world.smtp.received.some((mail) => mail.to.includes(signer.email))).toBe(true);
    }
  });
});
