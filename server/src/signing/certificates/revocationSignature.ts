import crypto from 'node:crypto';
import { cmsOids } from '@esign/shared/cms';
import type { AlgorithmIdentifier } from '@peculiar/asn1-x509';

/**
 * Verifies the signature of an OCSP answer or a CRL (signed bytes + algorithm + signature)
 * with Node's crypto. Certificates themselves are checked by Node's X509Certificate.verify;
 * CMS signatures by `signing/cms`.
 */

/** Signature algorithm OID → digest (null: the algorithm names none, as Ed25519). */
const algorithms: Record<string, { digest: string | null; family: 'rsa' | 'ec' | 'ed' }> = {
  [cmsOids.sha1WithRsaEncryption]: { digest: 'sha1', family: 'rsa' },
  [cmsOids.sha224WithRsaEncryption]: { digest: 'sha224', family: 'rsa' },
  [cmsOids.sha256WithRsaEncryption]: { digest: 'sha256', family: 'rsa' },
  [cmsOids.sha384WithRsaEncryption]: { digest: 'sha384', family: 'rsa' },
  [cmsOids.sha512WithRsaEncryption]: { digest: 'sha512', family: 'rsa' },
  [cmsOids.ecdsaWithSha1]: { digest: 'sha1', family: 'ec' },
  [cmsOids.ecdsaWithSha224]: { digest: 'sha224', family: 'ec' },
  [cmsOids.ecdsaWithSha256]: { digest: 'sha256', family: 'ec' },
  [cmsOids.ecdsaWithSha384]: { digest: 'sha384', family: 'ec' },
  [cmsOids.ecdsaWithSha512]: { digest: 'sha512', family: 'ec' },
  [cmsOids.ed25519]: { digest: null, family: 'ed' },
};

const keyFamilies: Record<string, 'rsa' | 'ec' | 'ed'> = { rsa: 'rsa', ec: 'ec', ed25519: 'ed' };

export type RevocationSignatureCheck = { ok: true } | { ok: false; reason: string };

export function verifyRevocationSignature(
  signed: ArrayBuffer | Uint8Array,
  algorithm: AlgorithmIdentifier,
  signature: ArrayBuffer | Uint8Array,
  key: crypto.KeyObject,
): RevocationSignatureCheck {
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
