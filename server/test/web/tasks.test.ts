import {
  approveOpenTask,
  createDossier,
  dossierRow,
  historyOf,
  openTask,
  tasksOf,
} from '../support/dossiers';
import { useTaskWorld } from '../tasks/fixtures';
import { guestAnh } from '../workflow/world';
import { cookieFor, getPage, mainText, postPageForm, rowsOf } from './records';

jest.setTimeout(60_000);

/**
 * `/xu-ly-cong-viec` and `/xu-ly-cong-viec/{id}` over HTTP, in the task world
 * (tests/tasks/fixtures.ts): hung's pending and handled tasks, acting from the list and from a
 * task's page through the task actions (approve, reject with a reason, acknowledge), the CSRF
 * guard on each, the refusals said in words, the deep link `/tasks?id=` of the e-mails, and
 * the same "not found" page for a task of another tenant, out of reach, or unknown.
 */
const context = useTaskWorld();
let hung: string;

beforeAll(async () => {
  hung = await cookieFor(context.h, context.world.hung.row.id);
});

async function taskOf(dossierId: number): Promise<number> {
  const task = await openTask(context.h, dossierId);
  if (!task) throw new Error(`dossier ${dossierId} has no open task`);
  return task.id;
}

/** A new dossier of the memo process (one app_submit step) waiting for hung. */
async function memoForHung(title: string) {
  const { h, world } = context;
  const dossier = await createDossier(h, world.memo, {
    title,
    signers: [{ stepCode: 'XL', userId: world.hung.row.id }],
  });
  return { dossier, taskId: await taskOf(dossier.id) };
}

describe('the task list', () => {
  it('shows pending tasks with what the viewer may do now, and handled ones with their outcome', async () => {
    const { h, world } = context;
    const page = await getPage(h, hung, '/app/xu-ly-cong-viec');
    expect(page.status).toBe(200);
    const rows = rowsOf(page.html, 'task-table');
    expect(rows).toHaveLength(2);
    expect(rows[0]).toContain('Công văn nội bộ');
    expect(rows[0]).toContain('Xử lý tờ trình');
    expect(rows[0]).toContain('Phê duyệt');
    expect(rows[0]).toContain('Duyệt');
    expect(rows[0]).toContain('Từ chối');
    // d1's step waits for lan's turn: hung sees it without buttons.
    expect(rows[1]).toContain('Hợp đồng lao động Nguyễn Văn Ánh');
    expect(rows[1]).toContain('Đang chờ người khác xử lý');
    const d4Task = await taskOf(world.d4.id);
    expect(page.html).toContain(`action="/app/xu-ly-cong-viec/${d4Task}/duyet"`);
    expect(page.html).not.toContain(
      `action="/app/xu-ly-cong-viec/${await taskOf(world.d1.id)}/duyet"`,
    );
    expect(page.html).toMatch(/aria-current="page">Chờ xử lý<span class="tab-count">2<\/span>/);

    const handled = await getPage(h, hung, '/app/xu-ly-cong-viec?tab=handled');
    const done = rowsOf(handled.html, 'task-table');
    expect(done).toHaveLength(3);
    expect(done.join('\n')).toContain('Thiếu phụ lục');
    expect(done.join('\n')).toContain('Đã kiểm tra');
    expect(done.find((row) => row.includes('BB-002'))).toContain('Đã từ chối');
    expect(done.find((row) => row.includes('TT-003'))).toContain('Quá hạn');
    expect(done.find((row) => row.includes('HD-001'))).toContain('Đã hoàn thành');
    expect(handled.html).not.toContain('/duyet"');
  });

  it('searches with diacritics folded, and filters handled tasks by the day they were handled', async () => {
    const { h } = context;
    const found = rowsOf(
      (await getPage(h, hung, '/app/xu-ly-cong-viec?keyword=cong%20van')).html,
      'task-table',
    );
    expect(found).toHaveLength(1);
    expect(found[0]).toContain('Công văn nội bộ');
    const steps = rowsOf(
      (await getPage(h, hung, '/app/xu-ly-cong-viec?tab=handled&keyword=PHE%20DUYET')).html,
      'task-table',
    );
    expect(steps).toHaveLength(2);
    const day = await getPage(
      h,
      hung,
      '/app/xu-ly-cong-viec?tab=handled&fromDate=2026-11-25&toDate=2026-11-25',
    );
    expect(rowsOf(day.html, 'task-table')).toHaveLength(3);
    const before = await getPage(h, hung, '/app/xu-ly-cong-viec?tab=handled&toDate=2026-11-24');
    expect(rowsOf(before.html, 'task-table')).toEqual([]);
    expect(mainText(before.html)).toContain('Không có công việc nào phù hợp với bộ lọc.');
    const bad = await getPage(h, hung, '/app/xu-ly-cong-viec?fromDate=hôm-qua');
    expect(bad.status).toBe(400);
    expect(mainText(bad.html)).toContain('Bộ lọc chưa hợp lệ, vui lòng kiểm tra lại: Từ ngày');
  });
});

describe('acting on a task', () => {
  it('approves from the list through the task actions, then the list and the dossier say so', async () => {
    const { h, world } = context;
    const { dossier, taskId } = await memoForHung('Tờ trình tiếp khách');
    const back = '/app/xu-ly-cong-viec?keyword=tiep%20khach';
    const answer = await postPageForm(h, hung, `/app/xu-ly-cong-viec/${taskId}/duyet`, { back });
    expect(answer.status).toBe(303);
    expect(answer.headers.get('location')).toBe(
      `/app/xu-ly-cong-viec?keyword=tiep+khach&done=approved&task=${taskId}&dossier=${dossier.id}`,
    );
    const after = await getPage(h, hung, answer.headers.get('location')!);
    expect(mainText(after.html)).toContain('Đã duyệt công việc.');
    expect(after.html).toContain(
      `data-task-event="approved" data-task-id="${taskId}" data-dossier-id="${dossier.id}"`,
    );
    expect(rowsOf(after.html, 'task-table')).toEqual([]);
    expect((await dossierRow(h, dossier.id)).status).toBe('COMPLETED');
    const history = await historyOf(h, dossier.id);
    expect(history).toMatchObject([
      { action: 'NEXT', action_label: 'Đồng ý', actor_user_id: world.hung.row.id },
    ]);
    const page = await getPage(h, hung, `/app/ho-so/${dossier.id}`);
    expect(rowsOf(page.html, 'history')[0]).toContain('Đồng ý');
    expect(rowsOf(page.html, 'history')[0]).toContain('Nguyễn Văn Hùng');
    expect(mainText(page.html)).toContain('Hoàn tất');
  });

  it('approves from the task page with a comment', async () => {
    const { h } = context;
    const { dossier, taskId } = await memoForHung('Tờ trình sửa chữa');
    const page = await getPage(h, hung, `/app/xu-ly-cong-viec/${taskId}`);
    expect(page.status).toBe(200);
    expect(mainText(page.html)).toContain('Kiểm tra tài liệu bên dưới, sau đó duyệt hoặc từ chối.');
    expect(page.html).toContain('class="pdf-preview"');
    const answer = await postPageForm(h, hung, `/app/xu-ly-cong-viec/${taskId}/duyet`, {
      comment: 'Đồng ý chi',
      back: `/app/xu-ly-cong-viec/${taskId}`,
    });
    expect(answer.headers.get('location')).toBe(
      `/app/xu-ly-cong-viec/${taskId}?done=approved&task=${taskId}&dossier=${dossier.id}`,
    );
    const after = await getPage(h, hung, answer.headers.get('location')!);
    expect(mainText(after.html)).toContain('Đã duyệt công việc.');
    expect(mainText(after.html)).toContain('Công việc này đã được xử lý.');
    expect(rowsOf(after.html, 'history')[0]).toContain('Đồng ý chi');
    expect((await historyOf(h, dossier.id))[0]).toMatchObject({ comment: 'Đồng ý chi' });
  });

  it('rejects only with a reason; the dossier ends REJECTED and its history shows the reason', async () => {
    const { h } = context;
    const { dossier, taskId } = await memoForHung('Tờ trình mua xe');
    const empty = await postPageForm(h, hung, `/app/xu-ly-cong-viec/${taskId}/tu-choi`, {
      reason: '   ',
      back: '/app/xu-ly-cong-viec',
    });
    expect(empty.status).toBe(303);
    expect(empty.headers.get('location')).toBe(
      `/app/xu-ly-cong-viec?problem=reasonRequired&task=${taskId}&dossier=${dossier.id}`,
    );
    expect(mainText((await getPage(h, hung, empty.headers.get('location')!)).html)).toContain(
      'Vui lòng nhập lý do từ chối.',
    );
    expect((await dossierRow(h, dossier.id)).status).toBe('PENDING_SIGN');

    const tooLong = await postPageForm(h, hung, `/app/xu-ly-cong-viec/${taskId}/tu-choi`, {
      reason: 'x'.repeat(2001),
    });
    expect(tooLong.headers.get('location')).toBe(
      `/app/xu-ly-cong-viec/${taskId}?problem=tooLong&task=${taskId}&dossier=${dossier.id}`,
    );

    const answer = await postPageForm(h, hung, `/app/xu-ly-cong-viec/${taskId}/tu-choi`, {
      reason: 'Chưa có báo giá',
      back: '/app/xu-ly-cong-viec',
    });
    expect(answer.headers.get('location')).toBe(
      `/app/xu-ly-cong-viec?done=rejected&task=${taskId}&dossier=${dossier.id}`,
    );
    expect((await dossierRow(h, dossier.id)).status).toBe('REJECTED');
    const page = await getPage(h, hung, `/app/ho-so/${dossier.id}`);
    const history = rowsOf(page.html, 'history');
    expect(history).toHaveLength(1);
    expect(history[0]).toContain('Từ chối');
    expect(history[0]).toContain('Chưa có báo giá');
    // Acting again: said in words, nothing changes.
    const again = await postPageForm(h, hung, `/app/xu-ly-cong-viec/${taskId}/duyet`, {
      back: `/app/xu-ly-cong-viec/${taskId}`,
    });
    expect(again.headers.get('location')).toBe(
      `/app/xu-ly-cong-viec/${taskId}?problem=ended&task=${taskId}&dossier=${dossier.id}`,
    );
  });

  it('acknowledges a notification step as a holder of its role', async () => {
    const { h, world } = context;
    // lan approves her DUYET turn of d1; the KTT step (role, notification) opens.
    await approveOpenTask(h, world.d1.id, world.lan.row.id);
    const taskId = await taskOf(world.d1.id);
    const minh = await cookieFor(h, world.minh.row.id);
    const list = await getPage(h, minh, '/app/xu-ly-cong-viec');
    const rows = rowsOf(list.html, 'task-table');
    expect(rows).toHaveLength(1);
    expect(rows[0]).toContain('Kế toán trưởng xác nhận');
    expect(rows[0]).toContain('Xác nhận đã xem');
    const answer = await postPageForm(h, minh, `/app/xu-ly-cong-viec/${taskId}/xac-nhan`, {
      back: '/app/xu-ly-cong-viec',
    });
    expect(answer.headers.get('location')).toBe(
      `/app/xu-ly-cong-viec?done=acknowledged&task=${taskId}&dossier=${world.d1.id}`,
    );
    expect((await dossierRow(h, world.d1.id)).status).toBe('COMPLETED');
    const history = await historyOf(h, world.d1.id);
    expect(history.at(-1)).toMatchObject({
      action: 'NEXT',
      action_label: 'Đã xem',
      actor_user_id: world.minh.row.id,
    });
    const page = await getPage(h, minh, `/app/ho-so/${world.d1.id}`);
    expect(rowsOf(page.html, 'history').at(-1)).toContain('Phạm Văn Minh');
    // nga held the same role: the task is gone from her list.
    const nga = await cookieFor(h, world.nga.row.id);
    expect(rowsOf((await getPage(h, nga, '/app/xu-ly-cong-viec')).html, 'task-table')).toEqual([]);
  });

  it("says when it is not the viewer's turn, or the action does not fit the step", async () => {
    const { h, world } = context;
    const { dossier, taskId } = await memoForHung('Tờ trình hội thảo');
    const wrongKind = await postPageForm(h, hung, `/app/xu-ly-cong-viec/${taskId}/xac-nhan`, {});
    expect(wrongKind.headers.get('location')).toBe(
      `/app/xu-ly-cong-viec/${taskId}?problem=wrongKind&task=${taskId}&dossier=${dossier.id}`,
    );
    const lanTurn = await createDossier(h, world.process, {
      title: 'Hợp đồng thử việc',
      signers: [
        { stepCode: 'DUYET', userId: world.lan.row.id, order: 1 },
        { stepCode: 'DUYET', userId: world.hung.row.id, order: 2 },
      ],
    });
    const lanTask = await taskOf(lanTurn.id);
    const notYet = await postPageForm(h, hung, `/app/xu-ly-cong-viec/${lanTask}/duyet`, {});
    expect(notYet.headers.get('location')).toBe(
      `/app/xu-ly-cong-viec/${lanTask}?problem=notYourTurn&task=${lanTask}&dossier=${lanTurn.id}`,
    );
    const page = await getPage(h, hung, notYet.headers.get('location')!);
    expect(mainText(page.html)).toContain('Chưa đến lượt bạn xử lý công việc này.');
    expect(mainText(page.html)).toContain('Công việc này đang chờ người khác xử lý.');
    expect(page.html).not.toContain('/duyet"');
  });

  it('a signing step leads to the signing page', async () => {
    const { h, world } = context;
    const signing = await createDossier(h, world.process, {
      title: 'Hợp đồng ký ảnh',
      signers: [guestAnh],
    });
    const taskId = await taskOf(signing.id);
    const anh = await h.deps.db
      .selectFrom('users')
      .select('id')
      .where('username', '=', guestAnh.identityNumber)
      .executeTakeFirstOrThrow();
    await h.deps.db.updateTable('users').set({ status: 2 }).where('id', '=', anh.id).execute();
    const cookie = await cookieFor(h, anh.id);
    const list = await getPage(h, cookie, '/app/xu-ly-cong-viec');
    expect(list.html).toContain(`href="/app/ky-so/${taskId}"`);
    expect(rowsOf(list.html, 'task-table')[0]).toContain('Ký hồ sơ');
    const page = await getPage(h, cookie, `/app/xu-ly-cong-viec/${taskId}`);
    expect(mainText(page.html)).toContain('Bước này cần chữ ký của bạn.');
    expect(page.html).toContain(`href="/app/ky-so/${taskId}"`);
    // No approve button for a signature step; approving it here (which would skip drawing the
    // signature) is refused in words, and the task still waits.
    expect(page.html).not.toContain('/duyet"');
    const refused = await postPageForm(h, cookie, `/app/xu-ly-cong-viec/${taskId}/duyet`, {});
    expect(refused.headers.get('location')).toBe(
      `/app/xu-ly-cong-viec/${taskId}?problem=wrongKind&task=${taskId}&dossier=${signing.id}`,
    );
    expect((await dossierRow(h, signing.id)).status).toBe('PENDING_SIGN');
  });
});

describe('the CSRF guard on every action', () => {
  it('refuses a post without the token, with a wrong one or from another site; nothing changes', async () => {
    const { h } = context;
    const { dossier, taskId } = await memoForHung('Tờ trình bảo trì');
    for (const verb of ['duyet', 'tu-choi', 'xac-nhan']) {
      const path = `/app/xu-ly-cong-viec/${taskId}/${verb}`;
      const fields = { reason: 'Lý do', comment: 'Ý kiến' };
      const noToken = await h.request('POST', path, {
        headers: {
          'content-type': 'application/x-www-form-urlencoded',
          'sec-fetch-site': 'same-origin',
          cookie: hung,
        },
        body: new URLSearchParams(fields).toString(),
      });
      expect(noToken.status).toBe(403);
      expect((await postPageForm(h, hung, path, fields, { csrf: 'sai' })).status).toBe(403);
      expect((await postPageForm(h, hung, path, fields, { site: 'cross-site' })).status).toBe(403);
    }
    expect((await dossierRow(h, dossier.id)).status).toBe('PENDING_SIGN');
    expect(await historyOf(h, dossier.id)).toEqual([]);
  });
});

describe('what the viewer may not see', () => {
  it('answers a task of another tenant, one out of reach and an unknown one alike, and refuses acting on it', async () => {
    const { h, world } = context;
    const d4Task = await taskOf(world.d4.id);
    const unknown = await getPage(h, hung, '/app/xu-ly-cong-viec/999999');
    expect(unknown.status).toBe(404);
    const expected = mainText(unknown.html);
    const betaAdmin = await h.deps.db
      .selectFrom('users')
      .select('id')
      .where('username', '=', 'admin.beta')
      .executeTakeFirstOrThrow();
    const beta = await cookieFor(h, betaAdmin.id);
    const minh = await cookieFor(h, world.minh.row.id);
    for (const cookie of [beta, minh]) {
      const page = await getPage(h, cookie, `/app/xu-ly-cong-viec/${d4Task}`);
      expect(page.status).toBe(404);
      expect(mainText(page.html)).toBe(expected);
      const post = await postPageForm(h, cookie, `/app/xu-ly-cong-viec/${d4Task}/duyet`, {});
      expect(post.status).toBe(404);
      const reject = await postPageForm(h, cookie, `/app/xu-ly-cong-viec/${d4Task}/tu-choi`, {
        reason: 'x',
      });
      expect(reject.status).toBe(404);
    }
    expect((await dossierRow(h, world.d4.id)).status).toBe('PENDING_SIGN');
    expect((await getPage(h, hung, '/app/xu-ly-cong-viec/0')).status).toBe(404);
  });
});

describe('the deep link /tasks?id=', () => {
  it('leads to the task page, to the dossier for whoever sees only the dossier, else not found', async () => {
    const { h, world } = context;
    const d4Task = await taskOf(world.d4.id);
    const link = await getPage(h, hung, `/app/tasks?id=${d4Task}`);
    expect(link.status).toBe(303);
    expect(link.location).toBe(`/app/xu-ly-cong-viec/${d4Task}`);
    // thu is a member of ACME's root: she sees the dossier, not hung's task.
    const thu = await cookieFor(h, world.thu.row.id);
    const dossier = await getPage(h, thu, `/app/tasks?id=${d4Task}`);
    expect(dossier.location).toBe(`/app/ho-so/${world.d4.id}`);
    // minh sees neither.
    const minh = await cookieFor(h, world.minh.row.id);
    const none = await getPage(h, minh, `/app/tasks?id=${d4Task}`);
    expect(none.status).toBe(404);
    expect(mainText(none.html)).toBe(
      mainText((await getPage(h, hung, '/app/tasks?id=999999')).html),
    );
    expect((await getPage(h, hung, '/app/tasks?id=abc')).status).toBe(404);
  });

  it('every link the e-mails carry lands on a real page for its recipient', async () => {
    const { h, world } = context;
    const mails = await h.deps.db
      .selectFrom('notify_outbox')
      .select(['recipient', 'text_body'])
      .where('channel', '=', 'mail')
      .execute();
    const links = mails.flatMap((mail) =>
      [...(mail.text_body ?? '').matchAll(/http:\/\/127\.0\.0\.1:3000(\/app\/tasks\?id=\d+)/g)].map(
        (match) => ({ recipient: mail.recipient, path: match[1]! }),
      ),
    );
    expect(links.length).toBeGreaterThan(0);
    const cookies = new Map<string, string>();
    for (const person of [world.hung, world.lan, world.minh, world.nga, world.thu]) {
      cookies.set(person.row.email!, await cookieFor(h, person.row.id));
    }
    let followed = 0;
    for (const { recipient, path } of links) {
      const cookie = cookies.get(recipient);
      if (!cookie) continue;
      const link = await getPage(h, cookie, path);
      expect(link.status).toBe(303);
      const page = await getPage(h, cookie, link.location!);
      expect([path, page.status]).toEqual([path, 200]);
      followed += 1;
    }
    expect(followed).toBeGreaterThan(0);
    // Without a session the link asks to sign in first and comes back.
    const anonymous = await h.request('GET', links[0]!.path);
    expect(anonymous.headers.get('location')).toBe(
      `/app/dang-nhap?next=${encodeURIComponent(links[0]!.path)}`,
    );
    expect(await tasksOf(h, world.d4.id)).toHaveLength(1);
  });
});

describe('in English', () => {
  it('says the same in English', async () => {
    const { h } = context;
    const { taskId } = await memoForHung('Tờ trình tiếng Anh');
    const page = await h.request('GET', `/app/xu-ly-cong-viec/${taskId}`, {
      headers: { cookie: `${hung}; esign_lang=en` },
    });
    const html = await page.text();
    expect(html).toContain('<html lang="en">');
    expect(mainText(html)).toContain('Check the documents below, then approve or reject.');
    expect(mainText(html)).toContain('Approve');
    expect(mainText(html)).toContain('Reason for rejecting');
  });
});
