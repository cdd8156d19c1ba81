import { spawnSync } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';

/** Runs openssl in `dir` (file names in `args` relative to it); its stderr in the error. */
export function openssl(dir: string, args: string[]): Buffer {
  const result = spawnSync('openssl', args, { cwd: dir });
  if (result.status !== 0) {
    throw new Error(`openssl ${args.join(' ')}: ${result.stderr?.toString() ?? result.error}`);
  }
  return result.stdout;
}

/** The DER of a PEM certificate file (the first certificate in it). */
export function derOfPemFile(file: string): Buffer {
  return new crypto.X509Certificate(fs.readFileSync(file)).raw;
}

export interface CertificateRequest {
  /** Files `<name>.key` (PKCS#8 PEM) and `<name>.pem` in the folder. */
  name: string;
  key: 'rsa' | 'ec';
  /** openssl -subj form: `/C=VN/O=…/CN=…`. */
  subject: string;
  /** The issuer's `<issuer>.pem` and `<issuer>.key` in the same folder; self-signed when absent. */
  issuer?: string;
  /** Extension lines (`keyUsage=critical,digitalSignature`), or a section of an openssl config. */
  extensions: string[] | { config: string; section: string };
  days: number;
  /** Hex serial; random when absent. */
  serialHex?: string;
}

/**
 * A key and a certificate made by openssl at run time (nothing committed): self-signed when
 * there is no issuer, else signed by the issuer's key in the same folder.
 */
export function issueCertificate(
  dir: string,
  request: CertificateRequest,
): { keyFile: string; certificateFile: string; der: Buffer } {
  const { name } = request;
  let config: string;
  let section: string;
  if (Array.isArray(request.extensions)) {
    config = `${name}.cnf`;
    section = 'extensions';
    fs.writeFileSync(
      path.join(dir, config),
      `[ req ]\ndistinguished_name = dn\n[ dn ]\n[ ${section} ]\n${request.extensions.join('\n')}\n`,
    );
  } else {
    ({ config, section } = request.extensions);
  }
  const keyArgs =
    request.key === 'rsa'
      ? ['-algorithm', 'RSA', '-pkeyopt', 'rsa_keygen_bits:2048']
      : ['-algorithm', 'EC', '-pkeyopt', 'ec_paramgen_curve:P-256'];
  openssl(dir, ['genpkey', ...keyArgs, '-out', `${name}.key`]);
  const subject = ['-subj', request.subject, '-utf8', '-config', config];
  const days = ['-days', String(request.days)];
  const serial = ['-set_serial', `0x${request.serialHex ?? crypto.randomBytes(8).toString('hex')}`];
  if (request.issuer === undefined) {
    openssl(dir, [
      ...['req', '-x509', '-new', '-key', `${name}.key`, ...subject, ...days, ...serial],
      ...['-extensions', section, '-out', `${name}.pem`],
    ]);
  } else {
    openssl(dir, ['req', '-new', '-key', `${name}.key`, ...subject, '-out', `${name}.csr`]);
    openssl(dir, [
      ...['x509', '-req', '-in', `${name}.csr`, '-CA', `${request.issuer}.pem`],
      ...['-CAkey', `${request.issuer}.key`, ...serial, ...days],
      ...['-extfile', config, '-extensions', section, '-out', `${name}.pem`],
    ]);
  }
  const certificateFile = path.join(dir, `${name}.pem`);
  return {
    keyFile: path.join(dir, `${name}.key`),
    certificateFile,
    der: derOfPemFile(certificateFile),
  };
}
