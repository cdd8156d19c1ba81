import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { buildApp } from '../../src/app';
import { RateLimiter } from '../../src/auth/rateLimit';
import { issueToken } from '../../src/auth/tokens';
import { forceFailure } from '../support/forcedFailure';
import {
  type ContractWorld,
  contractPdf,
  contractRows,
  contractsPath,
  formOf,
  openContractWorld,
  storedFiles,
  tempFiles,
  wordDocument,
} from './fixtures';

jest.setTimeout(120_000);

let world: ContractWorld;
beforeAll(async () => {
  world = await openContractWorld();
});
afterAll(() => world.close());

async function errorOf(response: Response) {
  return (await response.json()) as {
    statusCode: number;
    code: string;
    error: string;
    message: string;
    details?: { field?: string };
  };
}

describe('POST /api/contracts: a PDF', () => {
  it('201 with id, title, status draft and fileUrl; the original downloads byte for byte', async () => {
    const bytes = await contractPdf('happy');
    const response = await world.upload(world.acme.orgKey, {
      file: { name: 'Hợp đồng.pdf', bytes },
      title: 'Hợp đồng mua bán 01',
      description: 'Ghi chú',
    });
    expect(response.status).toBe(201);
    const body = (await response.json()) as {
      statusCode: number;
      data: { id: string; title: string; status: string; fileUrl: string };
    };
    expect(body.statusCode).toBe(200);
    expect(body.data).toMatchObject({ title: 'Hợp đồng mua bán 01', status: 'draft' });
    expect(body.data.fileUrl).toBe(
      `http://127.0.0.1:3000/api/contracts/${body.data.id}/download?type=original`,
    );
    const download = await world.request(
      'GET',
      body.data.fileUrl.replace('http://127.0.0.1:3000', ''),
      world.acme.orgKey,
    );
    expect(download.status).toBe(200);
    expect(Buffer.from(await download.arrayBuffer()).equals(bytes)).toBe(true);
    expect(tempFiles(world.h)).toEqual([]);
  });

  it('accepts an access token (Bearer) as well as X-API-Key', async () => {
    const token = await issueToken(world.h.deps, world.acme.adminUserId, 'access');
    const response = await world.h.app.request(contractsPath, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}` },
      body: formOf({ file: { name: 'a.pdf', bytes: await contractPdf('bearer') } }),
    });
    expect(response.status).toBe(201);
  });
});

describe('POST /api/contracts: the file', () => {
  it('a .docx is converted by LibreOffice into a real PDF', async () => {
    const response = await world.upload(world.acme.orgKey, {
      file: { name: 'Hợp đồng lao động.docx', bytes: wordDocument('Hợp đồng lao động số 7') },
    });
    expect(response.status).toBe(201);
    const { data } = (await response.json()) as { data: { id: string } };
    const download = await world.request(
      'GET',
      `${contractsPath}/${data.id}/download?type=original`,
      world.acme.orgKey,
    );
    const pdf = Buffer.from(await download.arrayBuffer());
    expect(pdf.subarray(0, 5).toString('latin1')).toBe('%PDF-');
    const file = path.join(world.h.dataDir, 'converted.pdf');
    fs.writeFileSync(file, pdf);
    const text = spawnSync('pdftotext', [file, '-'], { encoding: 'utf8' }).stdout;
    expect(text).toContain('Hợp đồng lao động số 7');
    expect(tempFiles(world.h)).toEqual([]);
  });

  it('without LibreOffice: 415 DOCX_CONVERSION_UNAVAILABLE naming the Debian package', async () => {
    const other = await openContractWorld({ SOFFICE_PATH: '/nonexistent/soffice' });
    try {
      const before = await contractRows(other.h);
      const response = await other.upload(other.acme.orgKey, {
        file: { name: 'a.docx', bytes: wordDocument('x') },
      });
      expect(response.status).toBe(415);
      const body = await errorOf(response);
      expect(body.code).toBe('DOCX_CONVERSION_UNAVAILABLE');
      expect(body.message).toContain('libreoffice-writer-nogui');
      expect(await contractRows(other.h)).toEqual(before);
      expect(tempFiles(other.h)).toEqual([]);
    } finally {
      await other.close();
    }
  });

  it('a conversion over the time limit is killed: 422 DOCX_CONVERSION_TIMEOUT', async () => {
    const slow = path.join(world.h.dataDir, 'slow-soffice.sh');
    fs.writeFileSync(slow, '#!/bin/sh\nsleep 30\n', { mode: 0o755 });
    const other = await openContractWorld({
      SOFFICE_PATH: slow,
      DOCX_CONVERSION_TIMEOUT_SECONDS: '1',
    });
    try {
      const started = Date.now();
      const response = await other.upload(other.acme.orgKey, {
        file: { name: 'a.docx', bytes: wordDocument('x') },
      });
      expect((await errorOf(response)).code).toBe('DOCX_CONVERSION_TIMEOUT');
      expect(Date.now() - started).toBeLessThan(10_000);
      expect(tempFiles(other.h)).toEqual([]);
    } finally {
      await other.close();
    }
  });

  it.each([
    [
      'a non-PDF renamed .pdf',
      'fake.pdf',
      Buffer.from('PK\u0003\u0004 not a pdf at all'),
      415,
      'NOT_A_PDF',
    ],
    [
      'a non-Word file renamed .docx',
      'fake.docx',
      Buffer.from('%PDF-1.7 hello'),
      415,
      'NOT_A_DOCX',
    ],
    ['a .txt file', 'notes.txt', Buffer.from('hello'), 415, 'UNSUPPORTED_FILE_TYPE'],
    ['an empty file', 'empty.pdf', Buffer.alloc(0), 400, 'VALIDATION_ERROR'],
  ])('%s (%s): refused and nothing kept', async (_label, name, bytes, status, code) => {
    const before = await contractRows(world.h);
    const files = storedFiles(world.h).length;
    const response = await world.upload(world.acme.orgKey, { file: { name, bytes } });
    expect(response.status).toBe(status);
    expect((await errorOf(response)).code).toBe(code);
    expect(await contractRows(world.h)).toEqual(before);
    expect(storedFiles(world.h)).toHaveLength(files);
    expect(tempFiles(world.h)).toEqual([]);
  });

  it('an encrypted PDF: 422 PDF_ENCRYPTED', async () => {
    const plain = path.join(world.h.dataDir, 'plain.pdf');
    const encrypted = path.join(world.h.dataDir, 'encrypted.pdf');
    fs.writeFileSync(plain, await contractPdf('encrypted'));
    const qpdf = spawnSync('qpdf', ['--encrypt', 'user', 'owner', '256', '--', plain, encrypted]);
    expect(qpdf.status).toBe(0);
    const response = await world.upload(world.acme.orgKey, {
      file: { name: 'secret.pdf', bytes: fs.readFileSync(encrypted) },
    });
    expect(response.status).toBe(422);
    expect((await errorOf(response)).code).toBe('PDF_ENCRYPTED');
  });

  it('a file over 50 MB: 413 FILE_TOO_LARGE in the error shape, nothing kept', async () => {
    const before = await contractRows(world.h);
    const big = Buffer.concat([await contractPdf('big'), Buffer.alloc(50 * 1024 * 1024, 0x20)]);
    const response = await world.upload(world.acme.orgKey, {
      file: { name: 'big.pdf', bytes: big },
    });
    expect(response.status).toBe(413);
    expect(await errorOf(response)).toMatchObject({
      statusCode: 413,
      error: 'Payload Too Large',
      code: 'FILE_TOO_LARGE',
      details: { field: 'file' },
    });
    expect(await contractRows(world.h)).toEqual(before);
    expect(tempFiles(world.h)).toEqual([]);
  });

  it('a body that is not multipart: 415 UNSUPPORTED_MEDIA_TYPE', async () => {
    const response = await world.request('POST', contractsPath, world.acme.orgKey, { title: 'x' });
    expect(response.status).toBe(415);
    expect((await errorOf(response)).code).toBe('UNSUPPORTED_MEDIA_TYPE');
  });

  it('no file part: 400 at file', async () => {
    const response = await world.upload(world.acme.orgKey, { file: null });
    expect(response.status).toBe(400);
    expect((await errorOf(response)).details?.field).toBe('file');
  });
});

describe('POST /api/contracts: the fields', () => {
  const signer = (email: string, order: number, role: 'signer' | 'viewer' = 'signer') => ({
    name: 'Lê Văn Cường',
    email,
    role,
    order,
  });
  it.each([
    ['title missing', { fields: { title: '' } }, 'title'],
    ['contractTypeId not a number', { contractTypeId: 'abc' }, 'contractTypeId'],
    ['expiredAt not ISO 8601', { expiredAt: '02/12/2026' }, 'expiredAt'],
    ['expiredAt in the past', { expiredAt: '2026-11-25T07:59:59Z' }, 'expiredAt'],
    ['signers not JSON', { signers: '[{' }, 'signers'],
    ['signers empty', { signers: [] }, 'signers'],
    ['a signer without e-mail', { signers: '[{"name":"A","order":1}]' }, 'signers.0.email'],
    ['a bad e-mail', { signers: [signer('not-an-address', 1)] }, 'signers.0.email'],
    [
      'a bad role',
      { signers: '[{"name":"A","email":"a@x.example","role":"boss","order":1}]' },
      'signers.0.role',
    ],
    ['order 0', { signers: [signer('a@x.example', 0)] }, 'signers.0.order'],
    [
      'the same e-mail twice (letter case ignored)',
      { signers: [signer('a@x.example', 1), signer('A@X.example', 2)] },
      'signers.1.email',
    ],
    [
      'orders with a gap',
      { signers: [signer('a@x.example', 1), signer('b@x.example', 3)] },
      'signers.1.order',
    ],
    ['orders not from 1', { signers: [signer('a@x.example', 2)] }, 'signers.0.order'],
    ['only viewers', { signers: [signer('a@x.example', 1, 'viewer')] }, 'signers'],
    [
      'a bad phone',
      { signers: '[{"name":"A","email":"a@x.example","phone":"12ab","order":1}]' },
      'signers.0.phone',
    ],
  ])('%s: 400 VALIDATION_ERROR at the field, nothing kept', async (_label, spec, field) => {
    const before = await contractRows(world.h);
    const files = storedFiles(world.h).length;
    const response = await world.upload(world.acme.orgKey, spec as never);
    expect(response.status).toBe(400);
    const body = await errorOf(response);
    expect(body.code).toBe('VALIDATION_ERROR');
    expect(body.details?.field).toBe(field);
    expect(await contractRows(world.h)).toEqual(before);
    expect(storedFiles(world.h)).toHaveLength(files);
    expect(tempFiles(world.h)).toEqual([]);
  });

  it('equal orders sign in parallel; viewers are kept with their order', async () => {
    const id = await world.create({
      signers: [
        signer('a@x.example', 1),
        signer('b@x.example', 1),
        signer('c@x.example', 2),
        signer('v@x.example', 5, 'viewer'),
      ],
    });
    const detail = await world.request('GET', `${contractsPath}/${id}`, world.acme.orgKey);
    const { data } = (await detail.json()) as {
      data: { signers: { email: string; order: number; role: string; status: string }[] };
    };
    expect(data.signers.map((s) => [s.email, s.order, s.role, s.status])).toEqual([
      ['a@x.example', 1, 'signer', 'waiting'],
      ['b@x.example', 1, 'signer', 'waiting'],
      ['c@x.example', 2, 'signer', 'waiting'],
      ['v@x.example', 5, 'viewer', 'waiting'],
    ]);
  });

  it('an unknown contract type: 404 CONTRACT_TYPE_NOT_FOUND; another tenant has its own types', async () => {
    const response = await world.upload(world.acme.orgKey, { contractTypeId: '2' });
    expect(response.status).toBe(404);
    expect(await errorOf(response)).toMatchObject({
      code: 'CONTRACT_TYPE_NOT_FOUND',
      details: { field: 'contractTypeId' },
    });
  });
});

describe('POST /api/contracts: atomicity, permission, rate limit', () => {
  it('a failure in the last step (the created event) leaves no row and no bytes', async () => {
    const restore = await forceFailure(world.h.runtime.database, {
      table: 'contract_audit_events',
      event: 'INSERT',
      message: 'forced failure in the last step',
    });
    try {
      const before = await contractRows(world.h);
      const files = storedFiles(world.h);
      const response = await world
        .upload(world.acme.orgKey, { file: { name: 'x.pdf', bytes: await contractPdf('atomic') } })
        .catch((error: unknown) => error);
      // The error handler answers 500 for an unexpected database failure.
      expect(response instanceof Response ? response.status : 500).toBe(500);
      expect(await contractRows(world.h)).toEqual(before);
      expect(storedFiles(world.h)).toEqual(files);
      expect(tempFiles(world.h)).toEqual([]);
    } finally {
      await restore();
    }
  });

  it('without contract:create: 403; without a credential: 401', async () => {
    const viewer = await world.keyWith(['contract:view']);
    expect((await world.upload(viewer)).status).toBe(403);
    const anonymous = await world.h.app.request(contractsPath, {
      method: 'POST',
      body: formOf({ file: { name: 'a.pdf', bytes: await contractPdf('anon') } }),
    });
    expect(anonymous.status).toBe(401);
  });

  it('the 11th upload in a minute: 429 with Retry-After', async () => {
    const app = buildApp(world.h.deps, {
      limiter: new RateLimiter({ auth: 10, api: 100, upload: 10 }),
    });
    const key = await world.keyWith(['contract:create']);
    const bytes = await contractPdf('rate');
    const statuses: number[] = [];
    for (let i = 0; i < 11; i++) {
      const response = await app.request(contractsPath, {
        method: 'POST',
        headers: { 'x-api-key': key },
        body: formOf({ file: { name: 'a.pdf', bytes } }),
      });
      statuses.push(response.status);
      if (response.status === 429) {
        expect(Number(response.headers.get('retry-after'))).toBeGreaterThan(0);
        expect((await errorOf(response)).code).toBe('RATE_LIMITED');
      }
    }
    expect(statuses.slice(0, 10).every((status) => status === 201)).toBe(true);
    expect(statuses[10]).toBe(429);
  });
});
