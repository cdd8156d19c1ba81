import fs from 'node:fs';
import { plainAddPlaceholder } from '@signpdf/placeholder-plain';
import { P12Signer } from '@signpdf/signer-p12';
import { SignPdf } from '@signpdf/signpdf';
import type { TestPki } from './cms/testPki';

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
 * A PKCS#12 made by openssl from the test PKI (server/test/signing/cms/testPki.ts): the key and
 * certificate of a signer its CA issues, with the CA certificate in the bag, in OpenSSL 3's
 * default encryption (AES-256, HMAC-SHA256), which node-forge reads. Returns the file's path.
 */
export function opensslP12(pki: TestPki, name: string, passphrase: string): string {
  pki.issue(name, ['-algorithm', 'RSA', '-pkeyopt', 'rsa_keygen_bits:2048']);
  pki.openssl(
    'pkcs12',
    '-export',
    '-inkey',
    `${name}.key`,
    '-in',
    `${name}.pem`,
    '-certfile',
    'ca.pem',
    '-passout',
    `pass:${passphrase}`,
    '-out',
    `${name}.p12`,
  );
  return pki.file(`${name}.p12`);
}
