import { cmsOids } from './oids';

/** The algorithms CMS and timestamp tokens use, by OID: Node's names for their hashes. */

export const hashOids = {
  [cmsOids.sha1]: 'sha1',
  [cmsOids.sha256]: 'sha256',
  [cmsOids.sha384]: 'sha384',
  [cmsOids.sha512]: 'sha512',
} as const satisfies Record<string, string>;

export type HashName = (typeof hashOids)[keyof typeof hashOids];

/** Signature algorithms: the hash they name (null: the SignerInfo's digest algorithm). */
const signatureOids: Record<string, HashName | null> = {
  [cmsOids.rsaEncryption]: null,
  [cmsOids.sha256WithRsaEncryption]: 'sha256',
  [cmsOids.sha384WithRsaEncryption]: 'sha384',
  [cmsOids.sha512WithRsaEncryption]: 'sha512',
  [cmsOids.ecPublicKey]: null,
  [cmsOids.ecdsaWithSha256]: 'sha256',
  [cmsOids.ecdsaWithSha384]: 'sha384',
  [cmsOids.ecdsaWithSha512]: 'sha512',
};

export function hashOf(algorithmOid: string): HashName | undefined {
  return (hashOids as Record<string, HashName>)[algorithmOid];
}

/** The hash a signature algorithm signs with; undefined when we do not support it (RSA-PSS). */
export function signatureHash(algorithmOid: string, digest: HashName): HashName | undefined {
  if (!(algorithmOid in signatureOids)) return undefined;
  return signatureOids[algorithmOid] ?? digest;
}
