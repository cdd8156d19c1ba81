/** Certificates as files and CLI output carry them: PEM blocks or bare DER. */

const certificateBlock = /-----BEGIN CERTIFICATE-----[\s\S]*?-----END CERTIFICATE-----/g;

/** The DER of every CERTIFICATE block of a PEM text, in order (none when there is no block). */
export function pemCertificates(pem: string): Buffer[] {
  return (pem.match(certificateBlock) ?? []).map((block) =>
    Buffer.from(block.replace(/-----(BEGIN|END) CERTIFICATE-----|\s/g, ''), 'base64'),
  );
}

/** A certificate file in PEM (one or more blocks) or DER: the DER of each certificate. */
export function certificatesFromFile(content: Buffer): Buffer[] {
  const text = content.toString('latin1');
  return text.includes('-----BEGIN') ? pemCertificates(text) : [content];
}

/** One PEM block, 64-character lines, ending with a newline. */
export function toPem(der: Buffer): string {
  const lines = der.toString('base64').match(/.{1,64}/g) ?? [];
  return `-----BEGIN CERTIFICATE-----\n${lines.join('\n')}\n-----END CERTIFICATE-----\n`;
}
