/**
 * Finding the key of a certificate on a token. Tokens differ: most give the certificate and its
 * keys one CKA_ID, some give different ids or none, and some hold no public-key object (a key
 * imported with its certificate only). So the key is looked for by CKA_ID first, then by the
 * public key taken from the certificate: RSA by CKA_MODULUS and CKA_PUBLIC_EXPONENT (which
 * private keys expose), EC by CKA_EC_PARAMS and CKA_EC_POINT where the private key exposes it,
 * else through the public-key object with that point.
 */
import type { Session, SessionObject } from 'graphene-pk11';
import type { CertificateFacts, CertificatePublicKey } from '../certificates';
import type { Graphene } from './tokenRegistry';

/** CKK_RSA, CKK_EC (PKCS#11 key types). */
const CKK_RSA = 0;
const CKK_EC = 3;

/** One key object as read from the token: what says which public key it belongs to. */
export interface KeyObject {
  object: SessionObject;
  keyClass: 'private' | 'public';
  /** CKA_ID; empty when the token gives none. */
  id: Buffer;
  keyType: 'rsa' | 'ec' | 'other';
  modulus?: Buffer;
  publicExponent?: Buffer;
  ecParams?: Buffer;
  ecPoint?: Buffer;
}

/** How a key was found: said in the log. */
export type KeyMatch = 'CKA_ID' | 'public key' | 'public-key object' | 'only key on the curve';

/** The attributes each key type is matched by (graphene's names). */
const matchedBy = {
  rsa: ['modulus', 'publicExponent'],
  ec: ['paramsEC', 'pointEC'],
  other: [],
} as const;

type Read = Record<string, Buffer | number | undefined>;

/**
 * Attributes of an object, read in one call; where the token refuses one of them
 * (CKR_ATTRIBUTE_TYPE_INVALID, CKR_ATTRIBUTE_SENSITIVE), one by one, the refused ones left out.
 */
function attributes(object: SessionObject, names: readonly string[]): Read {
  const template = Object.fromEntries(names.map((name) => [name, null]));
  try {
    return object.getAttribute(template) as Read;
  } catch {
    const read: Read = {};
    for (const name of names) {
      try {
        read[name] = Object.values(object.getAttribute({ [name]: null }) as Read)[0];
      } catch {
        // Not given by this token.
      }
    }
    return read;
  }
}

function bytes(value: Buffer | number | undefined): Buffer | undefined {
  return Buffer.isBuffer(value) && value.length > 0 ? value : undefined;
}

/** The key objects of one class the session sees now (private ones often only after login). */
export function readKeyObjects(
  session: Session,
  g: Graphene,
  keyClass: KeyObject['keyClass'],
  /** Only the keys with this CKA_ID. */
  id?: Buffer,
): KeyObject[] {
  const found = session.find({
    class: keyClass === 'private' ? g.ObjectClass.PRIVATE_KEY : g.ObjectClass.PUBLIC_KEY,
    ...(id === undefined ? {} : { id }),
  });
  const keys: KeyObject[] = [];
  for (let index = 0; index < found.length; index++) {
    const object = found.items(index);
    const head = attributes(object, ['keyType', 'id']);
    const keyType = head.keyType === CKK_RSA ? 'rsa' : head.keyType === CKK_EC ? 'ec' : 'other';
    const read = attributes(object, matchedBy[keyType]);
    keys.push({
      object,
      keyClass,
      id: bytes(head.id) ?? Buffer.alloc(0),
      keyType,
      modulus: bytes(read.modulus),
      publicExponent: bytes(read.publicExponent),
      // graphene answers CKA_EC_PARAMS under its older name, CKA_ECDSA_PARAMS (the same value).
      ecParams: bytes(read.paramsEC ?? read.paramsECDSA),
      ecPoint: bytes(read.pointEC),
    });
  }
  return keys;
}

/** An unsigned big-endian integer without its leading zero bytes. */
function unsigned(value: Buffer): Buffer {
  let start = 0;
  while (start < value.length - 1 && value[start] === 0) start++;
  return value.subarray(start);
}

/** CKA_EC_POINT is the point in a DER OCTET STRING; some tokens give the bare point. */
function samePoint(stored: Buffer, point: Buffer): boolean {
  if (stored.equals(point)) return true;
  if (stored[0] !== 0x04) return false;
  const length = stored[1] ?? 0;
  const header = length < 0x80 ? 2 : 2 + (length & 0x7f);
  return stored.subarray(header).equals(point);
}

/**
 * What the key's own attributes say of the certificate's public key: `same`, `different`, or
 * `unknown` when the token does not expose enough (an EC private key without CKA_EC_POINT).
 */
function comparePublicKey(
  key: KeyObject,
  publicKey: CertificatePublicKey,
): 'same' | 'different' | 'unknown' {
  if (publicKey.kind === 'other' || key.keyType !== publicKey.kind) {
    return key.keyType === 'other' ? 'unknown' : 'different';
  }
  if (publicKey.kind === 'rsa') {
    if (!key.modulus) return 'unknown';
    if (!unsigned(key.modulus).equals(unsigned(publicKey.modulus))) return 'different';
    if (key.publicExponent && !unsigned(key.publicExponent).equals(publicKey.publicExponent)) {
      return 'different';
    }
    return 'same';
  }
  if (key.ecParams && !key.ecParams.equals(publicKey.params)) return 'different';
  if (!key.ecPoint) return 'unknown';
  return samePoint(key.ecPoint, publicKey.point) ? 'same' : 'different';
}

export interface CertificateOnToken {
  id: Buffer;
  facts: CertificateFacts;
}

/**
 * The key of `certificate` among `keys`, and how it was found (only a private key when
 * `privateOnly`; public-key objects then serve step 3):
 * 1. a key with the certificate's CKA_ID whose public key does not contradict it;
 * 2. a key whose public key is the certificate's;
 * 3. a private key with the CKA_ID of a public-key object whose public key is the certificate's
 *    (EC private keys rarely expose their point);
 * 4. with `privateOnly` (after login), the one EC private key on the certificate's curve that exposes no
 *    point and carries no other certificate's CKA_ID (the caller then checks the signature).
 * Undefined when none fits.
 */
export function keyOfCertificate(
  keys: readonly KeyObject[],
  certificate: CertificateOnToken,
  options: { otherCertificateIds: readonly Buffer[]; privateOnly: boolean },
): { key: KeyObject; how: KeyMatch } | undefined {
  const publicKey = certificate.facts.publicKey;
  const compared = keys.map((key) => ({ key, fit: comparePublicKey(key, publicKey) }));
  const wanted = options.privateOnly
    ? compared.filter(({ key }) => key.keyClass === 'private')
    : compared;
  const byId = wanted.find(
    ({ key, fit }) =>
      certificate.id.length > 0 && key.id.equals(certificate.id) && fit !== 'different',
  );
  if (byId) return { key: byId.key, how: 'CKA_ID' };
  const byPublicKey = wanted.find(({ fit }) => fit === 'same');
  if (byPublicKey) return { key: byPublicKey.key, how: 'public key' };
  const privates = compared.filter(({ key }) => key.keyClass === 'private');
  for (const { key: publicObject } of compared) {
    if (publicObject.keyClass !== 'public' || publicObject.id.length === 0) continue;
    if (comparePublicKey(publicObject, publicKey) !== 'same') continue;
    const paired = privates.find(
      ({ key, fit }) => key.id.equals(publicObject.id) && fit !== 'different',
    );
    if (paired) return { key: paired.key, how: 'public-key object' };
  }
  if (!options.privateOnly || publicKey.kind !== 'ec') return undefined;
  const candidates = privates.filter(
    ({ key, fit }) =>
      fit === 'unknown' &&
      key.keyType === 'ec' &&
      key.ecParams !== undefined &&
      !options.otherCertificateIds.some((id) => id.length > 0 && id.equals(key.id)),
  );
  return candidates.length === 1
    ? { key: candidates[0]!.key, how: 'only key on the curve' }
    : undefined;
}
