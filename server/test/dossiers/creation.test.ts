import { presignedUrlLifetimeSeconds } from '../../src/files/presign';
import { addUser, issueApiKey } from '../support/harness';
import {
  hdldBody,
  openWorld,
  partnerToken,
  reply,
  rowCounts,
  sha256,
  uniquePdf,
  type World,
} from './fixtures';

let world: World;
beforeAll(async () => {
  world = await openWorld();
});
afterAll(() => world.close());

interface CreatedData {
  transactionId: string | null;
  documentId: string;
  documentTitle: string;
  folderId: number;
  documentUuid: string;
  files: Record<string, unknown>[];
  attachments: Record<string, unknown>[];
  status: string;
  createdAt: string;
}

async function created(body: unknown, key?: string): Promise<CreatedData> {
  const [status, answer] = await reply<{ data: CreatedData }>(await world.create(body, key));
  if (status !== 201) throw new Error(`expected 201, got ${status}: ${JSON.stringify(answer)}`);
  return answer.data;
}

async function refused(body: unknown, key?: string) {
  const before = await rowCounts(world.h);
  const [status, error] = await reply(await world.create(body, key));
  expect(await rowCounts(world.h)).toEqual(before);
  return { status, code: error.code, field: error.details?.field, message: error.message };
}

function turnsOf(folderId: number) {
  return world.h.deps.db
    .selectFrom('turns')
    .leftJoin('users', 'users.id', 'turns.assignee_user_id')
    .select([
      'turns.step_position as step',
      'turns.turn_order as order',
      'turns.status',
      'turns.task_id as taskId',
      'turns.signer_full_name as fullName',
      'turns.signer_email as email',
      'turns.signer_phone as phone',
      'turns.signer_identity_number as identityNumber',
      'turns.signer_tax_code as taxCode',
      'turns.role_id as roleId',
      'users.username as assignee',
    ])
    .where('turns.dossier_id', '=', folderId)
    .orderBy('turns.step_position')
    .orderBy('turns.turn_order')
    .execute();
}

function dossierRow(folderId: number) {
  return world.h.deps.db
    .selectFrom('dossiers')
    .selectAll()
    .where('id', '=', folderId)
    .executeTakeFirstOrThrow();
}

function userRow(username: string) {
  return world.h.deps.db
    .selectFrom('users')
    .selectAll()
    .where('username', '=', username)
    .executeTakeFirstOrThrow();
}

describe('Dossier creation output', () => {
  it('answers HTTP 201 with the envelope (body statusCode 200) and every output field', async () => {
    const pdf = uniquePdf();
    const attachment = uniquePdf();
    const body = hdldBody(world, {
      files: [{ source: 'url', fileUrl: world.serve(pdf), title: 'Hợp đồng lao động' }],
      attachments: [{ source: 'url', fileUrl: world.serve(attachment, 'phu-luc.pdf') }],
    });
    const response = await world.create(body);
    expect(response.status).toBe(201);
    const { statusCode, timestamp, data } = (await response.json()) as {
      statusCode: number;
      timestamp: string;
      data: CreatedData;
    };
    expect(statusCode).toBe(200);
    expect(timestamp).toBe(world.h.now());
    const fileUuid = data.files[0]?.fileUuid;
    const attachmentUuid = data.attachments[0]?.fileUuid;
    expect(data).toEqual({
      transactionId: expect.stringMatching(/^PI[0-9A-F]{16}$/),
      documentId: body.documentId,
      documentTitle: 'Hợp đồng lao động Nguyễn Văn Ánh',
      folderId: expect.any(Number),
      documentUuid: expect.stringMatching(/^[0-9a-f-]{36}$/),
      files: [
        {
          id: expect.any(Number),
          fileUuid: expect.stringMatching(/^[0-9a-f-]{36}$/),
          title: 'Hợp đồng lao động',
          type: 'MAIN',
          url: expect.any(String),
          downloadUrl: `/api/integration/files/${fileUuid}/download`,
        },
      ],
      // The creation item has no ecmClassCode, size or mimeType; a title defaults to the URL's name.
      attachments: [
        {
          id: expect.any(Number),
          fileUuid: expect.stringMatching(/^[0-9a-f-]{36}$/),
          title: 'phu-luc.pdf',
          type: 'ATTACHMENT',
          url: expect.any(String),
          downloadUrl: `/api/integration/files/${attachmentUuid}/download`,
        },
      ],
      status: 'PENDING_SIGN',
      createdAt: world.h.now(),
    });
    const url = new URL(String(data.files[0]?.url));
    expect(`${url.origin}${url.pathname}`).toBe(`http://127.0.0.1:3000/api/files/${fileUuid}`);
    const expires = Number(url.searchParams.get('expires'));
    expect(expires * 1000 - world.h.clock.now().getTime()).toBe(presignedUrlLifetimeSeconds * 1000);
    const versions = await world.h.deps.db
      .selectFrom('file_versions')
      .innerJoin('dossier_files', 'dossier_files.id', 'file_versions.file_id')
      .select([
        'dossier_files.kind',
        'dossier_files.mime_type as mimeType',
        'file_versions.version',
        'file_versions.sha256',
        'file_versions.size',
      ])
      .where('dossier_files.dossier_id', '=', data.folderId)
      .orderBy('dossier_files.id')
      .execute();
    expect(versions).toEqual([
      {
        kind: 'MAIN',
        mimeType: 'application/pdf',
        version: 1,
        sha256: sha256(pdf),
        size: pdf.length,
      },
      {
        kind: 'ATTACHMENT',
        mimeType: 'application/pdf',
        version: 1,
        sha256: sha256(attachment),
        size: attachment.length,
      },
    ]);
    expect(await world.h.deps.files.exists(sha256(pdf))).toBe(true);
  });

  it('default: the workflow starts (PENDING_SIGN, transactionId, the first step task open)', async () => {
    const data = await created(hdldBody(world));
    const dossier = await dossierRow(data.folderId);
    expect(dossier).toMatchObject({
      status: 'PENDING_SIGN',
      transaction_id: data.transactionId,
      started_at: world.h.now(),
      required_count: 4,
      signed_count: 0,
    });
    const tasks = await world.h.deps.db
      .selectFrom('tasks')
      .select(['id', 'status', 'step_id'])
      .where('dossier_id', '=', data.folderId)
      .execute();
    expect(tasks).toHaveLength(1);
    const turns = await turnsOf(data.folderId);
    expect(turns.map((t) => [t.step, t.status, t.taskId])).toEqual([
      [1, 'ACTIVE', tasks[0]?.id],
      [2, 'WAITING', null],
      [3, 'WAITING', null],
      [4, 'WAITING', null],
    ]);
  });

  it('disableStart true: PENDING, transactionId null, no task', async () => {
    const data = await created(hdldBody(world, { disableStart: true }));
    expect(data.status).toBe('PENDING');
    expect(data.transactionId).toBeNull();
    const tasks = await world.h.deps.db
      .selectFrom('tasks')
      .select('id')
      .where('dossier_id', '=', data.folderId)
      .execute();
    expect(tasks).toEqual([]);
    expect((await turnsOf(data.folderId)).every((t) => t.status === 'WAITING')).toBe(true);
  });

  it('metadata is stored with tenantCode added (a sent tenantCode is replaced)', async () => {
    const metadata = { hopDong: 'Hợp đồng số 12/2026', nested: { a: [1, 2] }, tenantCode: 'FAKE' };
    const data = await created(hdldBody(world, { metadata }));
    const dossier = await dossierRow(data.folderId);
    expect(JSON.parse(dossier.metadata)).toEqual({ ...metadata, tenantCode: 'ACME' });
  });

  it('without metadata the dossier still gets { tenantCode }', async () => {
    const data = await created(hdldBody(world));
    expect(JSON.parse((await dossierRow(data.folderId)).metadata)).toEqual({ tenantCode: 'ACME' });
  });

  it('the root ecmClassCode is the dossier class and the creator is the key user', async () => {
    const data = await created(hdldBody(world, { ecmClassCode: 'HO_SO_NHAN_SU' }));
    expect(await dossierRow(data.folderId)).toMatchObject({
      ecm_class_code: 'HO_SO_NHAN_SU',
      organization_id: world.acme.rootOrganizationId,
      tenant_id: world.acme.tenantId,
      created_by_user_id: world.acme.adminUserId,
    });
  });
});

describe('Creation (1) rules', () => {
  it('idempotency: a documentId already used in the organization gives 409 DUPLICATE_DOCUMENT_ID', async () => {
    const body = hdldBody(world);
    const first = await created(body);
    const fetched = world.server.requests.length;
    const again = await refused({
      ...body,
      files: [{ source: 'url', fileUrl: world.serve(uniquePdf()) }],
    });
    expect(again).toMatchObject({
      status: 409,
      code: 'DUPLICATE_DOCUMENT_ID',
      field: 'documentId',
    });
    // Checked before the files: nothing was fetched for the duplicate.
    expect(world.server.requests.length).toBe(fetched);
    expect((await dossierRow(first.folderId)).document_id).toBe(body.documentId);
  });

  it('the same documentId in another organization is another dossier', async () => {
    const body = hdldBody(world);
    const inAcme = await created(body);
    const inBeta = await created(
      { ...body, signers: [{ stepCode: 'GUEST', email: 'beta.guest@example.com' }] },
      world.beta.orgKey,
    );
    expect(inBeta.documentId).toBe(inAcme.documentId);
    expect(inBeta.folderId).not.toBe(inAcme.folderId);
  });

  it('an unknown processDefCode: 404 PROCESS_NOT_FOUND with field processDefCode', async () => {
    const error = await refused(hdldBody(world, { processDefCode: 'KHONG_CO' }));
    expect(error).toMatchObject({
      status: 404,
      code: 'PROCESS_NOT_FOUND',
      field: 'processDefCode',
    });
  });

  it("another organization's process is unknown (SALES does not see the root's HDLD)", async () => {
    const sales = await world.h.deps.db
      .selectFrom('organizations')
      .select('id')
      .where('code', '=', 'SALES')
      .executeTakeFirstOrThrow();
    const { key } = await issueApiKey(world.h, {
      kind: 'organization',
      tenantId: world.acme.tenantId,
      organizationId: sales.id,
      userId: world.acme.adminUserId,
      expiresAt: null,
    });
    const error = await refused(hdldBody(world), key);
    expect(error).toMatchObject({ status: 404, code: 'PROCESS_NOT_FOUND' });
  });

  it('writes one WAITING turn per signer with the signer fields as submitted', async () => {
    const data = await created(hdldBody(world, { disableStart: true }));
    const waiting = {
      order: 1,
      status: 'WAITING',
      taskId: null,
      fullName: null,
      email: null,
      phone: null,
      identityNumber: null,
      taxCode: null,
      roleId: null,
      assignee: null,
    };
    expect(await turnsOf(data.folderId)).toEqual([
      { ...waiting, step: 1, roleId: world.legalRole.id },
      {
        ...waiting,
        step: 2,
        fullName: 'Nguyễn Văn Ánh',
        email: 'anh.nguyen@example.com',
        identityNumber: '001099012345',
        assignee: '001099012345',
      },
      {
        ...waiting,
        step: 3,
        fullName: 'Trần Thị Bảo',
        phone: '+84 912-345-678',
        assignee: '+84 912-345-678',
      },
      { ...waiting, step: 4, assignee: 'giam.doc' },
    ]);
    expect((await dossierRow(data.folderId)).required_count).toBe(4);
  });

  it('several signers of one step become turns ordered by `order`, then by array position', async () => {
    const signers = [
      { stepCode: 'GUEST', email: 'c@example.com', order: 3 },
      { stepCode: 'PHONE', phone: '0912345678' },
      { stepCode: 'GUEST', email: 'a@example.com', order: 1 },
      { stepCode: 'GUEST', email: 'b1@example.com', order: 2 },
      { stepCode: 'GUEST', email: 'b2@example.com', order: 2 },
    ];
    const data = await created(hdldBody(world, { signers, disableStart: true }));
    const guests = (await turnsOf(data.folderId)).filter((t) => t.step === 2);
    expect(guests.map((t) => [t.order, t.email])).toEqual([
      [1, 'a@example.com'],
      [2, 'b1@example.com'],
      [3, 'b2@example.com'],
      [4, 'c@example.com'],
    ]);
    expect((await dossierRow(data.folderId)).required_count).toBe(7);
  });

  it('without `order` the position in the array decides', async () => {
    const signers = [
      { stepCode: 'GUEST', email: 'thu.nhat@example.com' },
      { stepCode: 'PHONE', phone: '0912345678' },
      { stepCode: 'GUEST', email: 'thu.hai@example.com' },
    ];
    const data = await created(hdldBody(world, { signers, disableStart: true }));
    const guests = (await turnsOf(data.folderId)).filter((t) => t.step === 2);
    expect(guests.map((t) => t.email)).toEqual(['thu.nhat@example.com', 'thu.hai@example.com']);
  });

  it('a role step without a signer gets one role turn; with several role signers, several', async () => {
    const signers = [
      ...hdldBody(world).signers,
      { stepCode: 'APPROVE', fullName: 'Pháp chế 1' },
      { stepCode: 'APPROVE', fullName: 'Pháp chế 2' },
    ];
    const data = await created(hdldBody(world, { signers, disableStart: true }));
    const approvals = (await turnsOf(data.folderId)).filter((t) => t.step === 1);
    expect(approvals.map((t) => [t.order, t.fullName, t.roleId, t.assignee])).toEqual([
      [1, 'Pháp chế 1', world.legalRole.id, null],
      [2, 'Pháp chế 2', world.legalRole.id, null],
    ]);
  });

  it('a `username` signer takes exactly that user, skipping role distribution', async () => {
    const signers = [...hdldBody(world).signers, { stepCode: 'APPROVE', username: 'PHAP.CHE2' }];
    const data = await created(hdldBody(world, { signers, disableStart: true }));
    const approval = (await turnsOf(data.folderId)).filter((t) => t.step === 1);
    expect(approval.map((t) => [t.assignee, t.roleId])).toEqual([['phap.che2', null]]);
  });

  it('an internal step takes the named user instead of its default', async () => {
    const signers = [...hdldBody(world).signers, { stepCode: 'DIRECTOR', username: 'phap.che1' }];
    const data = await created(hdldBody(world, { signers, disableStart: true }));
    const director = (await turnsOf(data.folderId)).filter((t) => t.step === 4);
    expect(director.map((t) => t.assignee)).toEqual(['phap.che1']);
  });

  it('an internal step without username and without default user: 400 SIGNER_REQUIRED', async () => {
    const named = await refused(
      hdldBody(world, {
        processDefCode: 'NODEFAULT',
        signers: [{ stepCode: 'STAFF', fullName: 'A' }],
      }),
    );
    expect(named).toMatchObject({
      status: 400,
      code: 'SIGNER_REQUIRED',
      field: 'signers.0.username',
    });
    const none = await refused(hdldBody(world, { processDefCode: 'NODEFAULT', signers: [] }));
    expect(none).toMatchObject({ status: 400, code: 'SIGNER_REQUIRED', field: 'signers' });
  });

  it('a guest step without any signer: 400 SIGNER_REQUIRED naming the step', async () => {
    const error = await refused(hdldBody(world, { signers: [hdldBody(world).signers[1]] }));
    expect(error).toMatchObject({ status: 400, code: 'SIGNER_REQUIRED', field: 'signers' });
    expect(error.message).toContain('GUEST');
  });

  it('a locked internal user cannot be named: 400 USER_LOCKED', async () => {
    await addUser(world.h, {
      tenantId: world.acme.tenantId,
      organizationId: world.acme.rootOrganizationId,
      code: 'LOCKED1',
      username: 'da.khoa',
      email: 'da.khoa@acme.example',
      status: 3,
      type: 'internal',
    });
    const signers = [...hdldBody(world).signers, { stepCode: 'DIRECTOR', username: 'da.khoa' }];
    const error = await refused(hdldBody(world, { signers }));
    expect(error).toMatchObject({ status: 400, code: 'USER_LOCKED', field: 'signers.2.username' });
  });
});

describe('Guest signers get an external account', () => {
  it('username = identityNumber, generated EXT- code, external, no organization, awaiting activation', async () => {
    const signers = [
      {
        stepCode: 'GUEST',
        fullName: 'Đỗ Thị Hà',
        email: 'ha.do@example.com',
        identityNumber: '079188001122',
      },
      {
        stepCode: 'PHONE',
        fullName: 'Võ Văn Tú',
        phone: '0987654321',
        identityNumber: '079188003344',
      },
    ];
    await created(hdldBody(world, { signers }));
    const guest = await userRow('079188001122');
    expect(guest).toMatchObject({
      tenant_id: world.acme.tenantId,
      organization_id: null,
      type: 'external',
      status: 1,
      name: 'Đỗ Thị Hà',
      email: 'ha.do@example.com',
      identity_number: '079188001122',
      tax_code: null,
      password_hash: null,
    });
    expect(guest.code).toMatch(/^EXT-[0-9A-F]{16}$/);
    const phoneGuest = await userRow('079188003344');
    expect(phoneGuest).toMatchObject({ type: 'external', phone: '0987654321', email: null });
    expect(phoneGuest.code).not.toBe(guest.code);
  });

  it('username = taxCode for an organization signer (as sent, with its branch)', async () => {
    const signers = [
      {
        stepCode: 'GUEST',
        fullName: 'Công ty TNHH Ánh Dương',
        email: 'ketoan@anhduong.vn',
        taxCode: '0312345678-001',
      },
      { stepCode: 'PHONE', phone: '0912000111' },
    ];
    await created(hdldBody(world, { signers }));
    expect(await userRow('0312345678-001')).toMatchObject({
      type: 'external',
      tax_code: '0312345678-001',
      identity_number: null,
      email: 'ketoan@anhduong.vn',
    });
  });

  it('without identity number or tax code: the e-mail (guest) or the phone (phone guest)', async () => {
    const signers = [
      { stepCode: 'GUEST', email: 'chi.email@example.com' },
      { stepCode: 'PHONE', phone: '0911 222 333' },
    ];
    await created(hdldBody(world, { signers }));
    expect(await userRow('chi.email@example.com')).toMatchObject({ type: 'external' });
    expect(await userRow('0911 222 333')).toMatchObject({
      type: 'external',
      phone: '0911 222 333',
    });
  });

  it('a second dossier reuses the account (same row, profile unchanged)', async () => {
    const first = [
      {
        stepCode: 'GUEST',
        fullName: 'Bùi Văn Lặp',
        email: 'lap@example.com',
        identityNumber: '001077000001',
      },
      { stepCode: 'PHONE', phone: '0912000222' },
    ];
    const one = await created(hdldBody(world, { signers: first }));
    const account = await userRow('001077000001');
    const before = (await rowCounts(world.h)).users;
    const second = [{ ...first[0], fullName: 'Tên khác', email: 'khac@example.com' }, first[1]];
    const two = await created(hdldBody(world, { signers: second }));
    expect((await rowCounts(world.h)).users).toBe(before);
    expect(await userRow('001077000001')).toEqual(account);
    const assignees = async (folderId: number) =>
      (await turnsOf(folderId)).filter((t) => t.step === 2).map((t) => [t.assignee, t.email]);
    expect(await assignees(one.folderId)).toEqual([['001077000001', 'lap@example.com']]);
    expect(await assignees(two.folderId)).toEqual([['001077000001', 'khac@example.com']]);
  });

  it('one person twice in a dossier: one account, two turns', async () => {
    const signers = [
      { stepCode: 'GUEST', email: 'hai.lan@example.com', identityNumber: '001077000009' },
      { stepCode: 'PHONE', phone: '0912000999', identityNumber: '001077000009' },
    ];
    const data = await created(hdldBody(world, { signers }));
    const turns = (await turnsOf(data.folderId)).filter((t) => t.step === 2 || t.step === 3);
    expect(turns.map((t) => t.assignee)).toEqual(['001077000009', '001077000009']);
  });

  it("a guest e-mail that is already another account's keeps the account without e-mail", async () => {
    const signers = [
      { stepCode: 'GUEST', email: 'giam.doc@acme.example', identityNumber: '001077000002' },
      { stepCode: 'PHONE', phone: '0912000333' },
    ];
    const data = await created(hdldBody(world, { signers }));
    expect(await userRow('001077000002')).toMatchObject({ type: 'external', email: null });
    const guest = (await turnsOf(data.folderId)).find((t) => t.step === 2);
    expect(guest?.email).toBe('giam.doc@acme.example');
  });

  it('a login name held by an internal account: 409 SIGNER_ACCOUNT_CONFLICT, nothing written', async () => {
    const signers = [
      { stepCode: 'GUEST', email: 'giam.doc@acme.example' },
      { stepCode: 'PHONE', phone: '0912000444' },
    ];
    const error = await refused(hdldBody(world, { signers }));
    expect(error).toMatchObject({
      status: 409,
      code: 'SIGNER_ACCOUNT_CONFLICT',
      field: 'signers.0.email',
    });
  });

  it('a username sent for a guest step is ignored, with a log warning', async () => {
    const warn = jest.spyOn(world.h.deps.logger, 'warn');
    try {
      const signers = [
        {
          stepCode: 'GUEST',
          email: 'bo.qua@example.com',
          identityNumber: '001077000003',
          username: 'giam.doc',
        },
        { stepCode: 'PHONE', phone: '0912000555' },
      ];
      const data = await created(hdldBody(world, { signers }));
      const guest = (await turnsOf(data.folderId)).find((t) => t.step === 2);
      expect(guest?.assignee).toBe('001077000003');
      expect(warn).toHaveBeenCalledWith(
        expect.objectContaining({ field: 'signers.0.username', stepCode: 'GUEST' }),
        'username ignored for an outside signer',
      );
    } finally {
      warn.mockRestore();
    }
  });
});

describe('Class rule', () => {
  it('one class configured: a file without ecmClassCode inherits it', async () => {
    const data = await created(hdldBody(world));
    const file = await world.h.deps.db
      .selectFrom('dossier_files')
      .select('ecm_class_code')
      .where('dossier_id', '=', data.folderId)
      .executeTakeFirstOrThrow();
    expect(file.ecm_class_code).toBe('HD_LAO_DONG');
  });

  it('two classes: a file without ecmClassCode gives 422 MISSING_ECM_CLASS_CODE, nothing fetched', async () => {
    const fetched = world.server.requests.length;
    const body = hdldBody(world, {
      processDefCode: 'MULTI',
      ecmClassCode: 'HD',
      signers: [{ stepCode: 'SIGN', email: 'k@example.com' }],
      files: [
        { source: 'url', fileUrl: world.serve(uniquePdf()), ecmClassCode: 'HD' },
        { source: 'url', fileUrl: world.serve(uniquePdf()) },
      ],
    });
    const error = await refused(body);
    expect(error).toMatchObject({
      status: 422,
      code: 'MISSING_ECM_CLASS_CODE',
      field: 'files.1.ecmClassCode',
    });
    expect(world.server.requests.length).toBe(fetched);
  });

  it('two classes: every file sends its class; attachments need none and do not inherit the root class', async () => {
    const body = hdldBody(world, {
      processDefCode: 'MULTI',
      ecmClassCode: 'HD',
      signers: [{ stepCode: 'SIGN', email: 'k2@example.com' }],
      files: [
        { source: 'url', fileUrl: world.serve(uniquePdf()), ecmClassCode: 'HD' },
        { source: 'url', fileUrl: world.serve(uniquePdf()), ecmClassCode: 'PL' },
      ],
      attachments: [
        { source: 'url', fileUrl: world.serve(uniquePdf()) },
        { source: 'url', fileUrl: world.serve(uniquePdf()), ecmClassCode: 'TAI_LIEU' },
      ],
    });
    const data = await created(body);
    const files = await world.h.deps.db
      .selectFrom('dossier_files')
      .select(['kind', 'position', 'ecm_class_code'])
      .where('dossier_id', '=', data.folderId)
      .orderBy('id')
      .execute();
    expect(files).toEqual([
      { kind: 'MAIN', position: 1, ecm_class_code: 'HD' },
      { kind: 'MAIN', position: 2, ecm_class_code: 'PL' },
      { kind: 'ATTACHMENT', position: 1, ecm_class_code: null },
      { kind: 'ATTACHMENT', position: 2, ecm_class_code: 'TAI_LIEU' },
    ]);
  });
});

describe('Organization of the creator', () => {
  it('with a partner token of an internal user: that user creates in their organization', async () => {
    const token = await partnerToken(world, world.acme.adminUsername);
    const response = await world.h.request('POST', '/api/integration/documents', {
      headers: { 'x-access-token': token },
      json: hdldBody(world),
    });
    expect(response.status).toBe(201);
    const { data } = (await response.json()) as { data: CreatedData };
    expect(await dossierRow(data.folderId)).toMatchObject({
      organization_id: world.acme.rootOrganizationId,
      created_by_user_id: world.acme.adminUserId,
    });
  });

  it('an outside signer (external user) cannot create: 403', async () => {
    await created(
      hdldBody(world, {
        signers: [
          { stepCode: 'GUEST', email: 'ngoai@example.com', identityNumber: '001077000004' },
          { stepCode: 'PHONE', phone: '0912000666' },
        ],
      }),
    );
    const token = await partnerToken(world, '001077000004');
    const before = await rowCounts(world.h);
    const response = await world.h.request('POST', '/api/integration/documents', {
      headers: { 'x-access-token': token },
      json: hdldBody(world),
    });
    const [status, error] = await reply(response);
    expect([status, error.code]).toEqual([403, 'FORBIDDEN']);
    expect(await rowCounts(world.h)).toEqual(before);
  });

  it('without credentials: 401', async () => {
    const response = await world.h.request('POST', '/api/integration/documents', {
      json: hdldBody(world),
    });
    const [status, error] = await reply(response);
    expect([status, error.code]).toEqual([401, 'UNAUTHORIZED']);
  });
});
