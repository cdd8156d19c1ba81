import crypto from 'node:crypto';
import type { AlgorithmIdentifier } from '@peculiar/asn1-x509';

/**
 * Verifies the signature of an OCSP answer or a CRL (signed bytes + algorithm + signature)
 * with Node's crypto. Certificates themselves are checked by Node's X509Certificate.verify.
 */

/** Signature algorithm OID → digest (null: the algorithm names none, as Ed25519). */
const algorithms: Record<string, { digest: string | null; family: 'rsa' | 'ec' | 'ed' }> = {
  '1.2.840.113549.1.1.5': { digest: 'sha1', family: 'rsa' },
  '1.2.840.113549.1.1.14': { digest: 'sha224', family: 'rsa' },
  '1.2.840.113549.1.1.11': { digest: 'sha256', family: 'rsa' },
  '1.2.840.113549.1.1.12': { digest: 'sha384', family: 'rsa' },
  '1.2.840.113549.1.1.13': { digest: 'sha512', family: 'rsa' },
  '1.2.840.10045.4.1': { digest: 'sha1', family: 'ec' },
  '1.2.840.10045.4.3.1': { digest: 'sha224', family: 'ec' },
  '1.2.840.10045.4.3.2': { digest: 'sha256', family: 'ec' },
  '1.2.840.10045.4.3.3': { digest: 'sha384', family: 'ec' },
  '1.2.840.10045.4.3.4': { digest: 'sha512', family: 'ec' },
  '1.3.101.112': { digest: null, family: 'ed' },
};

const keyFamilies: Record<string, 'rsa' | 'ec' | 'ed'> = { rsa: 'rsa', ec: 'ec', ed25519: 'ed' };

export type SignedDataCheck = { ok: true } | { ok: false; reason: string };

export function verifySignedData(
  signed: ArrayBuffer | Uint8Array,
  algorithm: AlgorithmIdentifier,
  signature: ArrayBuffer | Uint8Array,
  key: crypto.KeyObject,
): SignedDataCheck {
  const known = algorithms[algorithm.algorithm];
  if (known === undefined) {
    // RSA-PSS among them: no CA we met signs OCSP or CRLs with it; named so it is visible.
    return { ok: false, reason: `signature algorithm ${algorithm.algorithm} is not supported` };
  }
  const family = keyFamilies[key.asymmetricKeyType ?? ''];
  if (family !== known.family) {
    return { ok: false, reason: 'the signing key does not fit the signature algorithm' };
  }
  try {
    const valid = crypto.verify(
      known.digest,
      new Uint8Array(signed),
      key,
      new Uint8Array(signature),
    );
    return valid ? { ok: true } : { ok: false, reason: 'the signature does not verify' };
  } catch (error) {
    return { ok: false, reason: `the signature does not verify (${(error as Error).message})` };
  }
}
