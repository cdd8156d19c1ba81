import { execFileSync, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

/**
 * A throw-away PKI made with openssl in a temp dir: a root CA, signer certificates it issues
 * (RSA-2048, RSA-PSS, EC P-256, EC P-384, ...) and a TSA certificate with the critical
 * timeStamping EKU, plus `openssl ts` to answer timestamp requests.
 */
export class TestPki {
  readonly dir = fs.mkdtempSync(path.join(os.tmpdir(), 'cms-pki-'));
  private serial = 0x1000;

  constructor() {
    this.openssl(
      'req',
      '-x509',
      '-newkey',
      'rsa:2048',
      '-nodes',
      '-keyout',
      'ca.key',
      '-out',
      'ca.pem',
      '-subj',
      '/C=VN/O=Test PKI/CN=Test Root CA',
      '-days',
      '2',
      '-addext',
      'basicConstraints=critical,CA:TRUE',
      '-addext',
      'keyUsage=critical,keyCertSign,cRLSign',
    );
    fs.writeFileSync(
      this.file('signer.ext'),
      'keyUsage=critical,digitalSignature,nonRepudiation\n',
    );
    fs.writeFileSync(
      this.file('tsa.ext'),
      'keyUsage=critical,digitalSignature\nextendedKeyUsage=critical,timeStamping\n',
    );
  }

  file(name: string): string {
    return path.join(this.dir, name);
  }

  read(name: string): Buffer {
    return fs.readFileSync(this.file(name));
  }

  openssl(...args: string[]): Buffer {
    return execFileSync('openssl', args, { cwd: this.dir, stdio: ['ignore', 'pipe', 'pipe'] });
  }

  /** openssl's stdout and stderr together, whether it succeeds or not (verdicts go to stderr). */
  opensslVerdict(...args: string[]): string {
    const run = spawnSync('openssl', args, { cwd: this.dir });
    return `${run.stdout.toString()}${run.stderr.toString()}`;
  }

  /** A key (genpkey options) and a certificate for it issued by the CA; returns the DER cert. */
  issue(name: string, keyOptions: string[], extensions = 'signer.ext'): Buffer {
    this.openssl('genpkey', ...keyOptions, '-out', `${name}.key`);
    this.openssl(
      'req',
      '-new',
      '-key',
      `${name}.key`,
      '-subj',
      `/C=VN/O=Test PKI/CN=${name}`,
      '-out',
      `${name}.csr`,
    );
    this.serial += 1;
    this.openssl(
      'x509',
      '-req',
      '-in',
      `${name}.csr`,
      '-CA',
      'ca.pem',
      '-CAkey',
      'ca.key',
      '-set_serial',
      String(this.serial),
      '-days',
      '1',
      '-sha256',
      '-extfile',
      extensions,
      '-out',
      `${name}.pem`,
    );
    this.openssl('x509', '-in', `${name}.pem`, '-outform', 'DER', '-out', `${name}.der`);
    return this.read(`${name}.der`);
  }

  caCertificate(): Buffer {
    this.openssl('x509', '-in', 'ca.pem', '-outform', 'DER', '-out', 'ca.der');
    return this.read('ca.der');
  }

  /** A TimeStampToken from `openssl ts -reply` over the SHA-256 digest given in hex. */
  timestamp(digestHex: string): Buffer {
    if (!fs.existsSync(this.file('tsa.der'))) {
      this.issue('tsa', ['-algorithm', 'RSA', '-pkeyopt', 'rsa_keygen_bits:2048'], 'tsa.ext');
      fs.writeFileSync(this.file('tsaserial'), '01\n');
      fs.writeFileSync(
        this.file('ts.cnf'),
        [
          '[ tsa ]',
          'default_tsa = tsa_config',
          '[ tsa_config ]',
          'serial = ./tsaserial',
          'signer_digest = sha256',
          'default_policy = 1.3.6.1.4.1.99999.1',
          'digests = sha256',
          'ess_cert_id_alg = sha256',
          '',
        ].join('\n'),
      );
    }
    this.openssl('ts', '-query', '-digest', digestHex, '-sha256', '-cert', '-out', 'request.tsq');
    this.openssl(
      'ts',
      '-reply',
      '-config',
      'ts.cnf',
      '-queryfile',
      'request.tsq',
      '-inkey',
      'tsa.key',
      '-signer',
      'tsa.pem',
      '-token_out',
      '-out',
      'token.der',
    );
    return this.read('token.der');
  }

  remove(): void {
    fs.rmSync(this.dir, { recursive: true, force: true });
  }
}

/**
 * `openssl cms -verify` of a detached CMS over a content file in `dir` (stderr holds the
 * verdict): with `caFile` as trust anchor and -cades (openssl then also checks that
 * signing-certificate-v2 names the signer), else with -noverify (signature only). The content
 * openssl read back is left in `verified.bin`.
 */
export function cmsVerifyVerdict(
  dir: string,
  cms: Buffer,
  content: string,
  caFile?: string,
): string {
  fs.writeFileSync(path.join(dir, 'signature.p7s'), cms);
  const trust = caFile ? ['-CAfile', caFile, '-purpose', 'any', '-cades'] : ['-noverify'];
  const detached = ['-binary', '-inform', 'DER', '-in', 'signature.p7s', '-content', content];
  const run = spawnSync(
    'openssl',
    ['cms', '-verify', ...detached, ...trust, '-out', 'verified.bin'],
    { cwd: dir },
  );
  return `${run.stdout.toString()}${run.stderr.toString()}`;
}
