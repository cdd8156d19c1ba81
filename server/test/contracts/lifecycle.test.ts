import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { expireOverdueContracts } from '../../src/contracts/expiry';
import { openInvitation } from '../../src/contracts/service';
import { manualWorker, parseMail, startSmtpServer, type TestSmtpServer } from '../notify/support';
import { pdfsig, pdfsigSignatures } from '../signing/pdf/corpus';
import { type ContractWorld, contractsPath, deadline, openContractWorld } from './fixtures';

jest.setTimeout(60_000);

let smtp: TestSmtpServer;
let world: ContractWorld;
beforeAll(async () => {
  smtp = await startSmtpServer();
  world = await openContractWorld({
    MAIL_TRANSPORT: 'smtp',
    SMTP_HOST: '127.0.0.1',
    SMTP_PORT: String(smtp.port),
    MAIL_FROM: 'ESign <no-reply@esign.example>',
    APP_URL: 'https://app.esign.example',
  });
});
afterAll(async () => {
  await world.close();
  await smtp.close();
});

interface Detail {
  id: string;
  status: string;
  sentAt: string | null;
  cancelReason: string | null;
  signers: { email: string; status: string; signedAt: string | null; method: string | null }[];
  auditTrail: {
    seq: number;
    action: string;
    at: string;
    actor: { kind: string; name: string };
    clientAddress: string | null;
    userAgent: string | null;
    details: Record<string, unknown>;
  }[];
}

async function detail(id: string, key = world.acme.orgKey): Promise<Detail> {
  const response = await world.request('GET', `${contractsPath}/${id}`, key);
  expect(response.status).toBe(200);
  return ((await response.json()) as { data: Detail }).data;
}

async function send(id: string, key = world.acme.orgKey) {
  return world.request('POST', `${contractsPath}/${id}/send`, key);
}

async function deliverMail() {
  const worker = manualWorker(world.h.deps);
  await worker.drain();
  await worker.stop();
}

async function codeOf(response: Response): Promise<string> {
  return ((await response.json()) as { code: string }).code;
}

describe('send', () => {
  it('draft → signing with sentAt; the first signers are e-mailed a /ky-so/ link valid until expiredAt', async () => {
    const id = await world.create({
      title: 'Hợp đồng dịch vụ',
      signers: [
        { name: 'Nguyễn Văn Ánh', email: 'anh@partner.example', order: 1 },
        { name: 'Phạm Thị Dung', email: 'dung@partner.example', order: 1 },
        { name: 'Trần Thị Bình', email: 'binh@partner.example', order: 2 },
        { name: 'Lê Quan Sát', email: 'viewer@partner.example', order: 3, role: 'viewer' },
      ],
    });
    const before = smtp.received.length;
    const response = await send(id);
    expect(response.status).toBe(200);
    const { data } = (await response.json()) as {
      data: { id: string; status: string; sentAt: string };
    };
    expect(data).toEqual({ id, status: 'signing', sentAt: world.h.now() });
    await deliverMail();
    const mails = smtp.received.slice(before);
    expect(mails.flatMap((mail) => mail.to).sort()).toEqual([
      'anh@partner.example',
      'dung@partner.example',
      'viewer@partner.example',
    ]);
    const anh = parseMail(mails.find((mail) => mail.to[0] === 'anh@partner.example')!.raw);
    expect(anh.header('subject')).toContain('Hợp đồng dịch vụ');
    expect(anh.text).toContain('Nguyễn Văn Ánh');
    const link = /https:\/\/app\.esign\.example\/ky-so\/([A-Za-z0-9_-]{43})/.exec(anh.text ?? '');
    expect(link).not.toBeNull();
    // The deadline, in Vietnam time.
    expect(anh.text).toContain('15:00 ngày 02/12/2026 (GMT+7)');

    const shown = await detail(id);
    expect(shown.status).toBe('signing');
    expect(shown.signers.map((s) => [s.email, s.status])).toEqual([
      ['anh@partner.example', 'invited'],
      ['dung@partner.example', 'invited'],
      ['binh@partner.example', 'waiting'],
      ['viewer@partner.example', 'invited'],
    ]);
    const sent = shown.auditTrail.find((event) => event.action === 'sent')!;
    expect(sent.details.invited).toEqual([
      'anh@partner.example',
      'dung@partner.example',
      'viewer@partner.example',
    ]);

    // The link resolves to its signer (for the signing page) and is recorded as viewed.
    const opened = await openInvitation(world.h.deps, link![1]!, {
      clientAddress: '203.0.113.9',
      userAgent: 'Mozilla/5.0',
    });
    expect(opened.signer.email).toBe('anh@partner.example');
    const viewed = (await detail(id)).auditTrail.filter((event) => event.action === 'viewed');
    expect(
      viewed.some(
        (event) => event.actor.kind === 'signer' && event.clientAddress === '203.0.113.9',
      ),
    ).toBe(true);
  });

  it('a second send: 409 CONTRACT_NOT_DRAFT; two concurrent sends: one 200, one 409, one set of e-mails', async () => {
    const id = await world.create();
    const invitations = async () =>
      Number(
        (
          await world.h.deps.db
            .selectFrom('notify_outbox')
            .select(({ fn }) => fn.countAll().as('n'))
            .where('kind', '=', 'contract_invitation')
            .executeTakeFirstOrThrow()
        ).n,
      );
    const before = await invitations();
    const answers = await Promise.all([send(id), send(id)]);
    expect(answers.map((answer) => answer.status).sort()).toEqual([200, 409]);
    const loser = answers.find((answer) => answer.status === 409)!;
    expect(await codeOf(loser)).toBe('CONTRACT_NOT_DRAFT');
    // The default signers: order 1 is one person.
    expect((await invitations()) - before).toBe(1);
    const events = (await detail(id)).auditTrail.filter((event) => event.action === 'sent');
    expect(events).toHaveLength(1);
  });

  it('needs contract:send (403)', async () => {
    const creator = await world.keyWith(['contract:create', 'contract:view']);
    const id = await world.create({}, creator);
    expect((await send(id, creator)).status).toBe(403);
  });
});

describe('cancel (DELETE)', () => {
  it('draft → cancelled with the reason; invited signers are told when signing', async () => {
    const draft = await world.create();
    const response = await world.request('DELETE', `${contractsPath}/${draft}`, world.acme.orgKey, {
      reason: 'Sai thông tin',
    });
    expect(response.status).toBe(200);
    const { data } = (await response.json()) as { data: Record<string, unknown> };
    expect(data).toEqual({
      id: draft,
      status: 'cancelled',
      cancelledAt: world.h.now(),
      reason: 'Sai thông tin',
    });
    expect((await detail(draft)).cancelReason).toBe('Sai thông tin');

    const signing = await world.create();
    await send(signing);
    await deliverMail();
    const before = smtp.received.length;
    const cancelled = await world.request(
      'DELETE',
      `${contractsPath}/${signing}`,
      world.acme.orgKey,
      {
        reason: 'Đổi điều khoản',
      },
    );
    expect(cancelled.status).toBe(200);
    await deliverMail();
    const told = smtp.received.slice(before).map((mail) => parseMail(mail.raw));
    expect(told).toHaveLength(1);
    expect(told[0]!.header('subject')).toContain('Hợp đồng đã bị hủy');
    expect(told[0]!.text).toContain('Đổi điều khoản');
  });

  it('a cancelled or expired contract: 409 CONTRACT_NOT_CANCELLABLE; reason required (400)', async () => {
    const id = await world.create();
    const noReason = await world.request('DELETE', `${contractsPath}/${id}`, world.acme.orgKey, {});
    expect(noReason.status).toBe(400);
    expect(((await noReason.json()) as { details: { field: string } }).details.field).toBe(
      'reason',
    );
    await world.request('DELETE', `${contractsPath}/${id}`, world.acme.orgKey, { reason: 'x' });
    const again = await world.request('DELETE', `${contractsPath}/${id}`, world.acme.orgKey, {
      reason: 'x',
    });
    expect(again.status).toBe(409);
    expect(await codeOf(again)).toBe('CONTRACT_NOT_CANCELLABLE');
  });

  it('needs contract:cancel', async () => {
    const key = await world.keyWith(['contract:create', 'contract:view', 'contract:send']);
    const id = await world.create({}, key);
    const response = await world.request('DELETE', `${contractsPath}/${id}`, key, { reason: 'x' });
    expect(response.status).toBe(403);
  });
});

describe('expiry', () => {
  it('draft and signing contracts expire when expiredAt passes; the creator is e-mailed; then 409 on cancel', async () => {
    const soon = new Date(world.h.clock.now().getTime() + 60_000).toISOString();
    const draft = await world.create({ expiredAt: soon, title: 'Hết hạn nháp' });
    const signing = await world.create({ expiredAt: soon, title: 'Hết hạn đang ký' });
    const later = await world.create({ expiredAt: deadline });
    await send(signing);
    expect(await expireOverdueContracts(world.h.deps)).toBe(0);
    world.h.clock.advance(60_000);
    const before = smtp.received.length;
    expect(await expireOverdueContracts(world.h.deps)).toBe(2);
    expect(await expireOverdueContracts(world.h.deps)).toBe(0);
    expect((await detail(draft)).status).toBe('expired');
    expect((await detail(later)).status).toBe('draft');
    const expired = await detail(signing);
    expect(expired.status).toBe('expired');
    const event = expired.auditTrail.find((e) => e.action === 'expired')!;
    expect(event.actor).toEqual({ kind: 'system', name: 'system' });
    await deliverMail();
    const creatorMails = smtp.received
      .slice(before)
      .filter((mail) => mail.to[0] === 'admin.acme@example.com')
      .map((mail) => parseMail(mail.raw).header('subject'));
    expect(creatorMails.sort()).toEqual([
      '[ESign] Hợp đồng đã hết hạn ký: Hết hạn nháp',
      '[ESign] Hợp đồng đã hết hạn ký: Hết hạn đang ký',
    ]);
    const cancel = await world.request('DELETE', `${contractsPath}/${signing}`, world.acme.orgKey, {
      reason: 'x',
    });
    expect(cancel.status).toBe(409);
  });
});

describe('download', () => {
  it('original: PDF headers with a Vietnamese-safe filename; recorded in the trail', async () => {
    const id = await world.create({ title: 'Hợp đồng "Đặc biệt"' });
    const response = await world.h.app.request(`${contractsPath}/${id}/download?type=original`, {
      headers: { 'x-api-key': world.acme.orgKey, 'user-agent': 'partner-backend/1.0' },
    });
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toBe('application/pdf');
    const bytes = Buffer.from(await response.arrayBuffer());
    expect(response.headers.get('content-length')).toBe(String(bytes.length));
    expect(response.headers.get('content-disposition')).toBe(
      `attachment; filename="Hop dong _Dac biet_.pdf"; filename*=UTF-8''${encodeURIComponent('Hợp đồng "Đặc biệt".pdf')}`,
    );
    const trail = (await detail(id)).auditTrail;
    const downloaded = trail.find((event) => event.action === 'downloaded')!;
    expect(downloaded.details).toEqual({ type: 'original' });
    expect(downloaded.userAgent).toBe('partner-backend/1.0');
  });

  it('signed before any signature: 404 SIGNED_FILE_NOT_AVAILABLE; bad type: 400', async () => {
    const id = await world.create();
    const signed = await world.request(
      'GET',
      `${contractsPath}/${id}/download?type=signed`,
      world.acme.orgKey,
    );
    expect(signed.status).toBe(404);
    expect(await codeOf(signed)).toBe('SIGNED_FILE_NOT_AVAILABLE');
    const bad = await world.request(
      'GET',
      `${contractsPath}/${id}/download?type=zip`,
      world.acme.orgKey,
    );
    expect(bad.status).toBe(400);
  });

  it('audit: the trail rendered with Vietnamese text and sealed; pdfsig finds the seal valid; no temp file left', async () => {
    const id = await world.create({ title: 'Hợp đồng thuê nhà Đà Nẵng' });
    expect((await send(id)).status).toBe(200);
    const response = await world.request(
      'GET',
      `${contractsPath}/${id}/download?type=audit`,
      world.acme.orgKey,
    );
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toBe('application/pdf');
    const bytes = Buffer.from(await response.arrayBuffer());
    expect(response.headers.get('content-length')).toBe(String(bytes.length));
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'audit-download-'));
    try {
      const file = path.join(dir, 'audit.pdf');
      fs.writeFileSync(file, bytes);
      const text = execFileSync('pdftotext', ['-layout', file, '-'], { encoding: 'utf8' });
      expect(text).toContain('Hợp đồng thuê nhà Đà Nẵng');
      expect(text).toContain('Tạo hợp đồng');
      expect(text).toContain('Gửi ký');
      const [seal] = pdfsigSignatures(pdfsig(file));
      expect(seal).toMatchObject({ valid: true, total: true });
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
    expect(fs.readdirSync(world.h.deps.files.tempDir)).toEqual([]);
    const trail = (await detail(id)).auditTrail;
    expect(trail.at(-2)).toMatchObject({ action: 'downloaded', details: { type: 'audit' } });
  });
});

describe('scope and permissions', () => {
  it("contract:view sees its own contracts only; view-all sees the tenant's; another tenant's is 404 everywhere", async () => {
    const own = await world.keyWith([
      'contract:create',
      'contract:view',
      'contract:send',
      'contract:cancel',
    ]);
    const all = await world.keyWith(['contract:view-all']);
    const mine = await world.create({ title: 'Của tôi' }, own);
    const admins = await world.create({ title: 'Của quản trị' });
    expect((await world.request('GET', `${contractsPath}/${admins}`, own)).status).toBe(404);
    expect((await world.request('GET', `${contractsPath}/${mine}`, all)).status).toBe(200);
    const listed = await world.request('GET', `${contractsPath}?limit=100`, own);
    const ids = ((await listed.json()) as { data: { id: string }[] }).data.map((c) => c.id);
    expect(ids).toEqual([mine]);

    const beta = world.beta.orgKey;
    for (const [method, path, body] of [
      ['GET', `${contractsPath}/${admins}`, undefined],
      ['POST', `${contractsPath}/${admins}/send`, undefined],
      ['DELETE', `${contractsPath}/${admins}`, { reason: 'x' }],
      ['GET', `${contractsPath}/${admins}/download?type=original`, undefined],
    ] as const) {
      const response = await world.request(method, path, beta, body);
      expect([method, path, response.status, await codeOf(response)]).toEqual([
        method,
        path,
        404,
        'CONTRACT_NOT_FOUND',
      ]);
    }
    const betaList = await world.request('GET', contractsPath, beta);
    expect(((await betaList.json()) as { meta: { total: number } }).meta.total).toBe(0);
  });

  it('without contract:view or view-all: 403 on reads', async () => {
    const key = await world.keyWith(['contract:create']);
    expect((await world.request('GET', contractsPath, key)).status).toBe(403);
  });
});
