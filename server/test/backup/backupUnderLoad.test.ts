import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { verifyAuditChain } from '../../src/audit/chain';
import { contractTrail, dossierTrail } from '../../src/audit/subject';
import { openDatabaseCopy } from '../../src/db/snapshot';
import { runCli } from '../admin/runCli';
import { nssDatabase, pdfsigSignatures, pdfsigTrusting } from '../signing/pdf/corpus';
import { builtServerSuite } from '../startup/builtServer';
import { type Api, call, signOneContract } from '../support/contractApi';
import { writeDevelopmentCaPem } from '../support/developmentCaFile';

/**
 * `admin backup` while the built server signs contracts, then `admin restore` into a new
 * DATA_DIR and a server on it: every signed PDF in the restored store is valid for pdfsig (with
 * the restored development CA as its only trust anchor), the restored server verifies and
 * serves them, and every audit chain holds. A tampered backup and a non-empty target are refused.
 */

jest.setTimeout(600_000);

const secretKey = crypto.randomBytes(32).toString('base64');
const sha256 = (bytes: Buffer) => crypto.createHash('sha256').update(bytes).digest('hex');

async function waitForLog(server: { stdout(): string }, text: string): Promise<void> {
  for (let waited = 0; !server.stdout().includes(text); waited += 200) {
    if (waited > 90_000) throw new Error(`no "${text}":\n${server.stdout()}`);
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}

describe('admin backup under write load, admin restore into a new DATA_DIR', () => {
  const suite = builtServerSuite();

  it('the restored service holds every contract signed before the backup; every signed PDF and every audit trail in it is valid', async () => {
    const dataDir = suite.newDataDir();
    const work = suite.newDataDir();
    const env = {
      DATA_DIR: dataDir,
      APP_ENV: 'development',
      SECRET_KEY: secretKey,
      RATE_LIMIT_API: '100000',
      RATE_LIMIT_UPLOAD: '100000',
    };
    const server = await suite.start(env);
    await waitForLog(server, 'signing keys ready');
    const created = await runCli(
      dataDir,
      'apikey create --tenant DEMO --org DEMO --user demo.admin --json',
      { env },
    );
    expect(created.code).toBe(0);
    const api: Api = { port: server.port, key: created.json<{ key: string }>().key };

    // Three partners sign contracts without a pause until the backup is over.
    const writes: number[] = [];
    const signed: { id: string; at: number }[] = [];
    let stop = false;
    const worker = async () => {
      while (!stop) {
        const id = await signOneContract(api, dataDir, writes);
        signed.push({ id, at: Date.now() });
      }
    };
    const workers = [worker(), worker(), worker()];
    const failed = Promise.race(workers).then(() => undefined);
    while (signed.length < 3) await Promise.race([failed, new Promise((r) => setTimeout(r, 100))]);

    const out = path.join(work, 'backup');
    const began = Date.now();
    const signedBefore = signed.map((contract) => contract.id);
    const backup = await runCli(dataDir, ['backup', '--out', out, '--json'], { env });
    const ended = Date.now();
    stop = true;
    await Promise.all(workers);
    expect({ code: backup.code, stderr: backup.stderr }).toEqual({ code: 0, stderr: '' });
    // The server answered writes while the backup ran: it was taken under load.
    expect(writes.filter((at) => at > began && at < ended).length).toBeGreaterThan(0);
    const report = backup.json<{
      directory: string;
      missingFiles: string[];
      counts: { contracts: number };
      storedFiles: number;
      secrets: string;
      masterKeyFile: string | null;
    }>();
    expect(report).toMatchObject({ directory: out, missingFiles: [], masterKeyFile: null });
    expect(report.counts.contracts).toBeGreaterThanOrEqual(signedBefore.length);
    expect(report.secrets).toContain('SECRET_KEY');
    expect(fs.readdirSync(work)).toEqual(['backup']);

    // A live DATA_DIR is never overwritten.
    const live = await runCli(dataDir, ['restore', '--from', out, '--json'], { env });
    expect(live.code).toBe(1);
    expect(live.json<{ error: { code: string } }>().error.code).toBe('RESTORE_TARGET_NOT_EMPTY');

    // One byte changed in one signed PDF: the backup is refused and nothing is created.
    const tampered = path.join(work, 'tampered');
    fs.cpSync(out, tampered, { recursive: true });
    const manifest = JSON.parse(fs.readFileSync(path.join(out, 'manifest.json'), 'utf8')) as {
      entries: { path: string; sha256: string }[];
    };
    const storedEntry = manifest.entries.find((entry) => entry.path.startsWith('files/'))!;
    const victim = path.join(tampered, storedEntry.path);
    const bytes = fs.readFileSync(victim);
    bytes[bytes.length >> 1]! ^= 0x01;
    fs.writeFileSync(victim, bytes);
    const refusedDir = path.join(work, 'refused-data');
    const refused = await runCli(refusedDir, ['restore', '--from', tampered, '--json'], {
      env: { ...env, DATA_DIR: refusedDir },
    });
    expect(refused.code).toBe(1);
    const refusal = refused.json<{ error: { code: string; message: string } }>().error;
    expect(refusal.code).toBe('RESTORE_BACKUP_DAMAGED');
    expect(refusal.message).toContain(storedEntry.path);
    expect(fs.existsSync(refusedDir)).toBe(false);
    expect(fs.readdirSync(work).sort()).toEqual(['backup', 'tampered']);

    // The restore, and a server on it (same port: the certificates name its OCSP responder).
    expect(await server.stop()).toBe(0);
    const restoredDir = path.join(work, 'restored');
    const restored = await runCli(restoredDir, ['restore', '--from', out, '--json'], {
      env: { ...env, DATA_DIR: restoredDir },
    });
    expect({ code: restored.code, stderr: restored.stderr }).toEqual({ code: 0, stderr: '' });
    const second = await suite.start({
      ...env,
      DATA_DIR: restoredDir,
      PORT: String(server.port),
    });
    // Its signing keys came with the backup (sealed under the same SECRET_KEY): none is made.
    expect(second.stdout()).not.toContain('preparing signing keys');
    // startBuiltServer reports the port it picked; PORT in the environment overrides it.
    const restoredApi: Api = { port: server.port, key: api.key };

    const copy = openDatabaseCopy(path.join(restoredDir, 'esign.sqlite'));
    try {
      expect(copy.integrityProblems()).toEqual([]);
      const contracts = await copy.db
        .selectFrom('contracts')
        .select(['id', 'uuid', 'status'])
        .execute();
      const completed = contracts.filter((contract) => contract.status === 'completed');
      // Everything signed before the backup began is in it.
      expect(completed.map((contract) => contract.uuid)).toEqual(
        expect.arrayContaining(signedBefore),
      );

      // Every audit trail in the restored database holds.
      const dossiers = await copy.db.selectFrom('dossiers').select('id').execute();
      const trails = [
        ...contracts.map((contract) => contractTrail(contract.id)),
        ...dossiers.map((dossier) => dossierTrail(dossier.id)),
      ];
      for (const trail of trails) {
        expect({ trail, result: await verifyAuditChain(copy.db, trail) }).toMatchObject({
          result: { valid: true },
        });
      }

      // Every signed PDF in the restored store: pdfsig finds each signature valid and its
      // signer trusted, with the restored development CA as the only anchor.
      const restoredCa = await writeDevelopmentCaPem(copy.db, path.join(work, 'restored-ca.pem'));
      const nss = nssDatabase(path.join(work, 'nss'), [restoredCa]);
      const versions = await copy.db
        .selectFrom('contract_file_versions')
        .select(['contract_id', 'kind', 'sha256'])
        .where('kind', '!=', 'original')
        .execute();
      expect(versions.length).toBeGreaterThanOrEqual(2 * completed.length);
      for (const version of versions) {
        const file = path.join(
          restoredDir,
          'files',
          version.sha256.slice(0, 2),
          version.sha256.slice(2, 4),
          version.sha256,
        );
        expect(sha256(fs.readFileSync(file))).toBe(version.sha256);
        const signatures = pdfsigSignatures(await pdfsigTrusting(file, nss));
        // The archive revision's document timestamp is not one pdfsig validates.
        const first = signatures[0];
        expect({ version, first }).toMatchObject({
          first: { valid: true, trusted: true, total: version.kind === 'signature' },
        });
      }

      // The restored server verifies and serves what the backup holds.
      for (const contract of completed) {
        const verified = await call(restoredApi, 'GET', `/signing/verify/${contract.uuid}`);
        expect({ contract: contract.uuid, isValid: verified.data.isValid }).toEqual({
          contract: contract.uuid,
          isValid: true,
        });
      }
    } finally {
      await copy.close();
    }
    // Signing goes on in the restored service.
    await signOneContract(restoredApi, restoredDir, []);
  });
});
