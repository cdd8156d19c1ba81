import crypto from 'node:crypto';
import { AsnConvert } from '@peculiar/asn1-schema';
import {
  BasicConstraints,
  Certificate,
  ExtendedKeyUsage,
  id_ce_basicConstraints,
  id_ce_extKeyUsage,
} from '@peculiar/asn1-x509';

/** One X.509 certificate read once: Node's view for signatures, the ASN.1 model for extensions. */
export interface ParsedCertificate {
  der: Buffer;
  node: crypto.X509Certificate;
  asn: Certificate;
  notBefore: Date;
  notAfter: Date;
  /** basicConstraints cA (false when the extension is absent). */
  isCa: boolean;
  /** The extendedKeyUsage extension, when present. */
  extendedKeyUsage: { critical: boolean; purposes: string[] } | undefined;
  /** SHA-256 of the DER, lowercase hex. */
  fingerprint: string;
}

export class CertificateParseError extends Error {
  override readonly name = 'CertificateParseError';
}

export function parseCertificate(der: Uint8Array): ParsedCertificate {
  const bytes = Buffer.from(der);
  let node: crypto.X509Certificate;
  let asn: Certificate;
  try {
    node = new crypto.X509Certificate(bytes);
    asn = AsnConvert.parse(bytes, Certificate);
  } catch (error) {
    throw new CertificateParseError(
      `not a DER X.509 certificate (${error instanceof Error ? error.message : String(error)})`,
    );
  }
  const extensions = asn.tbsCertificate.extensions ?? [];
  const basic = extensions.find((extension) => extension.extnID === id_ce_basicConstraints);
  const eku = extensions.find((extension) => extension.extnID === id_ce_extKeyUsage);
  const validity = asn.tbsCertificate.validity;
  return {
    der: bytes,
    node,
    asn,
    notBefore: validity.notBefore.getTime(),
    notAfter: validity.notAfter.getTime(),
    isCa:
      basic !== undefined && AsnConvert.parse(basic.extnValue.buffer, BasicConstraints).cA === true,
    extendedKeyUsage:
      eku === undefined
        ? undefined
        : {
            critical: eku.critical === true,
            purposes: [...AsnConvert.parse(eku.extnValue.buffer, ExtendedKeyUsage)],
          },
    fingerprint: crypto.createHash('sha256').update(bytes).digest('hex'),
  };
}

/** A certificate in PEM (one or more blocks) or DER: the DER of each certificate. */
export function certificatesFromFile(content: Buffer): Buffer[] {
  const text = content.toString('latin1');
  if (!text.includes('-----BEGIN')) return [content];
  const blocks = text.match(/-----BEGIN CERTIFICATE-----[\s\S]*?-----END CERTIFICATE-----/g);
  return (blocks ?? []).map((block) =>
    Buffer.from(block.replace(/-----(BEGIN|END) CERTIFICATE-----|\s/g, ''), 'base64'),
  );
}

export function toPem(der: Buffer): string {
  const lines = der.toString('base64').match(/.{1,64}/g) ?? [];
  return `-----BEGIN CERTIFICATE-----\n${lines.join('\n')}\n-----END CERTIFICATE-----\n`;
}
