import fs from 'node:fs';
import path from 'node:path';
import { developmentCa } from '../../../src/dev/developmentCa';
import { issueSignerCertificate, sealKey } from '../../../src/keys/signingKeys';
import { readSignatures } from '../../../src/pdf/signing';
import { signWithServerKey } from '../../../src/signatures';
import { sealPdf } from '../../../src/signing/finalize';
import { localStoreOf } from '../../../src/storage/localFileStore';
import {
  addVersion,
  createWorld,
  opensslVerdicts,
  pdfsigVerdicts,
  persisted,
  prepare,
  refusal,
  useTools,
  useWorld,
  type World,
} from './world';

jest.setTimeout(120_000);

const tools = useTools();

async function tenantRow(world: World) {
  return world.h.deps.db
    .selectFrom('tenants')
    .selectAll()
    .where('id', '=', world.tenantId)
    .executeTakeFirstOrThrow();
}

describe('signWithServerKey (development: development CA and TSA)', () => {
  let world: World;
  useWorld(tools, (made) => {
    world = made;
  });

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
      // Prepared without the key's chain: its answer goes into a later DSS.
      level: 'B-T',
      // The development CA's responder answers (in-process) for the certificate it issued.
      revocation: { status: 'good', chainStatus: 'good' },
    });
    expect(result.summary.signer.subject).toContain('CN=Phạm Thị Lan');
    const signed = localStoreOf(world.h.deps.files).pathOf(result.sha256);
    expect(pdfsigVerdicts(signed)).toEqual([true]);
    const ca = (await developmentCa(world.deps)).certificate;
    const verdicts = opensslVerdicts(tools.dir, signed, 0, { signerCa: ca, tsaCa: ca });
    expect(verdicts.cms).toContain('Verification successful');
    expect(verdicts.ts).toContain('Verification: OK');
  });

  it('a TSA that fails is 502 TIMESTAMP_FAILED, and nothing changes', async () => {
    const down = await createWorld(tools, {
      env: { TSA_URL: `${tools.pki.deadBase.replace('http:', 'https:')}/tsa` },
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
      expect(error).toMatchObject({ code: 'TIMESTAMP_FAILED' });
      expect(await persisted(down)).toEqual(before);
    } finally {
      await down.h.close();
    }
  });
});

describe('sealPdf', () => {
  let world: World;
  useWorld(tools, (made) => {
    world = made;
  });

  it('seals a PDF with the service seal: a temp file that pdfsig and openssl accept', async () => {
    const source = path.join(tools.dir, 'audit.pdf');
    fs.writeFileSync(source, tools.contract);
    const sealed = await sealPdf(world.deps, await sealKey(world.deps), source, {
      reason: 'Biên bản kiểm toán',
    });
    try {
      expect(path.dirname(sealed)).toBe(world.h.deps.files.tempDir);
      expect(fs.readFileSync(source).equals(tools.contract)).toBe(true);
      expect(pdfsigVerdicts(sealed)).toEqual([true]);
      const [signature] = readSignatures(sealed).signatures;
      expect(signature?.reason).toBe('Biên bản kiểm toán');
      const ca = (await developmentCa(world.deps)).certificate;
      const verdicts = opensslVerdicts(tools.dir, sealed, 0, { signerCa: ca, tsaCa: ca });
      expect(verdicts.cms).toContain('Verification successful');
      expect(verdicts.ts).toContain('Verification: OK');
      // Only the sealed file is left in the temp directory: the prepared one is gone.
      expect(fs.readdirSync(world.h.deps.files.tempDir)).toEqual([path.basename(sealed)]);
    } finally {
      fs.rmSync(sealed, { force: true });
    }
  });
});
