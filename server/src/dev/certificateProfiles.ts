import 'reflect-metadata';
import crypto from 'node:crypto';
import * as x509 from '@peculiar/x509';

/** Node's WebCrypto, given to @peculiar/x509 explicitly (no global provider state). */
export const webcrypto = crypto.webcrypto;

/** Every development CA signature: RSA-2048 keys, PKCS#1 v1.5 with SHA-256. */
export const caSigningAlgorithm = { name: 'RSASSA-PKCS1-v1_5', hash: 'SHA-256' } as const;

/** Issued certificates start a little before now, for clocks that run behind ours. */
const clockSkewMs = 5 * 60 * 1000;
const dayMs = 24 * 60 * 60 * 1000;

export interface Validity {
  notBefore: Date;
  notAfter: Date;
}

export function validityFrom(now: Date, days: number): Validity {
  return {
    notBefore: new Date(now.getTime() - clockSkewMs),
    notAfter: new Date(now.getTime() + days * dayMs),
  };
}

/** A positive 128-bit serial number, hex (RFC 5280: positive, at most 20 octets). */
export function randomSerialNumber(): string {
  const bytes = crypto.randomBytes(16);
  bytes[0] = (bytes[0]! & 0x7f) | 0x01;
  return bytes.toString('hex');
}

/** A distinguished name whose every value is a UTF8String (Vietnamese names survive intact). */
export function utf8Name(attributes: [type: string, value: string][]): x509.Name {
  return new x509.Name(attributes.map(([type, value]) => ({ [type]: [{ utf8String: value }] })));
}

/** keyUsage of a key that signs documents and seals: digitalSignature + nonRepudiation. */
export const documentSigningUsage = new x509.KeyUsagesExtension(
  x509.KeyUsageFlags.digitalSignature | x509.KeyUsageFlags.nonRepudiation,
  true,
);

/** What the issued end-entity certificates are for. */
export type CertificateProfile =
  | { kind: 'seal'; serviceName: string }
  | {
      kind: 'signer';
      name: string;
      /** In subjectAltName; none: a certificate that names nobody by e-mail. */
      email: string | null;
      organization: string;
      /** The subject's UID as Vietnamese CAs write it (`CCCD:…`, `MST:…`), when given. */
      uid?: string;
    }
  | { kind: 'tsa'; serviceName: string };

export const validityDays: Record<CertificateProfile['kind'], number> = {
  seal: 5 * 365,
  signer: 2 * 365,
  tsa: 5 * 365,
};

/** The LDAP userId attribute (RFC 4519) where Vietnamese CAs write CMND/CCCD/MST numbers. */
const uidOid = '0.9.2342.19200300.100.1.1';

export function subjectOf(profile: CertificateProfile): x509.Name {
  switch (profile.kind) {
    case 'seal':
      return utf8Name([
        ['CN', profile.serviceName],
        ['O', profile.serviceName],
      ]);
    case 'signer':
      return utf8Name([
        ['CN', profile.name],
        ['O', profile.organization],
        ...(profile.uid === undefined ? [] : [[uidOid, profile.uid] as [string, string]]),
      ]);
    case 'tsa':
      return utf8Name([
        ['CN', `${profile.serviceName} Development TSA`],
        ['O', profile.serviceName],
      ]);
  }
}

/** Extensions proper to a profile (the key identifiers and basic constraints are common). */
export function profileExtensions(profile: CertificateProfile): x509.Extension[] {
  switch (profile.kind) {
    case 'seal':
      return [documentSigningUsage];
    case 'signer':
      return profile.email === null
        ? [documentSigningUsage]
        : [
            documentSigningUsage,
            new x509.SubjectAlternativeNameExtension([{ type: 'email', value: profile.email }]),
          ];
    case 'tsa':
      // RFC 3161 §2.3: the TSA certificate carries timeStamping as its only EKU, critical.
      return [
        new x509.KeyUsagesExtension(
          x509.KeyUsageFlags.digitalSignature | x509.KeyUsageFlags.nonRepudiation,
          true,
        ),
        new x509.ExtendedKeyUsageExtension([x509.ExtendedKeyUsage.timeStamping], true),
      ];
  }
}
