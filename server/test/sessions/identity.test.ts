import { execFileSync } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { readSignatures } from '../../src/pdf/signing';
import { parseSignedData } from '../../src/signing/cms';
import { registerTemplate } from '../../src/templates/service';
import { contractsPath } from '../contracts/fixtures';
import { addProcess } from '../dossiers/fixtures';
import { openTask } from '../support/dossiers';
import { exampleTemplateFile } from '../templates/fixtures';
import {
  codeOf,
  dataOf,
  developmentTsa,
  json,
  openSessionWorld,
  persisted,
  type SessionWorld,
  SoftToken,
  signingPath,
} from './world';

jest.setTimeout(240_000);

/**
 * The signer's identity bound to the certificate, over HTTP with SoftHSM tokens whose
 * development-CA certificates carry the subject UID as Vietnamese CAs write it: a certificate
 * naming another person is refused (SIGNER_IDENTITY_MISMATCH) on a contract and on a dossier
 * step, the signer's own signs (and the box shows the certificate's name), a certificate that
 * names nobody signs "not bound"; /M is the moment of signing (checked against the timestamp's
 * genTime as `openssl ts` reads it); a revision prepared too long before its timestamp is
 * refused.
 */
let world: SessionWorld;
/** Someone else: another CCCD, another e-mail. */
let someoneElse: SoftToken;
/** The signer's own certificate: their CCCD, their name without diacritics, a private e-mail. */
let own: SoftToken;
/** Their CCCD under a name that is not the one the contract knows. */
let renamed: SoftToken;
/** A certificate that names nobody: no UID, no e-mail. */
let anonymous: SoftToken;

const anh = {
  name: 'Nguyễn Văn Ánh',
  email: 'anh@partner.example',
  phone: '0912345678',
  identityNumber: '001099012345',
  order: 1,
};

beforeAll(async () => {
  world = await openSessionWorld();
  someoneElse = await SoftToken.create(world, {
    name: 'Trần Văn Khác',
    email: 'khac@other.example',
    uid: 'CCCD:079000000001',
  });
  own = await SoftToken.create(world, {
    name: 'NGUYEN VAN ANH',
    email: 'anh.rieng@mail.example',
    uid: 'CCCD:001099012345',
  });
  renamed = await SoftToken.create(world, {
    name: 'Nguyễn Văn Minh Ánh',
    email: null,
    uid: 'CCCD:001099012345',
  });
  anonymous = await SoftToken.create(world, { name: 'Nguyễn Văn Ánh', email: null });
});
afterAll(async () => {
  for (const token of [someoneElse, own, renamed, anonymous]) token?.remove();
  await world?.close();
});

interface Started {
  sessionId: string;
  contractHash: string;
  tsaUrl: string;
  ticket?: string;
}

async function usbSession(contractId: string, email = anh.email): Promise<Started> {
  return dataOf<Started>(await world.initiate(contractId, email, 'usb_token'));
}

/** The token signs `contractHash` (stamped by the development TSA) and sends it. */
async function signWith(token: SoftToken, session: Started, contractHash = session.contractHash) {
  const tsa = developmentTsa(world, session.tsaUrl);
  try {
    const body = await token.signAsClient(contractHash, tsa.stamp);
    return await world.step(session.sessionId, 'sign-with-token', body);
  } finally {
    tsa.remove();
  }
}

/** POST …/prepare with the token's certificate (or none). */
function prepareFor(session: Started, token?: SoftToken) {
  return world.step(
    session.sessionId,
    'prepare',
    token ? { certificate: token.chain[0]!.toString('base64') } : {},
  );
}

async function refusalOf(response: Response) {
  const body = await json<{ code: string; message: string; details?: Record<string, unknown> }>(
    response,
  );
  return { status: response.status, ...body };
}

/** Each signature's /M, as written in its signature dictionary, in file order. */
function signingTimes(file: string): Date[] {
  const text = fs.readFileSync(file, 'latin1');
  return [...text.matchAll(/\/M \(D:(\d{4})(\d\d)(\d\d)(\d\d)(\d\d)(\d\d)Z\)/g)].map(
    ([, y, mo, d, h, mi, s]) => new Date(`${y}-${mo}-${d}T${h}:${mi}:${s}Z`),
  );
}

/** Each signature dictionary's /Name (a UTF-16 hex string or a literal), in file order. */
function signatureNames(file: string): string[] {
  const text = fs.readFileSync(file, 'latin1');
  return [
    ...text.matchAll(/\/Type \/Sig [\s\S]*?\/Name (?:<FEFF([0-9A-Fa-f]*)>|\(([^)]*)\))/g),
  ].map(([, hex, literal]) =>
    hex === undefined ? literal! : Buffer.from(hex, 'hex').swap16().toString('utf16le'),
  );
}

/**
 * Each signature's timestamp genTime, as `openssl ts -reply -token_in -text` reads it (not the
 * archive's document timestamps, which carry no /M).
 */
function genTimes(file: string): Date[] {
  const signatures = readSignatures(file).signatures.filter((s) => s.type === 'signature');
  return signatures.map((signature, index) => {
    const token = parseSignedData(signature.contents).timestampToken!;
    const tokenFile = path.join(world.h.dataDir, `token-${index}-${crypto.randomUUID()}.der`);
    fs.writeFileSync(tokenFile, token);
    const text = execFileSync('openssl', ['ts', '-reply', '-token_in', '-in', tokenFile, '-text'], {
      encoding: 'utf8',
    });
    return new Date(/Time stamp: (.+)/.exec(text)![1]!);
  });
}

/** The text of the visible boxes: qpdf flattens the appearances, pdftotext reads them. */
function boxText(file: string): string {
  const flat = `${file}.flat.pdf`;
  execFileSync('qpdf', ['--flatten-annotations=all', file, flat]);
  return execFileSync('pdftotext', [flat, '-'], { encoding: 'utf8' });
}

async function auditOf(contractId: string) {
  const detail = await dataOf<{
    auditTrail: { action: string; details: Record<string, unknown> }[];
  }>(await world.request('GET', `${contractsPath}/${contractId}`, world.acme.orgKey));
  return detail.auditTrail;
}

interface VerifiedSignature {
  fieldName: string;
  identity: { status: string; by?: string; reason?: string };
  certificate: { identifiers: string[] } | null;
}

async function verified(contractId: string) {
  return dataOf<{ isValid: boolean; signatures: VerifiedSignature[] }>(
    await world.request('GET', `${signingPath}/verify/${contractId}`, world.acme.orgKey),
  );
}

describe('a contract signed by usb_token', () => {
  it('a certificate naming another person is refused at prepare and at sign-with-token, naming what differs, not the numbers; nothing changes', async () => {
    const contractId = await world.sentContract([anh]);
    const session = await usbSession(contractId);
    const before = await persisted(world);

    const early = await refusalOf(await prepareFor(session, someoneElse));
    expect(early).toMatchObject({
      status: 422,
      code: 'SIGNER_IDENTITY_MISMATCH',
      details: { field: 'certificateChain' },
    });
    expect(early.message).toContain('identity number');
    expect(early.message).not.toMatch(/079000000001|001099012345/);

    const late = await refusalOf(await signWith(someoneElse, session));
    expect(late).toMatchObject({ status: 422, code: 'SIGNER_IDENTITY_MISMATCH' });
    expect(await persisted(world)).toEqual(before);
  });

  it('the signer’s own certificate signs: the box and /Name show its name, /M is within a minute of the timestamp, the audit trail, its PDF and verify say bound', async () => {
    const contractId = await world.sentContract([anh]);
    const session = await usbSession(contractId);
    const prepared = await dataOf<Started & { ticket: string }>(await prepareFor(session, own));
    expect(prepared.contractHash).not.toBe(session.contractHash);
    expect(prepared.ticket).toEqual(expect.any(String));
    // The contractHash of initiate can no longer be signed: it is another preparation's.
    expect(await codeOf(await signWith(own, session))).toEqual({
      status: 422,
      code: 'DOCUMENT_DIGEST_MISMATCH',
    });
    const signed = await dataOf<{ certificateInfo: { subject: string } }>(
      await signWith(own, session, prepared.contractHash),
    );
    expect(signed.certificateInfo.subject).toContain('NGUYEN VAN ANH');

    const file = await world.signedFile(contractId, 'identity-bound.pdf');
    expect(boxText(file)).toContain('Ký bởi: NGUYEN VAN ANH');
    expect(signatureNames(file)).toEqual(['NGUYEN VAN ANH']);
    expect(boxText(file)).not.toContain('Nguyễn Văn Ánh');
    const [m] = signingTimes(file);
    const [genTime] = genTimes(file);
    expect(Math.abs(genTime!.getTime() - m!.getTime())).toBeLessThan(60_000);

    const signedEvent = (await auditOf(contractId)).find((event) => event.action === 'signed')!;
    expect(signedEvent.details).toMatchObject({
      signerName: 'Nguyễn Văn Ánh',
      identityBinding: 'bound',
      identityBoundBy: 'identityNumber',
    });
    const verification = await verified(contractId);
    expect(verification.signatures[0]).toMatchObject({
      identity: { status: 'bound', by: 'identityNumber' },
      certificate: { identifiers: expect.arrayContaining(['CCCD', 'email']) },
    });
    const audit = await world.request(
      'GET',
      `${contractsPath}/${contractId}/download?type=audit`,
      world.acme.orgKey,
    );
    const auditFile = path.join(world.h.dataDir, 'identity-audit.pdf');
    fs.writeFileSync(auditFile, Buffer.from(await audit.arrayBuffer()));
    const trail = execFileSync('pdftotext', [auditFile, '-'], { encoding: 'utf8' });
    expect(trail).toContain('identityBinding: bound');
    expect(trail).toContain('identityBoundBy: identityNumber');
  });

  it('a certificate that names nobody signs "not bound"; cloud_hsm is bound by its e-mail, otp_sms is the service’s; every /M within a minute of its timestamp', async () => {
    const binh = { name: 'Trần Thị Bình', email: 'binh@partner.example', phone: '0987654321' };
    const cuong = { name: 'Lê Văn Cường', email: 'cuong@partner.example', phone: '0933333333' };
    const contractId = await world.sentContract([
      { name: anh.name, email: anh.email, phone: anh.phone, order: 1 },
      { ...binh, order: 2 },
      { ...cuong, order: 3 },
    ]);
    expect((await signWith(anonymous, await usbSession(contractId))).status).toBe(200);
    for (const [signer, method] of [
      [binh, 'cloud_hsm'],
      [cuong, 'otp_sms'],
    ] as const) {
      const session = await dataOf<{ sessionId: string }>(
        await world.initiate(contractId, signer.email, method),
      );
      expect((await world.step(session.sessionId, 'send-otp')).status).toBe(200);
      await world.deliver();
      const confirmed = await world.step(session.sessionId, 'confirm', {
        otp: world.otpFor(signer.phone),
      });
      expect(confirmed.status).toBe(200);
    }
    const verification = await verified(contractId);
    expect(verification.isValid).toBe(true);
    const signed = verification.signatures.filter(
      (s) => !s.fieldName.startsWith('DocumentTimestamp'),
    );
    expect(signed.map((s) => s.identity)).toEqual([
      { status: 'not_bound', reason: 'certificate_carries_none' },
      { status: 'bound', by: 'email' },
      { status: 'service' },
    ]);
    expect(verification.signatures[0]!.certificate!.identifiers).toEqual([]);
    const signedEvents = (await auditOf(contractId)).filter((event) => event.action === 'signed');
    expect(signedEvents.map((event) => event.details.identityBinding)).toEqual([
      'not_bound',
      'bound',
      'service',
    ]);
    expect(signedEvents[0]!.details.identityNotBoundBecause).toBe('certificate_carries_none');

    const file = await world.signedFile(contractId, 'identity-three.pdf');
    const times = signingTimes(file);
    const stamps = genTimes(file);
    expect(times).toHaveLength(3);
    times.forEach((m, index) => {
      expect(Math.abs(stamps[index]!.getTime() - m.getTime())).toBeLessThan(60_000);
    });
  });

  it('a box shows the certificate’s name: signing a revision prepared under another name is refused until it is prepared for the certificate, and then only that certificate signs it', async () => {
    const contractId = await world.sentContract([anh]);
    const session = await usbSession(contractId);
    expect(await codeOf(await signWith(renamed, session))).toEqual({
      status: 422,
      code: 'CERTIFICATE_NAME_NOT_PREPARED',
    });
    const forOwn = await dataOf<Started>(await prepareFor(session, own));
    expect(await codeOf(await signWith(renamed, session, forOwn.contractHash))).toEqual({
      status: 422,
      code: 'CERTIFICATE_NOT_PREPARED',
    });
    const forRenamed = await dataOf<Started>(await prepareFor(session, renamed));
    expect((await signWith(renamed, session, forRenamed.contractHash)).status).toBe(200);
    expect(boxText(await world.signedFile(contractId, 'identity-renamed.pdf'))).toContain(
      'Nguyễn Văn Minh Ánh',
    );
  });
});

describe('a dossier step signed by usb_token', () => {
  it('a certificate naming another person is refused; the signer’s own certificate signs the turn', async () => {
    const { h } = world;
    const tenant = await h.deps.db
      .selectFrom('tenants')
      .selectAll()
      .where('id', '=', world.acme.tenantId)
      .executeTakeFirstOrThrow();
    await addProcess(
      h,
      { tenantId: world.acme.tenantId, organizationId: world.acme.rootOrganizationId },
      'DINH_DANH',
      ['HD'],
      [{ stepCode: 'KH', name: 'Khách hàng ký số', kind: 'guest' }],
    );
    await registerTemplate(h.deps, tenant, 'ACME', {
      code: 'HD_DINH_DANH',
      name: 'Hợp đồng',
      pdfPath: exampleTemplateFile,
    });
    const documentId = `DD-${crypto.randomUUID()}`;
    const created = await h.request('POST', '/api/integration/documents', {
      headers: { 'x-api-key': world.acme.orgKey },
      json: {
        documentId,
        documentTitle: 'Hợp đồng định danh',
        processDefCode: 'DINH_DANH',
        files: [
          { source: 'template', templateCode: 'HD_DINH_DANH', templateData: { hoTen: anh.name } },
        ],
        signers: [
          {
            stepCode: 'KH',
            fullName: anh.name,
            email: anh.email,
            identityNumber: anh.identityNumber,
          },
        ],
      },
    });
    expect(created.status).toBe(201);
    const dossier = await h.deps.db
      .selectFrom('dossiers')
      .select('id')
      .where('document_id', '=', documentId)
      .executeTakeFirstOrThrow();
    const login = await h.request('POST', '/api/auth/partner-login', {
      headers: { 'x-api-key': world.acme.orgKey },
      json: { username: anh.identityNumber },
    });
    const accessToken = (await json<{ data: { accessToken: string } }>(login)).data.accessToken;
    const task = (await openTask(h, dossier.id))!.code;
    world.tick();
    const started = await h.request('POST', `/api/tasks/${task}/signing-session`, {
      headers: { 'x-access-token': accessToken },
      json: { signingMethod: 'usb_token' },
    });
    const session = await dataOf<Started>(started);
    const step = (name: string, body: unknown) => {
      world.tick();
      return h.request('POST', `${signingPath}/${session.sessionId}/${name}`, {
        headers: { 'x-access-token': accessToken },
        json: body,
      });
    };
    const stamped = async (token: SoftToken, contractHash: string) => {
      const tsa = developmentTsa(world, session.tsaUrl);
      try {
        return await token.signAsClient(contractHash, tsa.stamp);
      } finally {
        tsa.remove();
      }
    };

    const refused = await refusalOf(
      await step('sign-with-token', await stamped(someoneElse, session.contractHash)),
    );
    expect(refused).toMatchObject({ status: 422, code: 'SIGNER_IDENTITY_MISMATCH' });
    expect(
      await codeOf(
        await step('prepare', { certificate: someoneElse.chain[0]!.toString('base64') }),
      ),
    ).toEqual({ status: 422, code: 'SIGNER_IDENTITY_MISMATCH' });
    expect((await openTask(h, dossier.id))?.code).toBe(task);

    const prepared = await dataOf<Started>(
      await step('prepare', { certificate: own.chain[0]!.toString('base64') }),
    );
    const signed = await dataOf<{ task: { taskStatus: string } }>(
      await step('sign-with-token', await stamped(own, prepared.contractHash)),
    );
    expect(signed.task.taskStatus).toBe('APPROVED');
    const event = await h.deps.db
      .selectFrom('dossier_audit_events')
      .select('details')
      .where('dossier_id', '=', dossier.id)
      .where('action', '=', 'signed')
      .executeTakeFirstOrThrow();
    expect(JSON.parse(event.details)).toMatchObject({
      identityBinding: 'bound',
      identityBoundBy: 'identityNumber',
    });
  });
});

describe('the moment of signing (usb_token)', () => {
  it('a timestamp more than 5 minutes after the revision’s /M is refused 409 PREPARATION_STALE; prepare makes it the moment of signing', async () => {
    const contractId = await world.sentContract([anh]);
    const session = await usbSession(contractId);
    // The signer takes six minutes (the service's clock, which the development TSA stamps with).
    world.h.clock.set(new Date(world.h.clock.now().getTime() + 6 * 60_000));
    const stale = await refusalOf(await signWith(own, session));
    expect(stale).toMatchObject({ status: 409, code: 'PREPARATION_STALE' });
    const prepared = await dataOf<Started>(await prepareFor(session, own));
    expect((await signWith(own, session, prepared.contractHash)).status).toBe(200);
    const file = await world.signedFile(contractId, 'identity-fresh.pdf');
    const [m] = signingTimes(file);
    const [genTime] = genTimes(file);
    expect(Math.abs(genTime!.getTime() - m!.getTime())).toBeLessThan(60_000);
  });
});
