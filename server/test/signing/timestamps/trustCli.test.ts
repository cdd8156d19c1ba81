import fs from 'node:fs';
import path from 'node:path';
import { createOpensslPki, type OpensslPki } from '../../../../test/support/opensslTsa';
import { developmentTsa } from '../../../src/dev/developmentTsa';
import { loadConfig } from '../../../src/platform/config';
import { trustAnchorsFor } from '../../../src/trust/service';
import { runCli } from '../../admin/runCli';
import { createHarness, type Harness } from '../../support/harness';

jest.setTimeout(120_000);

let h: Harness;
let pki: OpensslPki;
const cli = (command: string) => runCli(h.dataDir, command);

beforeAll(() => {
  h = createHarness();
  pki = createOpensslPki();
});
afterAll(async () => {
  await h.close();
  pki.remove();
});

interface AnchorJson {
  id: number;
  tenantCode: string | null;
  name: string;
  subject: string;
  fingerprint: string;
}

describe('admin trust add / list / remove', () => {
  it('adds a global anchor and a tenant anchor; the same certificate twice changes nothing', async () => {
    expect((await cli('tenant create --code TRUSTA --name "Trust A"')).code).toBe(0);
    expect((await cli('tenant create --code TRUSTB --name "Trust B"')).code).toBe(0);
    const global = await cli(`trust add --global --file ${pki.rootPem} --name "Test root" --json`);
    expect(global.code).toBe(0);
    expect(global.json()).toMatchObject({
      tenantCode: null,
      name: 'Test root',
      subject: 'CN=Test TSA Root',
      created: true,
    });
    const again = await cli(`trust add --global --file ${pki.rootPem}`);
    expect(again.code).toBe(0);
    expect(again.stdout).toContain('nothing changed');

    const derFile = path.join(pki.dir, 'other-root.der');
    fs.writeFileSync(derFile, pki.otherRootDer);
    const tenant = await cli(`trust add --tenant TRUSTA --file ${derFile} --json`);
    expect(tenant.code).toBe(0);
    expect(tenant.json()).toMatchObject({
      tenantCode: 'TRUSTA',
      name: 'CN=Untrusted Root',
      created: true,
    });
    // The same certificate in another scope is another anchor.
    expect((await cli(`trust add --tenant TRUSTB --file ${derFile} --json`)).json()).toMatchObject({
      created: true,
    });

    const all = (await cli('trust list --json')).json<{ anchors: AnchorJson[] }>().anchors;
    expect(all.map((a) => a.tenantCode)).toEqual([null, 'TRUSTA', 'TRUSTB']);
    const forA = (await cli('trust list --tenant TRUSTA --json')).json<{ anchors: AnchorJson[] }>();
    expect(forA.anchors.map((a) => a.tenantCode)).toEqual([null, 'TRUSTA']);
    const table = await cli('trust list');
    expect(table.stdout).toMatch(/^ID\s+TENANT\s+NAME\s+SUBJECT\s+SHA-256\s+ADDED/);
    expect(table.stdout).toContain('(global)');

    // trustAnchorsFor: global + the tenant's own, as DER.
    const tenantA = await h.deps.db
      .selectFrom('tenants')
      .select('id')
      .where('code', '=', 'TRUSTA')
      .executeTakeFirstOrThrow();
    const anchors = await trustAnchorsFor(h.deps.db, tenantA.id);
    expect(
      anchors.map(
        (a) => a.certificate.equals(pki.rootDer) || a.certificate.equals(pki.otherRootDer),
      ),
    ).toEqual([true, true]);
    expect(await trustAnchorsFor(h.deps.db, null)).toHaveLength(1);

    const removed = await cli(`trust remove --id ${all[2]!.id} --json`);
    expect(removed.json()).toMatchObject({ id: all[2]!.id, removed: true });
    const unknown = await cli(`trust remove --id ${all[2]!.id} --json`);
    expect(unknown.code).toBe(1);
    expect(unknown.json()).toMatchObject({ error: { code: 'TRUST_ANCHOR_NOT_FOUND' } });
  });

  it('refuses bad arguments with exit 2 before touching the database', async () => {
    const leaf = pki.tsa.certificate;
    const bundle = path.join(pki.dir, 'two.pem');
    fs.writeFileSync(bundle, fs.readFileSync(pki.rootPem, 'utf8') + fs.readFileSync(leaf, 'utf8'));
    const junk = path.join(pki.dir, 'junk.pem');
    fs.writeFileSync(junk, 'hello');
    const cases: [string, RegExp][] = [
      [`trust add --file ${pki.rootPem}`, /--tenant is required/],
      [
        `trust add --global --tenant TRUSTA --file ${pki.rootPem}`,
        /--tenant cannot be used with --global/,
      ],
      ['trust add --global --file /no/such.pem', /no such file/],
      [`trust add --global --file ${leaf}`, /not a CA/],
      [`trust add --global --file ${bundle}`, /exactly one certificate, found 2/],
      [`trust add --global --file ${junk}`, /not a PEM or DER certificate/],
      ['trust remove --id x', /--id must be a positive integer/],
    ];
    for (const [command, message] of cases) {
      const result = await cli(command);
      expect({ command, code: result.code }).toEqual({ command, code: 2 });
      expect(result.stderr).toMatch(message);
    }
  });

  it('counts the development TSA CA as an anchor in development, not in the table', async () => {
    const anchors = (await h.deps.trust(null)).timestampAnchors;
    const { caCertificate } = await developmentTsa(h.deps);
    expect(anchors.some((der) => der.equals(caCertificate))).toBe(true);
    expect(
      (await trustAnchorsFor(h.deps.db, null)).some((a) => a.certificate.equals(caCertificate)),
    ).toBe(false);
  });
});

describe('TSA_* configuration', () => {
  const base = { DATA_DIR: '/tmp/unused' };
  it('refuses to start in production without TSA_URL, naming the variable', () => {
    expect(() => loadConfig({ ...base, APP_ENV: 'production' })).toThrow(
      'TSA_URL is required when APP_ENV=production',
    );
  });
  it('reads TSA_URL (http or https) and the Basic credentials; unset in development', () => {
    expect(loadConfig(base).tsa).toEqual({
      url: undefined,
      username: undefined,
      password: undefined,
    });
    expect(
      loadConfig({
        ...base,
        APP_ENV: 'production',
        TSA_URL: 'http://timestamp.example/tsa',
        TSA_USERNAME: 'u',
        TSA_PASSWORD: 'p',
      }).tsa,
    ).toEqual({ url: 'http://timestamp.example/tsa', username: 'u', password: 'p' });
  });
  it.each([
    [{ TSA_URL: 'ftp://tsa.example' }, 'TSA_URL must be an absolute http or https URL'],
    [{ TSA_URL: 'https://u:p@tsa.example' }, 'TSA_URL may not carry credentials'],
    [{ TSA_PASSWORD: 'p' }, 'TSA_USERNAME is required when TSA_PASSWORD is set'],
    [{ TSA_USERNAME: 'u' }, 'TSA_URL is required when TSA_USERNAME is set'],
  ])('refuses %j', (env, message) => {
    expect(() => loadConfig({ ...base, ...env })).toThrow(message);
  });
});
