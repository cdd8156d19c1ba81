/**
 * The bundled CA store (agent/resources/intermediates): every file a CA certificate listed in
 * MANIFEST.md with its fingerprint, each issued by a bundled root; and the chain builder uses a
 * bundled folder ahead of the user's. Validity is checked at the vetting date, never "now":
 * an expiring certificate is a release chore, not a failing build.
 */
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { tempDir } from '../../test/support/tools';
import { bundledIntermediatesDirectory, ChainBuilder, certificatesIn } from '../src/core';
import { TestPki } from './support/testTokens';

const folder = bundledIntermediatesDirectory();
const VETTED_ON = new Date('2026-11-26T00:00:00Z');

/** `| \`file\` | subject | issuer | notAfter | \`sha256\` |` rows of MANIFEST.md. */
function manifest(): Map<string, { notAfter: string; sha256: string }> {
  const rows = new Map<string, { notAfter: string; sha256: string }>();
  const text = fs.readFileSync(path.join(folder, 'MANIFEST.md'), 'utf8');
  for (const match of text.matchAll(
    /^\| `([^`]+)` +\|.*\| (\d{4}-\d{2}-\d{2}) +\| `([0-9a-f]{64})` +\|$/gm,
  )) {
    rows.set(match[1]!, { notAfter: match[2]!, sha256: match[3]! });
  }
  return rows;
}

function bundled(): Map<string, crypto.X509Certificate> {
  const certificates = new Map<string, crypto.X509Certificate>();
  for (const name of fs.readdirSync(folder).filter((entry) => entry.endsWith('.pem'))) {
    const found = certificatesIn(fs.readFileSync(path.join(folder, name)));
    expect(found).toHaveLength(1);
    certificates.set(name, new crypto.X509Certificate(found[0]!));
  }
  return certificates;
}

describe('bundled intermediate CA store', () => {
  it('holds only CA certificates, each listed in MANIFEST.md with its SHA-256 fingerprint and notAfter', () => {
    const rows = manifest();
    const certificates = bundled();
    expect([...certificates.keys()].sort()).toEqual([...rows.keys()].sort());
    for (const [name, certificate] of certificates) {
      const row = rows.get(name)!;
      expect({ name, ca: certificate.ca }).toEqual({ name, ca: true });
      expect({
        name,
        sha256: certificate.fingerprint256.replaceAll(':', '').toLowerCase(),
      }).toEqual({
        name,
        sha256: row.sha256,
      });
      expect({ name, notAfter: new Date(certificate.validTo).toISOString().slice(0, 10) }).toEqual({
        name,
        notAfter: row.notAfter,
      });
      expect({ name, validWhenVetted: new Date(certificate.validTo) > VETTED_ON }).toEqual({
        name,
        validWhenVetted: true,
      });
    }
  });

  it('has every certificate signed by a bundled self-signed national root', () => {
    const certificates = [...bundled()];
    const roots = certificates.filter(
      ([, certificate]) => certificate.subject === certificate.issuer,
    );
    expect(roots.length).toBeGreaterThan(0);
    for (const [name, certificate] of certificates) {
      const issuer = roots.find(
        ([, root]) => certificate.checkIssued(root) && certificate.verify(root.publicKey),
      );
      expect({ name, issuedBy: issuer?.[0] }).toEqual({ name, issuedBy: expect.any(String) });
    }
  });

  it('lets the chain builder take an intermediate from a bundled folder and the root from the user folder, added while it runs', async () => {
    const work = tempDir('esign-bundled-ca-');
    try {
      const pki = new TestPki(work.dir);
      const signer = pki.issue('signer', 'ec', '/C=VN/CN=Nguyen Van A', [
        'basicConstraints=critical,CA:FALSE',
        'keyUsage=critical,digitalSignature,nonRepudiation',
      ]);
      const bundledFolder = path.join(work.dir, 'bundled');
      const userFolder = path.join(work.dir, 'user');
      fs.mkdirSync(bundledFolder);
      fs.mkdirSync(userFolder);
      fs.writeFileSync(path.join(bundledFolder, 'test-intermediate.der'), pki.intermediateDer);
      const builder = new ChainBuilder({
        folders: [bundledFolder, userFolder],
        fetchIssuers: false,
      });
      const subjects = async () =>
        (await builder.build(signer.der, [])).map((der) =>
          new crypto.X509Certificate(der).subject.split('\n').at(-1),
        );
      expect(await subjects()).toEqual(['CN=Nguyen Van A', 'CN=Test Intermediate']);
      // The folders are read once and kept: a certificate the user adds is found at the next sign.
      fs.copyFileSync(path.join(work.dir, 'root.pem'), path.join(userFolder, 'root.pem'));
      expect(await subjects()).toEqual(['CN=Nguyen Van A', 'CN=Test Intermediate', 'CN=Test Root']);
    } finally {
      work.remove();
    }
  });
});
