/**
 * Every object identifier the signing code names (CMS, timestamps, certificates, OCSP and
 * CRLs, the server's and the agent's alike), each once. Lookups by OID (the hash a signature
 * algorithm uses, a digest's name) are built from these names, never from literal strings.
 */
export const cmsOids = {
  // Content types (RFC 5652, RFC 3161).
  data: '1.2.840.113549.1.7.1',
  signedData: '1.2.840.113549.1.7.2',
  tstInfo: '1.2.840.113549.1.9.16.1.4',

  // Attributes of a SignerInfo.
  contentType: '1.2.840.113549.1.9.3',
  messageDigest: '1.2.840.113549.1.9.4',
  signingTime: '1.2.840.113549.1.9.5',
  /** ESS signing-certificate (ESSCertID, SHA-1), RFC 2634. */
  signingCertificate: '1.2.840.113549.1.9.16.2.12',
  /** ESS signing-certificate-v2 (ESSCertIDv2), RFC 5035. */
  signingCertificateV2: '1.2.840.113549.1.9.16.2.47',
  signatureTimeStampToken: '1.2.840.113549.1.9.16.2.14',
  /** Adobe's signed attribute holding CRLs and OCSP answers (ISO 32000-1 12.8.3.3.2). */
  adbeRevocationInfoArchival: '1.2.840.113583.1.1.8',
  /** RFC 5940: an OCSPResponse as OtherRevocationInfoFormat (id-ri-ocsp-response). */
  ocspResponseRevocationInfo: '1.3.6.1.5.5.7.16.2',

  // Digests.
  sha1: '1.3.14.3.2.26',
  sha256: '2.16.840.1.101.3.4.2.1',
  sha384: '2.16.840.1.101.3.4.2.2',
  sha512: '2.16.840.1.101.3.4.2.3',

  // Keys and signature algorithms.
  rsaEncryption: '1.2.840.113549.1.1.1',
  sha1WithRsaEncryption: '1.2.840.113549.1.1.5',
  mgf1: '1.2.840.113549.1.1.8',
  rsassaPss: '1.2.840.113549.1.1.10',
  sha256WithRsaEncryption: '1.2.840.113549.1.1.11',
  sha384WithRsaEncryption: '1.2.840.113549.1.1.12',
  sha512WithRsaEncryption: '1.2.840.113549.1.1.13',
  sha224WithRsaEncryption: '1.2.840.113549.1.1.14',
  ecPublicKey: '1.2.840.10045.2.1',
  ecdsaWithSha1: '1.2.840.10045.4.1',
  ecdsaWithSha224: '1.2.840.10045.4.3.1',
  ecdsaWithSha256: '1.2.840.10045.4.3.2',
  ecdsaWithSha384: '1.2.840.10045.4.3.3',
  ecdsaWithSha512: '1.2.840.10045.4.3.4',
  ed25519: '1.3.101.112',

  // Name attributes (X.520, PKCS #9, RFC 4519).
  commonName: '2.5.4.3',
  /** The subject's serialNumber attribute (not a certificate's serial number). */
  serialNumberAttribute: '2.5.4.5',
  emailAddress: '1.2.840.113549.1.9.1',
  userId: '0.9.2342.19200300.100.1.1',

  // Certificate extensions and what they name (RFC 5280).
  subjectKeyIdentifier: '2.5.29.14',
  /** id-ad-ocsp: an authorityInfoAccess entry naming an OCSP responder. */
  ocspAccess: '1.3.6.1.5.5.7.48.1',
  /** id-kp-timeStamping: the extended key usage of a timestamp authority. */
  timeStampingKeyUsage: '1.3.6.1.5.5.7.3.8',
} as const;
