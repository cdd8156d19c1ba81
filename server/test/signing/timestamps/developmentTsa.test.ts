import { execFileSync } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { developmentTsa } from '../../../src/dev/developmentTsa';
import { writeDevelopmentCaPem } from '../../support/developmentCaFile';
import { createHarness, type Harness } from '../../support/harness';

let h: Harness;
let work: string;

beforeAll(() => {
  h = createHarness();
  // openssl ts -verify judges certificate validity by the real time.
  h.clock.set(new Date());
  work = fs.mkdtempSync(path.join(h.dataDir, 'work-'));
});
afterAll(() => h.close());

const openssl = (args: string[]) =>
  execFileSync('openssl', args, { cwd: work, stdio: ['ignore', 'pipe', 'pipe'] }).toString();

function query(name: string, data: string, hash = 'sha256'): Buffer {
  fs.writeFileSync(path.join(work, `${name}.txt`), data);
  openssl(['ts', '-query', '-data', `${name}.txt`, `-${hash}`, '-cert', '-out', `${name}.tsq`]);
  return fs.readFileSync(path.join(work, `${name}.tsq`));
}

function post(body: Uint8Array | string, contentType = 'application/timestamp-query', app = h.app) {
  return app.request('/api/dev/tsa', {
    method: 'POST',
    headers: { 'content-type': contentType },
    body: typeof body === 'string' ? body : new Uint8Array(body),
  });
}

describe('development TSA', () => {
  it("signs with the development CA's TSA certificate (critical timeStamping EKU) and key, sealed in the database", async () => {
    const tsa = await developmentTsa(h.deps);
    const row = await h.deps.db.selectFrom('development_ca').selectAll().executeTakeFirstOrThrow();
    expect(row.tsa_private_key).toMatch(/^v1\./);
    const tsaFile = await writeDevelopmentCaPem(h.deps.db, path.join(work, 'tsa.pem'), 'tsa');
    const text = openssl(['x509', '-in', tsaFile, '-noout', '-text']);
    expect(text).toMatch(/X509v3 Extended Key Usage: critical\s+Time Stamping/);
    expect(tsa.certificateChain[1]!.equals(tsa.caCertificate)).toBe(true);
    expect((await developmentTsa(h.deps)).caCertificate.equals(tsa.caCertificate)).toBe(true);
  });

  it('POST /api/dev/tsa answers a timestamp reply that openssl ts -verify accepts (-data and -digest)', async () => {
    const response = await post(query('contract', 'bytes of a signature'));
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toBe('application/timestamp-reply');
    fs.writeFileSync(path.join(work, 'contract.tsr'), Buffer.from(await response.arrayBuffer()));
    const ca = await writeDevelopmentCaPem(h.deps.db, path.join(work, 'ca.pem'));
    expect(
      openssl(['ts', '-verify', '-data', 'contract.txt', '-in', 'contract.tsr', '-CAfile', ca]),
    ).toContain('Verification: OK');
    openssl(['ts', '-reply', '-in', 'contract.tsr', '-token_out', '-out', 'contract.tok']);
    const digest = crypto.createHash('sha256').update('bytes of a signature').digest('hex');
    expect(
      openssl([
        'ts',
        '-verify',
        '-digest',
        digest,
        '-in',
        'contract.tok',
        '-token_in',
        '-CAfile',
        ca,
      ]),
    ).toContain('Verification: OK');
    const text = openssl(['ts', '-reply', '-in', 'contract.tsr', '-text']);
    expect(text).toContain('Status: Granted.');
    expect(text).toContain('Policy OID: 2.999.3161.1');
  });

  it('rejects, as RFC 3161 says, a request it cannot grant (SHA-1 imprint: badAlg)', async () => {
    const response = await post(query('weak', 'data', 'sha1'));
    expect(response.status).toBe(200);
    fs.writeFileSync(path.join(work, 'weak.tsr'), Buffer.from(await response.arrayBuffer()));
    const text = openssl(['ts', '-reply', '-in', 'weak.tsr', '-text']);
    expect(text).toContain('Status: Rejected.');
    expect(text).toContain('unrecognized or unsupported algorithm identifier');
  });

  it('refuses a body that is not a TimeStampReq with 400 TIMESTAMP_REQUEST_INVALID', async () => {
    const response = await post(Buffer.from('not DER'));
    expect(response.status).toBe(400);
    expect(await response.json()).toMatchObject({ code: 'TIMESTAMP_REQUEST_INVALID' });
  });

  it('refuses another media type with 415 and an oversized body with 413', async () => {
    const wrongType = await post(query('json', 'x'), 'application/json');
    expect(wrongType.status).toBe(415);
    expect(await wrongType.json()).toMatchObject({ code: 'UNSUPPORTED_MEDIA_TYPE' });
    const tooLarge = await post(Buffer.alloc(20_000));
    expect(tooLarge.status).toBe(413);
  });

  it('is documented in the OpenAPI document as devTimestamp, with no security', async () => {
    const document = (await (await h.app.request('/api/openapi.json')).json()) as {
      paths: Record<string, { post?: { operationId: string; security: unknown[] } }>;
    };
    expect(document.paths['/api/dev/tsa']?.post).toMatchObject({
      operationId: 'devTimestamp',
      security: [],
    });
  });

  it('is rate-limited per client like the other public routes (429)', async () => {
    const limited = createHarness({ RATE_LIMIT_API: '2' });
    try {
      const request = query('limited', 'x');
      const statuses: number[] = [];
      for (let i = 0; i < 3; i += 1) {
        statuses.push((await post(request, 'application/timestamp-query', limited.app)).status);
      }
      expect(statuses).toEqual([200, 200, 429]);
    } finally {
      await limited.close();
    }
  });

  it('does not exist in production (404) and is never created there', async () => {
    const production = createHarness({ APP_ENV: 'production', TSA_URL: 'https://tsa.example/' });
    try {
      const response = await post(
        query('prod', 'x'),
        'application/timestamp-query',
        production.app,
      );
      expect(response.status).toBe(404);
      expect(await response.json()).toMatchObject({ code: 'NOT_FOUND' });
      expect(await production.deps.db.selectFrom('development_ca').select('id').execute()).toEqual(
        [],
      );
      await expect(developmentTsa(production.deps)).rejects.toMatchObject({
        code: 'DEVELOPMENT_CA_DISABLED',
      });
    } finally {
      await production.close();
    }
  });
});
