import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { readSignatures } from '../../../src/pdf/signing';
import { developmentCa } from '../../../src/signing/ca/developmentCa';
import { prepareRevision, sealPdf, signWithServerKey } from '../../../src/signing/finalize';
import { issueSignerCertificate, sealKey } from '../../../src/signing/keys/signingKeys';
import { TestPki } from '../certificates/testPki';
import { classicPdf } from '../pdf/corpus';
import { createOpensslPki, type OpensslPki } from '../timestamps/opensslTsa';
import {
  addVersion,
  createWorld,
  opensslVerdicts,
  pdfsigVerdicts,
  persisted,
  refusal,
  type World,
} from './world';

jest.setTimeout(120_000);

const hour = 3600_000;
let pki: TestPki;
let tsa: OpensslPki;
let contract: Buffer;
let dir: string;

beforeAll(async () => {
  pki = await TestPki.create();
  tsa = createOpensslPki();
  contract = await classicPdf();
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'finalize-server-'));
}, 120_000);

afterAll(async () => {
  await pki?.close();
  tsa?.remove();
  fs.rmSync(dir, { recursive: true, force: true });
});

function prepare(world: World) {
  return prepareRevision(world.deps, {
    tenantId: world.tenantId,
    sourceSha256: world.sourceSha256,
    signingTime: new Date(),
    expiresAt: new Date(Date.now() + hour),
  });
}

async function tenantRow(world: World) {
  return world.h.deps.db
    .selectFrom('tenants')
    .selectAll()
    .where('id', '=', world.tenantId)
    .executeTakeFirstOrThrow();
}

describe('signWithServerKey (development: development CA and TSA)', () => {
  let world: World;
  beforeAll(async () => {
    world = await createWorld(pki, tsa, contract);
  });
  afterAll(() => world.h.close());

  it('signs with a cloud_hsm signer key, timestamped by the TSA, through the same finalize', async () => {
    const key = await issueSignerCertificate(world.deps, await tenantRow(world), {
      email: 'lan@example.vn',
      name: 'Phạm Thị Lan',
    });
    const preparation = await prepare(world);
    const result = await signWithServerKey(world.deps, preparation.id, key, {
      tenantId: world.tenantId,
      commit: addVersion(world),
    });
    expect(result.summary).toMatchObject({
      documentDigest: preparation.contractHash,
      signatureAlgorithm: 'rsaPkcs1Sha256',
      trusted: true,
      level: 'B-T',
      revocation: { status: 'unknown' },
    });
    expect(result.summary.signer.subject).toContain('CN=Phạm Thị Lan');
    const signed = world.h.deps.files.pathOf(result.sha256);
    expect(pdfsigVerdicts(signed)).toEqual([true]);
    const ca = (await developmentCa(world.deps)).certificate;
    const verdicts = opensslVerdicts(dir, signed, 0, { signerCa: ca, tsaCa: ca });
    expect(verdicts.cms).toContain('Verification successful');
    expect(verdicts.ts).toContain('Verification: OK');
  });

  it('a TSA that fails is 502 TIMESTAMP_FAILED, and nothing changes', async () => {
    const down = await createWorld(pki, tsa, contract, {
      env: { TSA_URL: `${pki.deadBase.replace('http:', 'https:')}/tsa` },
    });
    try {
      const preparation = await prepare(down);
      const before = await persisted(down);
      const error = await refusal(
        signWithServerKey(down.deps, preparation.id, await sealKey(down.deps), {
          tenantId: down.tenantId,
          commit: addVersion(down),
        }),
      );
      expect(error).toMatchObject({ status: 502, code: 'TIMESTAMP_FAILED' });
      expect(await persisted(down)).toEqual(before);
    } finally {
      await down.h.close();
    }
  });
});

describe('sealPdf', () => {
  let world: World;
  beforeAll(async () => {
    world = await createWorld(pki, tsa, contract);
  });
  afterAll(() => world.h.close());

  it('seals a PDF with the service seal: a temp file that pdfsig and openssl accept', async () => {
    const source = path.join(dir, 'audit.pdf');
    fs.writeFileSync(source, contract);
    const sealed = await sealPdf(world.deps, source, { reason: 'Biên bản kiểm toán' });
    try {
      expect(path.dirname(sealed)).toBe(world.h.deps.files.tempDir);
      expect(fs.readFileSync(source).equals(contract)).toBe(true);
      expect(pdfsigVerdicts(sealed)).toEqual([true]);
      const [signature] = readSignatures(sealed).signatures;
      expect(signature?.reason).toBe('Biên bản kiểm toán');
      const ca = (await developmentCa(world.deps)).certificate;
      const verdicts = opensslVerdicts(dir, sealed, 0, { signerCa: ca, tsaCa: ca });
      expect(verdicts.cms).toContain('Verification successful');
      expect(verdicts.ts).toContain('Verification: OK');
      // Only the sealed file is left in the temp directory: the prepared one is gone.
      expect(fs.readdirSync(world.h.deps.files.tempDir)).toEqual([path.basename(sealed)]);
    } finally {
      fs.rmSync(sealed, { force: true });
    }
  });
});
