import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { contractsPath } from '../contracts/fixtures';
import { parseMail } from '../notify/support';
import { dataOf, openSessionWorld, type SessionWorld, signingPath } from '../sessions/world';
import { pdfsig, pdfsigSignatures } from '../signing/pdf/corpus';
import { csrfOf, sameOriginForm } from '../support/web';
import {
  acmePersonWith,
  mainOf,
  rejectAs,
  signWithImage,
  textOf,
  webCookieOf,
} from './contractPages';

/**
 * The contract pages over HTTP against the real app: `/app/hop-dong` lists what the contract
 * API's list would (its filters, its folded search, its paging), `/app/hop-dong/{id}` shows the
 * contract, each signer's state, the hashes and the trail, and its forms resend an invitation
 * and cancel (CSRF-guarded). Signatures are made through the real signing API.
 */

jest.setTimeout(180_000);

let world: SessionWorld;
/** The session of ACME's administrator, who created every contract of the world. */
let admin: string;

beforeAll(async () => {
  world = await openSessionWorld();
  admin = await webCookieOf(world.h, world.acme.adminUserId);
});
afterAll(async () => {
  await world?.close();
});

const anh = { name: 'Nguyễn Văn Ánh', email: 'anh@partner.example', phone: '0912345678', order: 1 };
const binh = { name: 'Trần Thị Bình', email: 'binh@partner.example', order: 2 };
const cuc = {
  name: 'Phạm Thu Cúc',
  email: 'cuc@partner.example',
  order: 1,
  role: 'viewer' as const,
};

function page(cookie: string, url: string) {
  return world.h.request('GET', url, { headers: { cookie } });
}

async function html(cookie: string, url: string): Promise<string> {
  const response = await page(cookie, url);
  expect(response.status).toBe(200);
  return response.text();
}

/** Posts a page's form as the browser does: same origin, the session, the token of the page. */
async function post(cookie: string, url: string, fields: Record<string, string>, from: string) {
  const csrf = csrfOf(await html(cookie, from));
  return world.h.request('POST', url, {
    headers: { ...sameOriginForm, cookie },
    body: new URLSearchParams({ ...fields, _csrf: csrf }).toString(),
  });
}

/** The text of each signer's entry, in the page's order. */
function signerEntries(body: string): string[] {
  return [...mainOf(body).matchAll(/<li class="signer [^"]*">([\s\S]*?)<\/li>/g)].map((match) =>
    textOf(`<main>${match[1]}</main>`),
  );
}

/** The titles the list shows, in its order. */
function listedTitles(body: string): string[] {
  return [
    ...body.matchAll(/<td data-label="[^"]*" class="cell-title"><a href="[^"]+">([^<]+)<\/a>/g),
  ].map((match) => match[1]!);
}

/** The contract's audit actions in order; reading a page adds `viewed`, left out unless asked. */
async function auditActionsOf(contractId: string, withViews = false): Promise<string[]> {
  const rows = await world.h.deps.db
    .selectFrom('contract_audit_events as e')
    .innerJoin('contracts as c', 'c.id', 'e.contract_id')
    .select('e.action')
    .where('c.uuid', '=', contractId)
    .orderBy('e.seq')
    .execute();
  return rows.map((row) => row.action).filter((action) => withViews || action !== 'viewed');
}

const sha256 = (bytes: Buffer) => crypto.createHash('sha256').update(bytes).digest('hex');

describe('the contract list', () => {
  beforeAll(async () => {
    await world.sentContract([anh], { title: 'Hợp đồng mua bán Đà Nẵng – Lô 7' });
    await world.create({ title: 'Biên bản nghiệm thu – Lô 7', signers: [anh] });
    await world.sentContract([anh], { title: 'HỢP ĐỒNG THUÊ KHO – Lô 7' });
  });

  it('lists the contracts with their state and progress, newest first', async () => {
    const body = await html(admin, '/app/hop-dong?search=lo 7');
    expect(listedTitles(body)).toEqual([
      'HỢP ĐỒNG THUÊ KHO – Lô 7',
      'Biên bản nghiệm thu – Lô 7',
      'Hợp đồng mua bán Đà Nẵng – Lô 7',
    ]);
    const text = textOf(body);
    expect(text).toContain('Bản nháp');
    expect(text).toContain('Đang ký');
    expect(text).toContain('0/1 đã ký');
    expect(text).toContain('3 kết quả');
  });

  it('searches titles with diacritics folded, as the API does', async () => {
    expect(listedTitles(await html(admin, '/app/hop-dong?search=da nang'))).toEqual([
      'Hợp đồng mua bán Đà Nẵng – Lô 7',
    ]);
    expect(listedTitles(await html(admin, '/app/hop-dong?search=HOP DONG lo 7'))).toEqual([]);
    expect(listedTitles(await html(admin, '/app/hop-dong?search=hợp+đồng'))).toEqual(
      expect.arrayContaining(['HỢP ĐỒNG THUÊ KHO – Lô 7', 'Hợp đồng mua bán Đà Nẵng – Lô 7']),
    );
    expect(listedTitles(await html(admin, '/app/hop-dong?search=hop dong'))).not.toContain(
      'Biên bản nghiệm thu – Lô 7',
    );
  });

  it('filters by status (an empty choice is any) and sorts as asked', async () => {
    expect(listedTitles(await html(admin, '/app/hop-dong?search=lo 7&status=draft'))).toEqual([
      'Biên bản nghiệm thu – Lô 7',
    ]);
    expect(
      listedTitles(await html(admin, '/app/hop-dong?search=lo+7&status=&sortBy=title&order=ASC')),
    ).toEqual([
      'Biên bản nghiệm thu – Lô 7',
      'Hợp đồng mua bán Đà Nẵng – Lô 7',
      'HỢP ĐỒNG THUÊ KHO – Lô 7',
    ]);
  });

  it('pages with the filters kept in the links', async () => {
    const body = await html(admin, '/app/hop-dong?search=lo+7&limit=1&page=2');
    expect(listedTitles(body)).toEqual(['Biên bản nghiệm thu – Lô 7']);
    expect(textOf(body)).toContain('Trang 2 / 3');
    expect(body).toContain('href="/app/hop-dong?search=lo+7&amp;limit=1" rel="prev"');
    expect(body).toContain('href="/app/hop-dong?search=lo+7&amp;limit=1&amp;page=3" rel="next"');
  });

  it('says which filter is wrong instead of failing', async () => {
    const response = await page(admin, '/app/hop-dong?status=signed&search=lo+7');
    expect(response.status).toBe(400);
    expect(textOf(await response.text())).toContain('Bộ lọc "Trạng thái" không hợp lệ');
    const tooMany = await page(admin, '/app/hop-dong?limit=500');
    expect(tooMany.status).toBe(400);
    expect(textOf(await tooMany.text())).toContain('Bộ lọc "Số dòng mỗi trang" không hợp lệ');
  });
});

describe("a contract's page", () => {
  let contractId: string;

  beforeAll(async () => {
    contractId = await world.sentContract([anh, binh, cuc], { title: 'Hợp đồng dịch vụ kế toán' });
  });

  it('shows the facts: status, deadline with its zone, creator, hashes', async () => {
    const body = await html(admin, `/app/hop-dong/${contractId}`);
    const text = textOf(body);
    expect(text).toContain('Hợp đồng dịch vụ kế toán');
    expect(text).toContain('Đang ký');
    expect(text).toMatch(/Hạn ký \d{2}\/\d{2}\/\d{4} \d{2}:\d{2} GMT\+7/);
    expect(text).toContain('Admin ACME');
    const original = await page(admin, `/app/hop-dong/${contractId}/tai-xuong?type=original`);
    expect(text).toContain(sha256(Buffer.from(await original.arrayBuffer())));
    expect(body).toContain(`data-pdf-src="/app/hop-dong/${contractId}/xem-truoc"`);
  });

  it("shows each signer's state in order, and after one signs, who signed with what", async () => {
    const before = signerEntries(await html(admin, `/app/hop-dong/${contractId}`));
    expect(before).toHaveLength(3);
    expect(before[0]).toContain('Nguyễn Văn Ánh');
    expect(before[0]).toContain('Đến lượt ký');
    expect(before[1]).toContain('Trần Thị Bình');
    expect(before[1]).toContain('Chờ đến lượt');
    expect(before[2]).toContain('Phạm Thu Cúc');
    expect(before[2]).toContain('Đã gửi bản xem');

    await signWithImage(world, contractId, anh.email);
    const detail = await dataOf<{
      auditTrail: { action: string; details: Record<string, string> }[];
    }>(await world.request('GET', `${contractsPath}/${contractId}`, world.acme.orgKey));
    const subject = detail.auditTrail.find((event) => event.action === 'signed')!.details
      .certificateSubject!;
    expect(subject).toBeTruthy();

    const body = await html(admin, `/app/hop-dong/${contractId}`);
    const after = signerEntries(body);
    expect(after[0]).toContain('Đã ký');
    expect(after[0]).toMatch(/Ký lúc \d{2}\/\d{2}\/\d{4} \d{2}:\d{2} GMT\+7/);
    expect(after[0]).toContain('Chữ ký hình ảnh');
    expect(after[0]).toContain(subject);
    expect(after[1]).toContain('Đến lượt ký');
    const signed = await page(admin, `/app/hop-dong/${contractId}/tai-xuong?type=signed`);
    expect(textOf(body)).toContain(sha256(Buffer.from(await signed.arrayBuffer())));
    expect(textOf(body)).toContain('Ký số');
  });

  it('shows a refusal with its reason', async () => {
    const refused = await world.sentContract([anh], { title: 'Hợp đồng bị từ chối' });
    await rejectAs(world, refused, anh.email, 'Sai số tài khoản ngân hàng');
    const body = await html(admin, `/app/hop-dong/${refused}`);
    const [entry] = signerEntries(body);
    expect(entry).toContain('Đã từ chối');
    expect(entry).toContain('Lý do từ chối Sai số tài khoản ngân hàng');
    expect(textOf(body)).toContain('Bị từ chối');
  });

  it('lists the signatures an uploaded PDF already carried', async () => {
    const signed = await page(admin, `/app/hop-dong/${contractId}/tai-xuong?type=signed`);
    const id = await world.create({
      title: 'Phụ lục đã ký sẵn',
      file: { name: 'phu-luc.pdf', bytes: Buffer.from(await signed.arrayBuffer()) },
      signers: [{ ...binh, order: 1 }],
    });
    const text = textOf(await html(admin, `/app/hop-dong/${id}`));
    expect(text).toContain('Chữ ký có sẵn trong tệp tải lên');
    expect(text).toContain('Hợp lệ');
  });

  it('serves the downloads as PDFs and the preview as the newest file, recording only downloads', async () => {
    const events = (await auditActionsOf(contractId)).filter((a) => a === 'downloaded').length;
    const signed = await page(admin, `/app/hop-dong/${contractId}/tai-xuong?type=signed`);
    expect(signed.status).toBe(200);
    expect(signed.headers.get('content-type')).toBe('application/pdf');
    const signedBytes = Buffer.from(await signed.arrayBuffer());
    const file = path.join(world.h.dataDir, 'page-signed.pdf');
    fs.writeFileSync(file, signedBytes);
    const signatures = pdfsigSignatures(pdfsig(file));
    expect(signatures).toHaveLength(1);
    expect(signatures[0]!.valid).toBe(true);

    const audit = await page(admin, `/app/hop-dong/${contractId}/tai-xuong?type=audit`);
    expect(audit.status).toBe(200);
    expect(audit.headers.get('content-type')).toBe('application/pdf');
    expect(
      Buffer.from(await audit.arrayBuffer())
        .subarray(0, 5)
        .toString(),
    ).toBe('%PDF-');

    const preview = await page(admin, `/app/hop-dong/${contractId}/xem-truoc`);
    expect(preview.status).toBe(200);
    expect(preview.headers.get('content-type')).toBe('application/pdf');
    expect(preview.headers.get('cache-control')).toBe('private, no-store');
    expect(Buffer.from(await preview.arrayBuffer()).equals(signedBytes)).toBe(true);
    expect((await auditActionsOf(contractId)).filter((a) => a === 'downloaded')).toHaveLength(
      events + 2,
    );
  });

  it('answers "not found" for a signed file before the first signature, and a plain error for a bad type', async () => {
    const unsigned = await world.create({ title: 'Chưa ký', signers: [anh] });
    const body = await html(admin, `/app/hop-dong/${unsigned}`);
    expect(body).not.toContain('tai-xuong?type=signed"');
    expect((await page(admin, `/app/hop-dong/${unsigned}/tai-xuong?type=signed`)).status).toBe(404);
    expect((await page(admin, `/app/hop-dong/${unsigned}/tai-xuong?type=zip`)).status).toBe(400);
  });
});

describe('sending an invitation again', () => {
  let contractId: string;
  const form = () => `/app/hop-dong/${contractId}`;
  const resend = () => `/app/hop-dong/${contractId}/gui-lai-loi-moi`;

  beforeAll(async () => {
    contractId = await world.sentContract([anh, binh], { title: 'Hợp đồng gửi lại lời mời' });
  });

  /** Moves the signer's last invitation back in time, as if minutes had passed. */
  async function invitedMinutesAgo(email: string, minutes: number): Promise<void> {
    const contract = await world.h.deps.db
      .selectFrom('contracts')
      .select('id')
      .where('uuid', '=', contractId)
      .executeTakeFirstOrThrow();
    await world.h.deps.db
      .updateTable('contract_signers')
      .set({ invited_at: new Date(world.h.clock.now().getTime() - minutes * 60_000).toISOString() })
      .where('contract_id', '=', contract.id)
      .where('email', '=', email)
      .execute();
  }

  it('waits five minutes after an invitation before offering to send it again', async () => {
    const body = await html(admin, form());
    expect(body).not.toContain(`action="/app/hop-dong/${contractId}/gui-lai-loi-moi"`);
    expect(textOf(body)).toContain('Có thể gửi lại sau');
    const early = await post(admin, resend(), { signer: '0' }, form());
    expect(early.status).toBe(303);
    expect(early.headers.get('location')).toBe(`${form()}?problem=resendTooSoon`);
    expect(textOf(await html(admin, early.headers.get('location')!))).toContain(
      'Lời mời vừa được gửi gần đây',
    );
    expect(await auditActionsOf(contractId)).not.toContain('invitation_resent');
  });

  it('sends a fresh link by the form; the earlier link stops working', async () => {
    const before = world.smtp.received.length;
    await world.deliver();
    const first = world.smtp.received
      .filter((mail) => mail.to.includes(anh.email))
      .map((mail) => /\/ky-so\/([A-Za-z0-9_-]{43})\b/.exec(parseMail(mail.raw).text ?? '')?.[1])
      .filter((token): token is string => token !== undefined)
      .at(-1)!;
    await invitedMinutesAgo(anh.email, 6);
    const body = await html(admin, form());
    expect(body).toContain(`action="/app/hop-dong/${contractId}/gui-lai-loi-moi"`);

    const sent = await post(admin, resend(), { signer: '0' }, form());
    expect(sent.status).toBe(303);
    expect(sent.headers.get('location')).toBe(`${form()}?done=resent`);
    expect(textOf(await html(admin, sent.headers.get('location')!))).toContain(
      'Đã gửi lại lời mời ký',
    );
    expect(await auditActionsOf(contractId)).toContain('invitation_resent');

    await world.deliver();
    const fresh = world.smtp.received
      .slice(before)
      .filter((mail) => mail.to.includes(anh.email))
      .map((mail) => /\/ky-so\/([A-Za-z0-9_-]{43})\b/.exec(parseMail(mail.raw).text ?? '')?.[1])
      .filter((token): token is string => token !== undefined)
      .at(-1)!;
    expect(fresh).toBeDefined();
    expect(fresh).not.toBe(first);
    const read = (token: string) =>
      world.h.request('POST', `${signingPath}/invitation`, { json: { token } });
    expect((await read(first)).status).toBe(404);
    expect((await read(fresh)).status).toBe(200);
  });

  it('offers no resend to a signer whose turn has not come, and refuses a post for one', async () => {
    const body = await html(admin, form());
    expect(body).not.toContain('name="signer" value="1"');
    const refused = await post(admin, resend(), { signer: '1' }, form());
    expect(refused.headers.get('location')).toBe(`${form()}?problem=notInvited`);
  });

  it('refuses a forged post: no token, or from another site', async () => {
    await invitedMinutesAgo(anh.email, 10);
    const events = (await auditActionsOf(contractId)).length;
    const noToken = await world.h.request('POST', resend(), {
      headers: { ...sameOriginForm, cookie: admin },
      body: new URLSearchParams({ signer: '0' }).toString(),
    });
    expect(noToken.status).toBe(403);
    const csrf = csrfOf(await html(admin, form()));
    const crossSite = await world.h.request('POST', resend(), {
      headers: {
        'content-type': 'application/x-www-form-urlencoded',
        'sec-fetch-site': 'cross-site',
        cookie: admin,
      },
      body: new URLSearchParams({ signer: '0', _csrf: csrf }).toString(),
    });
    expect(crossSite.status).toBe(403);
    expect(await auditActionsOf(contractId)).toHaveLength(events);
  });

  it('shows no resend to someone who may read but not send, and refuses their post', async () => {
    await invitedMinutesAgo(anh.email, 10);
    const reader = await acmePersonWith(world, ['contract:view-all']);
    const body = await html(reader.cookie, form());
    expect(body).not.toContain('gui-lai-loi-moi');
    expect(body).not.toContain('/huy"');
    const refused = await post(reader.cookie, resend(), { signer: '0' }, form());
    expect(refused.status).toBe(404);
  });
});

describe('cancelling a contract', () => {
  let contractId: string;
  const form = () => `/app/hop-dong/${contractId}`;
  const cancel = () => `/app/hop-dong/${contractId}/huy`;

  beforeAll(async () => {
    contractId = await world.sentContract([anh], { title: 'Hợp đồng sẽ bị hủy' });
  });

  const statusOf = async () =>
    (
      await world.h.deps.db
        .selectFrom('contracts')
        .select(['status', 'cancel_reason'])
        .where('uuid', '=', contractId)
        .executeTakeFirstOrThrow()
    ).status;

  it('asks for a reason', async () => {
    const body = await html(admin, form());
    expect(body).toContain(`action="/app/hop-dong/${contractId}/huy"`);
    expect(body).toContain('data-confirm="Bạn chắc chắn muốn hủy hợp đồng này?');
    const blank = await post(admin, cancel(), { reason: '   ' }, form());
    expect(blank.status).toBe(303);
    expect(blank.headers.get('location')).toBe(`${form()}?problem=reason#cancel`);
    expect(await statusOf()).toBe('signing');
  });

  it('refuses a forged cancel', async () => {
    const forged = await world.h.request('POST', cancel(), {
      headers: { ...sameOriginForm, cookie: admin },
      body: new URLSearchParams({ reason: 'Giả mạo', _csrf: 'not-the-token' }).toString(),
    });
    expect(forged.status).toBe(403);
    expect(await statusOf()).toBe('signing');
  });

  it('cancels with the reason, tells the invited signer, and then offers no cancel', async () => {
    const cancelled = await post(admin, cancel(), { reason: 'Đối tác đổi điều khoản' }, form());
    expect(cancelled.status).toBe(303);
    expect(cancelled.headers.get('location')).toBe(`${form()}?done=cancelled`);
    expect(await statusOf()).toBe('cancelled');
    const body = await html(admin, cancelled.headers.get('location')!);
    const text = textOf(body);
    expect(text).toContain('Hợp đồng đã được hủy.');
    expect(text).toContain('Đã hủy');
    expect(text).toContain('Lý do hủy Đối tác đổi điều khoản');
    expect(body).not.toContain(`action="/app/hop-dong/${contractId}/huy"`);
    const mails = await world.h.deps.db
      .selectFrom('notify_outbox')
      .select('kind')
      .where('recipient', '=', anh.email)
      .execute();
    expect(mails.map((mail) => mail.kind)).toContain('contract_cancelled');

    const again = await post(admin, cancel(), { reason: 'Lần nữa' }, form());
    expect(again.headers.get('location')).toBe(`${form()}?problem=notCancellable`);
  });
});

describe('what a person may not see is "not found", like an id that does not exist', () => {
  let contractId: string;

  beforeAll(async () => {
    contractId = await world.sentContract([anh], { title: 'Hợp đồng nội bộ ACME' });
  });

  async function expectNotFound(cookie: string, url: string, compareWith: string) {
    const response = await page(cookie, url);
    expect(response.status).toBe(404);
    expect(mainOf(await response.text())).toBe(mainOf(compareWith));
  }

  it('hides a foreign tenant’s contract, its files and its forms', async () => {
    const beta = await webCookieOf(world.h, world.beta.adminUserId);
    const missing = await page(beta, '/app/hop-dong/00000000-0000-4000-8000-000000000000');
    expect(missing.status).toBe(404);
    const missingPage = await missing.text();
    expect(textOf(missingPage)).toContain('Không tìm thấy trang');
    await expectNotFound(beta, `/app/hop-dong/${contractId}`, missingPage);
    await expectNotFound(beta, `/app/hop-dong/${contractId}/xem-truoc`, missingPage);
    await expectNotFound(beta, `/app/hop-dong/${contractId}/tai-xuong?type=original`, missingPage);
    const posted = await post(
      beta,
      `/app/hop-dong/${contractId}/huy`,
      { reason: 'x' },
      '/app/dashboard',
    );
    expect(posted.status).toBe(404);
    expect(listedTitles(await html(beta, '/app/hop-dong'))).not.toContain('Hợp đồng nội bộ ACME');
  });

  it('hides another person’s contract from someone who reads only their own', async () => {
    const own = await acmePersonWith(world, ['contract:view']);
    const missing = await (
      await page(own.cookie, '/app/hop-dong/00000000-0000-4000-8000-000000000000')
    ).text();
    await expectNotFound(own.cookie, `/app/hop-dong/${contractId}`, missing);
    expect(listedTitles(await html(own.cookie, '/app/hop-dong'))).toEqual([]);
  });

  it('answers "not found" for the contract pages to someone who may read no contract', async () => {
    const none = await acmePersonWith(world, ['task:view']);
    const missing = await (await page(none.cookie, '/app/khong-co-trang-nay')).text();
    await expectNotFound(none.cookie, '/app/hop-dong', missing);
    await expectNotFound(none.cookie, `/app/hop-dong/${contractId}`, missing);
  });
});
