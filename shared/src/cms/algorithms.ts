/** The OIDs of the algorithms CMS and timestamp tokens use, and Node's names for their hashes. */

export const hashOids = {
  '1.3.14.3.2.26': 'sha1',
  '2.16.840.1.101.3.4.2.1': 'sha256',
  '2.16.840.1.101.3.4.2.2': 'sha384',
  '2.16.840.1.101.3.4.2.3': 'sha512',
} as const satisfies Record<string, string>;

export type HashName = (typeof hashOids)[keyof typeof hashOids];

export const oid = {
  sha256: '2.16.840.1.101.3.4.2.1',
  signedData: '1.2.840.113549.1.7.2',
  contentType: '1.2.840.113549.1.9.3',
  messageDigest: '1.2.840.113549.1.9.4',
  /** ESS signing-certificate (ESSCertID, SHA-1), RFC 2634. */
  signingCertificate: '1.2.840.113549.1.9.16.2.12',
  /** ESS signing-certificate-v2 (ESSCertIDv2), RFC 5035. */
  signingCertificateV2: '1.2.840.113549.1.9.16.2.47',
  rsaEncryption: '1.2.840.113549.1.1.1',
  sha256WithRsa: '1.2.840.113549.1.1.11',
} as const;

/** Signature algorithms: the hash they name (null: the SignerInfo's digest algorithm). */
const signatureOids: Record<string, HashName | null> = {
  [oid.rsaEncryption]: null,
  '1.2.840.113549.1.1.11': 'sha256',
  '1.2.840.113549.1.1.12': 'sha384',
  '1.2.840.113549.1.1.13': 'sha512',
  '1.2.840.10045.2.1': null,
  '1.2.840.10045.4.3.2': 'sha256',
  '1.2.840.10045.4.3.3': 'sha384',
  '1.2.840.10045.4.3.4': 'sha512',
};

export function hashOf(algorithmOid: string): HashName | undefined {
  return (hashOids as Record<string, HashName>)[algorithmOid];
}

/** The hash a signature algorithm signs with; undefined when we do not support it (RSA-PSS). */
export function signatureHash(algorithmOid: string, digest: HashName): HashName | undefined {
  if (!(algorithmOid in signatureOids)) return undefined;
  return signatureOids[algorithmOid] ?? digest;
}
