import 'reflect-metadata';
import fs from 'node:fs';
import path from 'node:path';
import * as x509 from '@peculiar/x509';
import {
  attempt,
  provisionSoftHsm,
  run,
  softHsmModule,
  tempDir,
} from '../../../../test/support/tools';
import { runCli } from '../../admin/runCli';

jest.setTimeout(60000);

const temp = tempDir('esign-keys-cli-');
afterAll(() => temp.remove());
const file = (name: string) => path.join(temp.dir, name);

/** A throwaway CA made with openssl, standing for the operator's real one. */
function operatorCa(name: string): { cert: string; key: string } {
  const cert = file(`${name}.pem`);
  const key = file(`${name}.key`);
  run('openssl', [
    'req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-keyout', key, '-out', cert,
    '-subj', `/CN=${name}`, '-days', '30',
    '-addext', 'basicConstraints=critical,CA:TRUE', '-addext', 'keyUsage=critical,keyCertSign',
  ]); // biome-ignore format: one openssl command per call
  return { cert, key };
}

/** The operator's CA answers a CSR: leaf then CA certificate in one PEM file. */
function signRequest(ca: { cert: string; key: string }, csrPem: string, name: string): string {
  fs.writeFileSync(file(`${name}.csr`), csrPem);
  fs.writeFileSync(file('leaf.ext'), 'keyUsage=critical,digitalSignature,nonRepudiation\n');
  run('openssl', [
    'x509',
    '-req',
    '-in',
    file(`${name}.csr`),
    '-CA',
    ca.cert,
    '-CAkey',
    ca.key,
    '-set_serial',
    String(Date.now()),
    '-days',
    '30',
    '-extfile',
    file('leaf.ext'),
    '-out',
    file(`${name}.leaf.pem`),
  ]);
  const bundle = file(`${name}.bundle.pem`);
  fs.writeFileSync(
    bundle,
    fs.readFileSync(file(`${name}.leaf.pem`), 'utf8') + fs.readFileSync(ca.cert, 'utf8'),
  );
  return bundle;
}

function verifiesRequest(csrPem: string, name: string): string {
  fs.writeFileSync(file(`${name}.req.pem`), csrPem);
  return attempt('openssl', [
    'req',
    '-in',
    file(`${name}.req.pem`),
    '-verify',
    '-noout',
    '-text',
    '-nameopt',
    'utf8',
  ]).output;
}

function verifiesCertificate(rootPem: string, certificatePem: string, name: string) {
  fs.writeFileSync(file(`${name}.root.pem`), rootPem);
  fs.writeFileSync(file(`${name}.cert.pem`), certificatePem);
  return attempt('openssl', [
    'verify',
    '-CAfile',
    file(`${name}.root.pem`),
    file(`${name}.cert.pem`),
  ]);
}

/** `admin signer-key import-certificate --id ID --file FILE [--json]`. */
function importCertificateFile(
  dataDir: string,
  id: string,
  certificateFile: string,
  env: Record<string, string>,
  json = false,
) {
  const args = ['signer-key', 'import-certificate', '--id', id, '--file', certificateFile];
  return runCli(dataDir, json ? [...args, '--json'] : args, { env });
}

async function setUpTenant(dataDir: string, env: Record<string, string> = {}) {
  expect(
    (await runCli(dataDir, 'tenant create --code ACME --name "Công ty ACME"', { env })).code,
  ).toBe(0);
  const user = await runCli(
    dataDir,
    'user create --tenant ACME --username anh --email anh@acme.vn --name "Nguyễn Văn Ánh"',
    { env },
  );
  expect(user.code).toBe(0);
}

describe('admin ca / seal / signer-key in development', () => {
  const dataDir = file('development');
  beforeAll(() => setUpTenant(dataDir));

  it('ca export prints the development CA certificate (PEM); seal show a seal certificate it issued', async () => {
    const ca = await runCli(dataDir, 'ca export');
    expect(ca.code).toBe(0);
    expect(ca.stdout).toMatch(/^-----BEGIN CERTIFICATE-----\n[\s\S]+-----END CERTIFICATE-----\n$/);
    expect(new x509.X509Certificate(ca.stdout).subject).toBe('CN=ESign Development CA, O=ESign');
    const seal = await runCli(dataDir, 'seal show');
    expect(seal.code).toBe(0);
    expect(verifiesCertificate(ca.stdout, seal.stdout, 'seal').status).toBe(0);
    expect(new x509.X509Certificate(seal.stdout).subject).toBe('CN=ESign, O=ESign');
    // The same key and certificate on every call.
    expect((await runCli(dataDir, 'seal show')).stdout).toBe(seal.stdout);
    const json = (await runCli(dataDir, 'seal show --json')).json<{
      certificate: string;
      chain: string[];
    }>();
    expect(json.certificate).toBe(seal.stdout.trim());
    expect(json.chain).toEqual([ca.stdout.trim()]);
  });

  it('signer-key create makes a key and a development certificate named after the user', async () => {
    const created = await runCli(
      dataDir,
      'signer-key create --tenant ACME --email Anh@ACME.vn --json',
    );
    expect(created.code).toBe(0);
    const body = created.json<{ id: number; certificate: string; certificateRequest: null }>();
    expect(body.certificateRequest).toBeNull();
    const certificate = new x509.X509Certificate(body.certificate);
    expect(certificate.subject).toBe('CN=Nguyễn Văn Ánh, O=Công ty ACME');
    const ca = (await runCli(dataDir, 'ca export')).stdout;
    expect(verifiesCertificate(ca, body.certificate, 'signer').status).toBe(0);

    const again = await runCli(dataDir, 'signer-key create --tenant ACME --email anh@acme.vn');
    expect(again.code).toBe(1);
    expect(again.stderr).toContain(
      'SIGNER_KEY_EXISTS: anh@acme.vn already has a signer key in tenant ACME',
    );
  });

  it('signer-key create refuses a bad e-mail (exit 2) and an unknown tenant (exit 1)', async () => {
    const bad = await runCli(dataDir, 'signer-key create --tenant ACME --email not-an-email');
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('"not-an-email" is not an e-mail address');
    const unknown = await runCli(dataDir, 'signer-key create --tenant NOPE --email a@b.vn');
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toContain('TENANT_CODE_NOT_FOUND');
  });

  it('signer-key list shows signer keys, of every tenant or of one', async () => {
    const list = await runCli(dataDir, 'signer-key list');
    expect(list.code).toBe(0);
    expect(list.stdout.split('\n')[0]).toMatch(
      /^ID\s+TENANT\s+EMAIL\s+NAME\s+ALGORITHM\s+STORE\s+CERTIFICATE\s+VALID TO$/,
    );
    expect(list.stdout).toMatch(
      /ACME\s+Anh@ACME\.vn\s+Nguyễn Văn Ánh\s+rsa-2048\s+software\s+development_ca/,
    );
    const json = (await runCli(dataDir, 'signer-key list --tenant ACME --json')).json<{
      signerKeys: unknown[];
    }>();
    expect(json.signerKeys).toEqual([
      expect.objectContaining({
        tenantCode: 'ACME',
        email: 'Anh@ACME.vn',
        certificateSource: 'development_ca',
      }),
    ]);
  });
});

describe('admin seal / signer-key in production (CSR flow)', () => {
  const dataDir = file('production');
  const env = { APP_ENV: 'production', TSA_URL: 'https://tsa.example' };
  const operator = operatorCa('Operator CA');
  beforeAll(() => setUpTenant(dataDir, env));

  it('ca export is refused: production never uses the development CA', async () => {
    const result = await runCli(dataDir, 'ca export', { env });
    expect(result.code).toBe(1);
    expect(result.stderr).toContain('DEVELOPMENT_CA_DISABLED');
    expect(fs.existsSync(path.join(dataDir, 'dev-ca'))).toBe(false);
  });

  it('seal show prints the seal key CSR until its certificate is imported, then the certificate', async () => {
    const before = await runCli(dataDir, 'seal show --json', { env });
    expect(before.code).toBe(0);
    const pending = before.json<{ id: number; certificate: null; certificateRequest: string }>();
    expect(pending.certificate).toBeNull();
    expect(before.stderr).toContain(
      `admin signer-key import-certificate --id ${pending.id} --file CERT.pem`,
    );
    const text = verifiesRequest(pending.certificateRequest, 'seal');
    expect(text).toMatch(/verify OK/i);
    expect(text).toContain('Subject: CN=ESign, O=ESign');

    const bundle = signRequest(operator, pending.certificateRequest, 'seal');
    const imported = await importCertificateFile(dataDir, String(pending.id), bundle, env);
    expect(imported.code).toBe(0);
    expect(imported.stdout).toContain(
      'Imported the certificate of the seal key with 1 issuer certificate.',
    );
    const after = await runCli(dataDir, 'seal show', { env });
    expect(
      verifiesCertificate(fs.readFileSync(operator.cert, 'utf8'), after.stdout, 'seal-imported')
        .status,
    ).toBe(0);
  });

  it('signer-key create prints a CSR that openssl verifies; its signed certificate imports', async () => {
    const created = await runCli(
      dataDir,
      'signer-key create --tenant ACME --email anh@acme.vn --json',
      { env },
    );
    expect(created.code).toBe(0);
    const body = created.json<{ id: number; certificate: null; certificateRequest: string }>();
    expect(body.certificate).toBeNull();
    const text = verifiesRequest(body.certificateRequest, 'signer');
    expect(text).toMatch(/verify OK/i);
    expect(text).toContain('CN=Nguyễn Văn Ánh, O=Công ty ACME');
    expect(text).toContain('email:anh@acme.vn');
    const listed = await runCli(dataDir, 'signer-key list', { env });
    expect(listed.stdout).toContain('none (CSR pending)');

    const bundle = signRequest(operator, body.certificateRequest, 'signer');
    const imported = await importCertificateFile(dataDir, String(body.id), bundle, env, true);
    expect(imported.code).toBe(0);
    expect(imported.json()).toMatchObject({ id: body.id, certificateSource: 'imported' });
  });

  it('import-certificate refuses a certificate for another key, a file without certificate, an unknown id', async () => {
    const other = await runCli(
      dataDir,
      'signer-key create --tenant ACME --email other@acme.vn --json',
      { env },
    );
    const otherBody = other.json<{ id: number; certificateRequest: string }>();
    const seal = (await runCli(dataDir, 'seal show --json', { env })).json<{ id: number }>();
    // The other signer's certificate, offered for the seal key.
    const foreign = signRequest(operator, otherBody.certificateRequest, 'other');
    const mismatch = await importCertificateFile(dataDir, String(seal.id), foreign, env);
    expect(mismatch.code).toBe(1);
    expect(mismatch.stderr).toContain(
      `CERTIFICATE_KEY_MISMATCH: No certificate in the file is for signing key ${seal.id}`,
    );

    fs.writeFileSync(file('empty.pem'), 'not a certificate\n');
    const empty = await importCertificateFile(
      dataDir,
      String(otherBody.id),
      file('empty.pem'),
      env,
    );
    expect(empty.code).toBe(1);
    expect(empty.stderr).toContain('CERTIFICATE_INVALID');

    const unknown = await importCertificateFile(dataDir, '999', foreign, env);
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toContain('SIGNING_KEY_NOT_FOUND');

    const missing = await importCertificateFile(dataDir, '1', file('none.pem'), env);
    expect(missing.code).toBe(2);
    // The seal kept the certificate it had.
    expect((await runCli(dataDir, 'seal show --json', { env })).json()).toMatchObject({
      certificateSource: 'imported',
    });
  });
});

describe('admin signer-key with KEYSTORE=pkcs11 (SoftHSM2)', () => {
  it('production: the key is made on the token and the CSR is signed by it', async () => {
    const token = { label: 'cli-token', pin: '1357', soPin: '8642' };
    const { config } = provisionSoftHsm(file('softhsm'), [token]);
    const env = {
      APP_ENV: 'production',
      TSA_URL: 'https://tsa.example',
      SOFTHSM2_CONF: config,
      KEYSTORE: 'pkcs11',
      PKCS11_MODULE: softHsmModule,
      PKCS11_TOKEN_LABEL: token.label,
      PKCS11_PIN: token.pin,
    };
    const dataDir = file('pkcs11');
    await setUpTenant(dataDir, env);
    const created = await runCli(
      dataDir,
      'signer-key create --tenant ACME --email anh@acme.vn --json',
      { env },
    );
    expect(created.code).toBe(0);
    const body = created.json<{ id: number; certificateRequest: string }>();
    expect(verifiesRequest(body.certificateRequest, 'pkcs11')).toMatch(/verify OK/i);
    const list = await runCli(dataDir, 'signer-key list --json', { env });
    expect(list.json()).toMatchObject({ signerKeys: [{ id: body.id, store: 'pkcs11' }] });

    const wrongPin = await runCli(dataDir, 'signer-key create --tenant ACME --email b@acme.vn', {
      env: { ...env, PKCS11_PIN: '0000' },
    });
    expect(wrongPin.code).toBe(1);
    expect(wrongPin.stderr).toContain(
      `KEYSTORE_UNAVAILABLE: PKCS11_PIN is wrong for token "${token.label}"`,
    );
    expect(wrongPin.stderr).not.toContain('0000');
  });
});
