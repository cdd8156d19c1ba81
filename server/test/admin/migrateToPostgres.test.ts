import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { onSqlite } from '../../../test/support/onSqlite';
import {
  type PostgresCluster,
  postgresUrlVariable,
  startPostgresCluster,
} from '../../../test/support/postgres';
import { openPostgresDatabase } from '../../src/db/database';
import { contractPdf, formOf } from '../contracts/fixtures';
import { nssDatabase, pdfsigSignatures, pdfsigTrusting } from '../signing/pdf/corpus';
import { builtServerSuite } from '../startup/builtServer';
import { type Api, call, download, signOneContract } from '../support/contractApi';
import { writeDevelopmentCaPem } from '../support/developmentCaFile';
import { approveOpenTask, createDossier, createProcess } from '../support/dossiers';
import { createHarness, seedTenant } from '../support/harness';
import { runCli } from './runCli';

/**
 * `admin db migrate-to-postgres --to URL` on a single-host deployment the built server made on
 * SQLite (contracts signed through the API with the development CA, a tenant with dossiers in a
 * workflow), then the built server on PostgreSQL with the same DATA_DIR files and the master
 * secret the command names: it lists and serves the same contracts and dossiers byte for byte,
 * pdfsig finds every signed PDF valid and trusted, every audit trail holds (the real CLI on
 * PostgreSQL), the old API keys work and new contracts are signed with the next ids. A target
 * that holds anything is refused, so is a second run.
 *
 * The source is SQLite: the sqlite jest project only. PostgreSQL: ESIGN_TEST_PG_URL's cluster
 * when the run started one, else a cluster of this file's own.
 */

jest.setTimeout(600_000);

let cluster: PostgresCluster | undefined;
let baseUrl: string;
let databases = 0;

/** A new, empty database on the cluster (psql), as a URL. */
function newDatabase(): string {
  databases += 1;
  const name = `migrate_${process.pid}_${databases}`;
  execFileSync('psql', [`${baseUrl}/postgres`, '-qXc', `CREATE DATABASE ${name}`]);
  return `${baseUrl}/${name}`;
}

function psql(url: string, command: string): string {
  return execFileSync('psql', [url, '-qXAtc', command], { encoding: 'utf8' }).trim();
}

async function waitForLog(server: { stdout(): string }, text: string): Promise<void> {
  for (let waited = 0; !server.stdout().includes(text); waited += 200) {
    if (waited > 90_000) throw new Error(`no "${text}":\n${server.stdout()}`);
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}

const presigned = /\?expires=\d+&signature=[0-9a-f]+/g;

/** A dossier's view without the expiry and signature of its presigned file URLs (they change). */
function withoutUrlSignatures(view: unknown): unknown {
  return JSON.parse(JSON.stringify(view).replace(presigned, ''));
}

/** The bytes behind every presigned file URL of a dossier's view. */
async function filesOf(view: unknown): Promise<Buffer[]> {
  const urls = JSON.stringify(view).match(/"url":"([^"]+)"/g) ?? [];
  const files: Buffer[] = [];
  for (const match of urls) {
    const response = await fetch(match.slice(7, -1));
    expect(response.status).toBe(200);
    files.push(Buffer.from(await response.arrayBuffer()));
  }
  return files;
}

interface Report {
  schemaVersion: number;
  tables: { name: string; rows: number; digest: string }[];
  skipped: { name: string }[];
  rows: number;
  auditTrails: { checked: number; events: number; brokenInSource: string[] };
  signedPdfs: { checked: number; valid: number; invalidInSource: string[] };
  masterSecret: { from: string; file?: string };
}

onSqlite.describe('admin db migrate-to-postgres', () => {
  const suite = builtServerSuite();

  beforeAll(async () => {
    const given = process.env[postgresUrlVariable];
    if (given) baseUrl = given;
    else {
      cluster = await startPostgresCluster();
      baseUrl = cluster.baseUrl;
    }
  }, 120_000);
  afterAll(() => cluster?.stop());

  it('moves a signing deployment to PostgreSQL: the same contracts, dossiers, bytes, trails and keys; signing goes on', async () => {
    const dataDir = suite.newDataDir();
    const work = suite.newDataDir();
    const env = {
      DATA_DIR: dataDir,
      APP_ENV: 'development',
      RATE_LIMIT_API: '100000',
      RATE_LIMIT_UPLOAD: '100000',
    };

    // The single-host deployment: the built server on SQLite (master.key under DATA_DIR).
    const server = await suite.start(env);
    await waitForLog(server, 'signing keys ready');
    const created = await runCli(
      dataDir,
      'apikey create --tenant DEMO --org DEMO --user demo.admin --json',
      { env },
    );
    expect(created.code).toBe(0);
    const api: Api = { port: server.port, key: created.json<{ key: string }>().key };
    const contracts: string[] = [];
    for (let n = 0; n < 3; n += 1) contracts.push(await signOneContract(api, dataDir, []));
    // One more sent, not signed; one created only.
    const unsigned = await call(
      api,
      'POST',
      '/contracts',
      formOf({
        file: { name: 'nhap.pdf', bytes: await contractPdf('draft') },
        expiredAt: new Date(Date.now() + 7 * 86_400_000).toISOString(),
        signers: [
          { name: 'Chưa ký', email: 'later@partner.example', phone: '0919999999', order: 1 },
        ],
      }),
    );
    contracts.push(unsigned.data.id as string);
    const before = {
      list: (await call(api, 'GET', '/contracts?limit=100')).data,
      signed: new Map<string, Buffer>(),
      originals: new Map<string, Buffer>(),
    };
    for (const id of contracts) {
      before.originals.set(id, await download(api, `/contracts/${id}/download?type=original`));
      if (id !== unsigned.data.id) {
        before.signed.set(id, await download(api, `/contracts/${id}/download?type=signed`));
      }
    }
    expect(await server.stop()).toBe(0);

    // A second tenant with dossiers in a workflow (turns, tasks, history, search keys), written
    // by the service's own code on the same SQLite file.
    const h = createHarness({ DATA_DIR: dataDir });
    const tenant = await seedTenant(h, 'MIGR');
    const steps = [
      { stepCode: 'XL', kind: 'internal' as const, defaultUserId: tenant.adminUserId },
      { stepCode: 'DUYET', kind: 'internal' as const, defaultUserId: tenant.adminUserId },
    ];
    const workflow = await createProcess(h, {
      tenantId: tenant.tenantId,
      organizationId: tenant.rootOrganizationId,
      code: 'QT-MIGR',
      steps: steps.map((step) => ({ ...step, signType: 'app_submit' as const })),
    });
    const dossiers = [
      await createDossier(h, workflow, { title: 'Hồ sơ một' }),
      await createDossier(h, workflow, { title: 'Hồ sơ hai' }),
    ];
    await approveOpenTask(h, dossiers[0]!.id, tenant.adminUserId, 'Đồng ý');
    await h.close();
    const orgApi = (port: number): Api => ({ port, key: tenant.orgKey });
    const dossierViews = new Map<string, { view: unknown; files: Buffer[] }>();
    const secondServer = await suite.start({ ...env, PORT: String(server.port) });
    for (const dossier of dossiers) {
      const view = await call(
        orgApi(server.port),
        'GET',
        `/integration/documents/${dossier.documentId}`,
      );
      const files = await filesOf(view.data);
      expect(files.length).toBeGreaterThan(0);
      dossierViews.set(dossier.documentId!, { view: withoutUrlSignatures(view.data), files });
    }
    expect(await secondServer.stop()).toBe(0);

    // The migration.
    const url = newDatabase();
    const migrated = await runCli(dataDir, ['db', 'migrate-to-postgres', '--to', url, '--json'], {
      env,
    });
    expect({ code: migrated.code, stderr: migrated.stderr }).toEqual({ code: 0, stderr: '' });
    const report = migrated.json<Report>();
    const rowsOf = (name: string) => report.tables.find((table) => table.name === name)?.rows;
    expect(rowsOf('contracts')).toBe(4);
    expect(rowsOf('dossiers')).toBe(2);
    expect(rowsOf('turns')).toBeGreaterThanOrEqual(2);
    expect(rowsOf('contract_audit_events')).toBeGreaterThan(10);
    expect(report.skipped.map((table) => table.name)).toEqual(['rate_windows']);
    // 3 contracts + 2 dossiers; every signature and archive version of the 3 signed contracts.
    expect(report.auditTrails).toMatchObject({ checked: 6, brokenInSource: [] });
    expect(report.signedPdfs.checked).toBeGreaterThanOrEqual(6);
    expect(report.signedPdfs).toMatchObject({
      valid: report.signedPdfs.checked,
      invalidInSource: [],
    });
    const masterKeyFile = path.join(dataDir, 'master.key');
    expect(report.masterSecret).toEqual({ from: 'master.key', file: masterKeyFile });
    // The human output names the file to read, never the secret.
    const masterKey = fs.readFileSync(masterKeyFile, 'utf8').trim();
    const human = await runCli(dataDir, ['db', 'migrate-to-postgres', '--to', newDatabase()], {
      env,
    });
    expect(human.code).toBe(0);
    expect(human.stdout).toContain(`SECRET_KEY="base64:$(cat ${masterKeyFile})"`);
    expect(human.stdout).toContain('signed PDFs verify on PostgreSQL');
    expect(`${human.stdout}${migrated.stdout}`).not.toContain(masterKey);

    // Identity sequences follow the copied ids.
    const maxContract = Number(psql(url, 'SELECT max(id) FROM contracts'));
    expect(maxContract).toBe(4);

    // The built server on PostgreSQL, with the same files and the master secret it was told.
    const pgEnv = { ...env, DATABASE_URL: url, SECRET_KEY: `base64:${masterKey}` };
    const onPostgres = await suite.start({ ...pgEnv, PORT: String(server.port) });
    // Its signing keys came along, sealed under the same secret: none is made.
    expect(onPostgres.stdout()).not.toContain('preparing signing keys');
    const pgApi: Api = { port: server.port, key: api.key };
    expect((await call(pgApi, 'GET', '/contracts?limit=100')).data).toEqual(before.list);
    for (const id of contracts) {
      expect(await download(pgApi, `/contracts/${id}/download?type=original`)).toEqual(
        before.originals.get(id),
      );
    }
    for (const dossier of dossiers) {
      const view = await call(
        orgApi(server.port),
        'GET',
        `/integration/documents/${dossier.documentId}`,
      );
      const seen = dossierViews.get(dossier.documentId!)!;
      expect(withoutUrlSignatures(view.data)).toEqual(seen.view);
      expect(await filesOf(view.data)).toEqual(seen.files);
    }

    // Every signed PDF the PostgreSQL service serves: byte-identical, pdfsig valid and trusted
    // with the development CA (as PostgreSQL holds it) the only anchor, the service's verifier too.
    const target = openPostgresDatabase(url);
    try {
      const caPem = await writeDevelopmentCaPem(target.db, path.join(work, 'ca.pem'));
      const nss = nssDatabase(path.join(work, 'nss'), [caPem]);
      for (const [id, bytes] of before.signed) {
        const served = await download(pgApi, `/contracts/${id}/download?type=signed`);
        expect(served).toEqual(bytes);
        const file = path.join(work, `${id}.pdf`);
        fs.writeFileSync(file, served);
        const signatures = pdfsigSignatures(await pdfsigTrusting(file, nss));
        expect({ id, first: signatures[0] }).toMatchObject({
          first: { valid: true, trusted: true },
        });
        const verified = await call(pgApi, 'GET', `/signing/verify/${id}`);
        expect({ id, isValid: verified.data.isValid }).toEqual({ id, isValid: true });
      }
    } finally {
      await target.close();
    }

    // Every audit trail holds, by the real CLI on PostgreSQL.
    for (const id of contracts) {
      const verified = await runCli(dataDir, ['audit', 'verify', '--contract', id, '--json'], {
        env: pgEnv,
      });
      expect({ id, code: verified.code, stderr: verified.stderr }).toEqual({
        id,
        code: 0,
        stderr: '',
      });
    }
    for (const dossier of dossiers) {
      const verified = await runCli(
        dataDir,
        ['audit', 'verify', '--dossier', dossier.uuid, '--json'],
        { env: pgEnv },
      );
      expect({ dossier: dossier.uuid, code: verified.code }).toEqual({
        dossier: dossier.uuid,
        code: 0,
      });
    }

    // Signing goes on, with the next ids.
    const next = await signOneContract(pgApi, dataDir, []);
    expect(psql(url, `SELECT id FROM contracts WHERE uuid = '${next}'`)).toBe(
      String(maxContract + 1),
    );

    // A second run finds data and refuses, changing nothing.
    const eventsBefore = psql(url, 'SELECT count(*) FROM contract_audit_events');
    const again = await runCli(dataDir, ['db', 'migrate-to-postgres', '--to', url, '--json'], {
      env,
    });
    expect(again.code).toBe(1);
    expect(again.json<{ error: { code: string } }>().error.code).toBe('MIGRATE_TARGET_NOT_EMPTY');
    expect(psql(url, 'SELECT count(*) FROM contract_audit_events')).toBe(eventsBefore);
  });

  it('refuses a target that holds any row, and copies nothing into it', async () => {
    const dataDir = suite.newDataDir();
    const env = { DATA_DIR: dataDir, APP_ENV: 'development' };
    expect((await runCli(dataDir, 'tenant create --code SRC --name Source', { env })).code).toBe(0);
    const url = newDatabase();
    psql(url, 'CREATE TABLE notes (id int PRIMARY KEY); INSERT INTO notes VALUES (1)');
    const refused = await runCli(dataDir, ['db', 'migrate-to-postgres', '--to', url, '--json'], {
      env,
    });
    expect(refused.code).toBe(1);
    const error = refused.json<{ error: { code: string; message: string } }>().error;
    expect(error).toMatchObject({ code: 'MIGRATE_TARGET_NOT_EMPTY' });
    expect(error.message).toContain('notes');
    expect(psql(url, 'SELECT count(*) FROM tenants')).toBe('0');

    // Not a PostgreSQL URL: a usage error before anything is opened.
    const bad = await runCli(dataDir, ['db', 'migrate-to-postgres', '--to', 'mysql://x/y'], {
      env,
    });
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('--to must be a PostgreSQL URL');
  });
});
