import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { plainAddPlaceholder } from '@signpdf/placeholder-plain';
import { P12Signer } from '@signpdf/signer-p12';
import { SignPdf } from '@signpdf/signpdf';

/**
 * PDFs signed by software other than ours, for the acceptance corpus and the bench: what a
 * partner's document may already carry when it reaches us. @signpdf (node-forge underneath) is a
 * dev-only dependency.
 */

export interface SignpdfOptions {
  p12Path: string;
  passphrase: string;
  /** Written as the signature dictionary's /M; default now. */
  signingTime?: Date;
  reason?: string;
  name?: string;
  location?: string;
}

/**
 * Signs `inputPdf` with @signpdf: plainAddPlaceholder (an incremental update with a classic
 * xref table, adbe.pkcs7.detached) and P12Signer (a detached PKCS#7 by node-forge). The input
 * must have a classic xref table: plainAddPlaceholder cannot read xref streams.
 */
export async function signWithSignpdf(
  inputPdf: string,
  outputPdf: string,
  options: SignpdfOptions,
): Promise<void> {
  const signingTime = options.signingTime ?? new Date();
  const withPlaceholder = plainAddPlaceholder({
    pdfBuffer: fs.readFileSync(inputPdf),
    reason: options.reason ?? 'Signed with @signpdf',
    contactInfo: '',
    name: options.name ?? 'signpdf signer',
    location: options.location ?? '',
    signingTime,
  });
  const signer = new P12Signer(fs.readFileSync(options.p12Path), {
    passphrase: options.passphrase,
  });
  const signed = await new SignPdf().sign(withPlaceholder, signer, signingTime);
  fs.writeFileSync(outputPdf, signed);
}

/**
 * A PKCS#12 made by openssl in `dir`: a CA (CA:true) and a signer certificate it issued, the
 * signer's key, and the CA certificate in the bag, with OpenSSL 3's default encryption
 * (AES-256, HMAC-SHA256), which node-forge reads.
 */
export function opensslP12(
  dir: string,
  passphrase: string,
): { p12Path: string; caCert: string; signerCert: string } {
  const file = (name: string) => path.join(dir, name);
  const openssl = (args: string[]) => execFileSync('openssl', args, { cwd: dir, stdio: 'pipe' });
  openssl([
    'req',
    '-x509',
    '-newkey',
    'rsa:2048',
    '-nodes',
    '-keyout',
    file('signpdf-ca.key'),
    '-out',
    file('signpdf-ca.pem'),
    '-days',
    '2',
    '-subj',
    '/CN=signpdf Test CA',
    '-addext',
    'basicConstraints=critical,CA:true',
    '-addext',
    'keyUsage=critical,keyCertSign,cRLSign',
  ]);
  openssl([
    'req',
    '-newkey',
    'rsa:2048',
    '-nodes',
    '-keyout',
    file('signpdf-signer.key'),
    '-out',
    file('signpdf-signer.csr'),
    '-subj',
    '/CN=signpdf Test Signer',
  ]);
  fs.writeFileSync(
    file('signpdf-signer.ext'),
    'basicConstraints=CA:false\nkeyUsage=critical,digitalSignature,nonRepudiation\n',
  );
  openssl([
    'x509',
    '-req',
    '-in',
    file('signpdf-signer.csr'),
    '-CA',
    file('signpdf-ca.pem'),
    '-CAkey',
    file('signpdf-ca.key'),
    '-set_serial',
    '2',
    '-days',
    '2',
    '-extfile',
    file('signpdf-signer.ext'),
    '-out',
    file('signpdf-signer.pem'),
  ]);
  openssl([
    'pkcs12',
    '-export',
    '-inkey',
    file('signpdf-signer.key'),
    '-in',
    file('signpdf-signer.pem'),
    '-certfile',
    file('signpdf-ca.pem'),
    '-passout',
    `pass:${passphrase}`,
    '-out',
    file('signpdf-signer.p12'),
  ]);
  return {
    p12Path: file('signpdf-signer.p12'),
    caCert: file('signpdf-ca.pem'),
    signerCert: file('signpdf-signer.pem'),
  };
}
