import fs from 'node:fs';
import path from 'node:path';
import { builtServerSuite, rowsOfDataDir } from './builtServer';

/**
 * Signing keys at start of the built server: development creates the development CA and the
 * seal (in a child process, after listening); production creates nothing and says what the
 * operator must do; SIGTERM closes cleanly, even while keys are being created.
 */

const ready = '"msg":"signing keys ready"';
const preparing = 'preparing signing keys in a child process';

function sealRows(dataDir: string): { certificate: number | null; source: string | null }[] {
  return rowsOfDataDir(
    dataDir,
    "SELECT length(certificate_der) AS certificate, certificate_source AS source FROM signing_keys WHERE purpose = 'seal'",
  );
}

function count(dataDir: string, table: 'development_ca' | 'development_ca_issued'): number {
  return Number(rowsOfDataDir<{ n: number }>(dataDir, `SELECT count(*) AS n FROM ${table}`)[0]!.n);
}

async function until(condition: () => boolean, what: string, ms = 30_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`not within ${ms} ms: ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

describe('signing keys at start of the built server', () => {
  const { newDataDir, start } = builtServerSuite();

  it('development on a new DATA_DIR creates the development CA and the seal; SIGTERM exits 0', async () => {
    const dataDir = newDataDir();
    const server = await start({ DATA_DIR: dataDir, APP_ENV: 'development' });
    await until(() => server.stdout().includes(ready), 'signing keys ready');
    expect(count(dataDir, 'development_ca')).toBe(1);
    // The TSA's certificate, issued with the CA, and the seal's.
    expect(count(dataDir, 'development_ca_issued')).toBe(2);
    expect(fs.existsSync(path.join(dataDir, 'dev-ca'))).toBe(false);
    expect(sealRows(dataDir)).toEqual([
      { certificate: expect.any(Number), source: 'development_ca' },
    ]);
    expect(await server.stop()).toBe(0);
    expect(server.stdout()).toContain('"msg":"shutting down"');

    // The next start finds everything: no child process, nothing created again.
    const again = await start({ DATA_DIR: dataDir, APP_ENV: 'development' });
    expect(again.stdout()).not.toContain(preparing);
    expect(await again.stop()).toBe(0);
    expect(sealRows(dataDir)).toHaveLength(1);
  }, 60_000);

  it('SIGTERM while the keys are being created exits 0; the next start completes them', async () => {
    const dataDir = newDataDir();
    const server = await start({ DATA_DIR: dataDir, APP_ENV: 'development' });
    expect(await server.stop()).toBe(0);
    const again = await start({ DATA_DIR: dataDir, APP_ENV: 'development' });
    await until(() => again.stdout().includes(ready), 'signing keys ready');
    expect(sealRows(dataDir)).toEqual([
      { certificate: expect.any(Number), source: 'development_ca' },
    ]);
    expect(count(dataDir, 'development_ca')).toBe(1);
    expect(await again.stop()).toBe(0);
  }, 60_000);

  it('production creates nothing and says how the operator gets the seal certified', async () => {
    const dataDir = newDataDir();
    const server = await start({
      DATA_DIR: dataDir,
      APP_ENV: 'production',
      TSA_URL: 'https://tsa.example',
    });
    expect(server.stdout()).toContain('No seal key yet');
    expect(server.stdout()).toContain('npm run -s admin -- seal show');
    expect(server.stdout()).toContain('npm run -s admin -- signer-key import-certificate');
    expect(server.stdout()).not.toContain(preparing);
    expect(await server.stop()).toBe(0);
    expect(fs.existsSync(path.join(dataDir, 'dev-ca'))).toBe(false);
    expect(count(dataDir, 'development_ca')).toBe(0);
    expect(sealRows(dataDir)).toEqual([]);
  }, 60_000);
});
