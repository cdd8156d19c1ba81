import { documentsPath, hdldBody, openWorld, reply, rowCounts, type World } from './fixtures';

/**
 * The spec's field tables of dossier creation: every rule refused with 400 and `details.field`,
 * before anything is fetched or written.
 */

let world: World;
beforeAll(async () => {
  world = await openWorld();
});
afterAll(() => world.close());

type Body = ReturnType<typeof hdldBody>;

const long = (length: number) => 'x'.repeat(length);
const manyFiles = (count: number) =>
  Array.from({ length: count }, () => ({ source: 'url', fileUrl: 'https://127.0.0.1/x.pdf' }));
const guest = (extra: Record<string, unknown>) => ({
  stepCode: 'GUEST',
  email: 'khach@example.com',
  ...extra,
});

async function expectRefused(body: unknown, field: string, code = 'VALIDATION_ERROR') {
  const before = await rowCounts(world.h);
  const requestsBefore = world.server.requests.length;
  const [status, error] = await reply(await world.create(body));
  expect({ status, code: error.code, field: error.details?.field }).toEqual({
    status: 400,
    code,
    field,
  });
  expect(error.statusCode).toBe(400);
  expect(error.error).toBe('Bad Request');
  expect(error.message).toEqual(expect.any(String));
  expect(await rowCounts(world.h)).toEqual(before);
  // Refused before any file was fetched.
  expect(world.server.requests.length).toBe(requestsBefore);
}

function without(body: Body, name: keyof Body): Record<string, unknown> {
  const copy: Record<string, unknown> = { ...body };
  delete copy[name];
  return copy;
}

describe('Dossier creation input', () => {
  const rules: [string, (body: Body) => unknown, string][] = [
    ['documentId is required', (b) => without(b, 'documentId'), 'documentId'],
    ['documentId is a string', (b) => ({ ...b, documentId: 12 }), 'documentId'],
    ['documentId is not empty', (b) => ({ ...b, documentId: '  ' }), 'documentId'],
    ['documentId is at most 255', (b) => ({ ...b, documentId: long(256) }), 'documentId'],
    ['documentTitle is at most 500', (b) => ({ ...b, documentTitle: long(501) }), 'documentTitle'],
    ['processDefCode is required', (b) => without(b, 'processDefCode'), 'processDefCode'],
    [
      'processDefCode is at most 255',
      (b) => ({ ...b, processDefCode: long(256) }),
      'processDefCode',
    ],
    ['ecmClassCode is at most 255', (b) => ({ ...b, ecmClassCode: long(256) }), 'ecmClassCode'],
    ['disableStart is a boolean', (b) => ({ ...b, disableStart: 'true' }), 'disableStart'],
    ['files[] is required', (b) => without(b, 'files'), 'files'],
    ['files[] has at least 1 item', (b) => ({ ...b, files: [] }), 'files'],
    ['files[] has at most 50 items', (b) => ({ ...b, files: manyFiles(51) }), 'files'],
    [
      'attachments[] has at most 50 items',
      (b) => ({ ...b, attachments: manyFiles(51) }),
      'attachments',
    ],
    ['signers[] is required', (b) => without(b, 'signers'), 'signers'],
    [
      'signers[] has at most 50 items',
      (b) => ({ ...b, signers: Array.from({ length: 51 }, () => guest({})) }),
      'signers',
    ],
    ['metadata is an object, not an array', (b) => ({ ...b, metadata: [1, 2] }), 'metadata'],
    ['metadata is an object, not a string', (b) => ({ ...b, metadata: 'x' }), 'metadata'],
  ];
  it.each(rules)('%s', async (_rule, change, field) => {
    await expectRefused(change(hdldBody(world)), field);
  });

  it('accepts exactly 255 characters of documentId and 500 of documentTitle', async () => {
    const body = hdldBody(world, { documentId: long(255), documentTitle: long(500) });
    const [status, created] = await reply<{ data: { documentId: string; documentTitle: string } }>(
      await world.create(body),
    );
    expect(status).toBe(201);
    expect(created.data.documentId).toBe(long(255));
    expect(created.data.documentTitle).toBe(long(500));
  });

  it('documentTitle defaults to documentId', async () => {
    const body = without(hdldBody(world), 'documentTitle');
    const [status, created] = await reply<{ data: { documentId: string; documentTitle: string } }>(
      await world.create(body),
    );
    expect(status).toBe(201);
    expect(created.data.documentTitle).toBe(body.documentId);
  });
});

describe('files[] / attachments[] item', () => {
  const url = { source: 'url', fileUrl: 'https://127.0.0.1/a.pdf' };
  const rules: [string, (body: Body) => unknown, string][] = [
    ['source is required', (b) => ({ ...b, files: [{ fileUrl: url.fileUrl }] }), 'files.0.source'],
    [
      'source is url or template',
      (b) => ({ ...b, files: [{ ...url, source: 'ftp' }] }),
      'files.0.source',
    ],
    [
      'fileUrl is required when source is url',
      (b) => ({ ...b, files: [url, { source: 'url' }] }),
      'files.1.fileUrl',
    ],
    ['fileUrl is a string', (b) => ({ ...b, files: [{ ...url, fileUrl: 5 }] }), 'files.0.fileUrl'],
    [
      'templateCode is required when source is template',
      (b) => ({ ...b, attachments: [{ source: 'template', templateData: {} }] }),
      'attachments.0.templateCode',
    ],
    [
      'templateData is an object',
      (b) => ({ ...b, files: [{ source: 'template', templateCode: 'T', templateData: 'x' }] }),
      'files.0.templateData',
    ],
    [
      'title is at most 255',
      (b) => ({ ...b, files: [{ ...url, title: long(256) }] }),
      'files.0.title',
    ],
    [
      'ecmClassCode is at most 255',
      (b) => ({ ...b, attachments: [{ ...url, ecmClassCode: long(256) }] }),
      'attachments.0.ecmClassCode',
    ],
  ];
  it.each(rules)('%s', async (_rule, change, field) => {
    await expectRefused(change(hdldBody(world)), field);
  });
});

describe('signers[] item', () => {
  const withSigner = (signer: Record<string, unknown>) => (b: Body) => ({
    ...b,
    signers: [b.signers[0], b.signers[1], signer],
  });
  const rules: [string, (body: Body) => unknown, string][] = [
    ['stepCode is required', withSigner({ email: 'a@example.com' }), 'signers.2.stepCode'],
    ['stepCode is at most 64', withSigner(guest({ stepCode: long(65) })), 'signers.2.stepCode'],
    ['fullName is at most 255', withSigner(guest({ fullName: long(256) })), 'signers.2.fullName'],
    [
      'identityNumber has at least 9 digits',
      withSigner(guest({ identityNumber: '12345678' })),
      'signers.2.identityNumber',
    ],
    [
      'identityNumber has at most 12 digits',
      withSigner(guest({ identityNumber: '1234567890123' })),
      'signers.2.identityNumber',
    ],
    [
      'identityNumber is digits only',
      withSigner(guest({ identityNumber: '12345678A' })),
      'signers.2.identityNumber',
    ],
    [
      'taxCode is 10 digits, not 11',
      withSigner(guest({ taxCode: '01234567891' })),
      'signers.2.taxCode',
    ],
    [
      'taxCode branch has 3 digits',
      withSigner(guest({ taxCode: '0123456789-01' })),
      'signers.2.taxCode',
    ],
    [
      'only one of identityNumber and taxCode',
      withSigner(guest({ identityNumber: '001099012345', taxCode: '0123456789' })),
      'signers.2.taxCode',
    ],
    ['email is a valid e-mail', withSigner(guest({ email: 'not-an-email' })), 'signers.2.email'],
    [
      'email is required for guest steps',
      withSigner({ stepCode: 'GUEST', fullName: 'A' }),
      'signers.2.email',
    ],
    [
      'phone is required for phone-guest steps',
      withSigner({ stepCode: 'PHONE', email: 'p@example.com' }),
      'signers.2.phone',
    ],
    [
      'phone has at least 8 characters',
      withSigner({ stepCode: 'PHONE', phone: '0912345' }),
      'signers.2.phone',
    ],
    [
      'phone has at most 20 characters',
      withSigner({ stepCode: 'PHONE', phone: '091234567890123456789' }),
      'signers.2.phone',
    ],
    [
      'phone has only digits, +, - and space',
      withSigner({ stepCode: 'PHONE', phone: '0912.345.678' }),
      'signers.2.phone',
    ],
    [
      'username is at most 255',
      withSigner({ stepCode: 'DIRECTOR', username: long(256) }),
      'signers.2.username',
    ],
    ['order is an integer', withSigner(guest({ order: 1.5 })), 'signers.2.order'],
  ];
  it.each(rules)('%s', async (_rule, change, field) => {
    await expectRefused(change(hdldBody(world)), field);
  });

  it('stepCode must match a step of the process: 400 STEP_CODE_NOT_FOUND', async () => {
    await expectRefused(
      withSigner(guest({ stepCode: 'NO_SUCH_STEP' }))(hdldBody(world)),
      'signers.2.stepCode',
      'STEP_CODE_NOT_FOUND',
    );
  });

  it('an unknown internal username: 400 USERNAME_NOT_FOUND', async () => {
    await expectRefused(
      withSigner({ stepCode: 'DIRECTOR', username: 'khong.co' })(hdldBody(world)),
      'signers.2.username',
      'USERNAME_NOT_FOUND',
    );
  });

  it('a username of another tenant is unknown here', async () => {
    await expectRefused(
      withSigner({ stepCode: 'DIRECTOR', username: world.beta.adminUsername })(hdldBody(world)),
      'signers.2.username',
      'USERNAME_NOT_FOUND',
    );
  });

  it('accepts identity numbers of 9 and 12 digits and tax codes of 10, 13 and 10-3 digits', async () => {
    const signers = [
      guest({ identityNumber: '123456789', email: 'a9@example.com' }),
      guest({ identityNumber: '123456789012', email: 'a12@example.com' }),
      guest({ taxCode: '0312345678', email: 't10@example.com' }),
      guest({ taxCode: '0312345678001', email: 't13@example.com' }),
      guest({ taxCode: '0312345678-002', email: 't103@example.com' }),
      { stepCode: 'PHONE', phone: '0912 345-678' },
    ];
    const response = await world.create(hdldBody(world, { signers }));
    expect(response.status).toBe(201);
  });
});

describe('Odd input never gives a 500', () => {
  const send = (body: string, contentType = 'application/json') =>
    world.h.request('POST', documentsPath, {
      headers: { 'X-API-Key': world.key, 'content-type': contentType },
      body,
    });

  it('a body that is not JSON: 400 INVALID_JSON', async () => {
    const [status, error] = await reply(await send('{"documentId":'));
    expect([status, error.code]).toEqual([400, 'INVALID_JSON']);
  });

  it.each([
    ['null', 'null'],
    ['an array', '[]'],
    ['a string', '"x"'],
  ])('a JSON body that is %s: 400', async (_what, body) => {
    const [status, error] = await reply(await send(body));
    expect([status, error.code]).toEqual([400, 'VALIDATION_ERROR']);
  });

  it('a body over 1 MiB: 413 PAYLOAD_TOO_LARGE before it is read', async () => {
    const body = JSON.stringify(hdldBody(world, { metadata: { blob: long(1024 * 1024) } }));
    const [status, error] = await reply(await send(body));
    expect([status, error.code]).toEqual([413, 'PAYLOAD_TOO_LARGE']);
  });

  it('a body of another media type: 415 UNSUPPORTED_MEDIA_TYPE', async () => {
    const [status, error] = await reply(await send('documentId=1', 'text/plain'));
    expect([status, error.code]).toEqual([415, 'UNSUPPORTED_MEDIA_TYPE']);
  });

  it('a signer that is not an object: 400 with its field', async () => {
    await expectRefused(hdldBody(world, { signers: ['GUEST'] }), 'signers.0');
  });
});
