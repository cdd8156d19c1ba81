import crypto, { type KeyObject, X509Certificate } from 'node:crypto';
import {
  buildSignedAttributes,
  cmsOids,
  DerError,
  decodeTimestampToken,
  derBytes,
  derChildren,
  derElement,
  derObjectIdentifier,
  derSequence,
  derSetOf,
  derTag,
  derValue,
  ecdsaRawSignatureToDer,
  hashOids,
  readDerObjectIdentifier,
  readDerWhole,
} from '@esign/shared/cms';
import type { EngineError } from '../../pdf/engineError';
import { PSS_SALT_LENGTH } from '../cms/algorithms';
import { cmsErrors } from '../cms/errors';
import { finalizeErrors, type MistakenDigest } from './errors';

/**
 * Why a token signature does not verify over the attributes the service built, so that each
 * mistake a client makes gets its own refusal (docs/signing-with-a-token.md "Refusals"). Each
 * likely mistake is rebuilt and tried against the signature: the signer's certificate further
 * down the chain, attributes naming another certificate, the digest of other bytes (another
 * preparation, the whole file, the unprepared file), the bare document digest, the attributes
 * with the [0] tag, out of DER order, with one fewer, or with a signing-time more (what generic
 * CMS tools add: tried for each second around the timestamp). An RSA PKCS#1 v1.5 signature
 * opens with the certificate's key, which tells another hash, another SHA-256 and another key
 * (or damaged bytes) apart; ECDSA and PSS cannot tell those apart and say so.
 */

export interface MistakeInput {
  documentDigest: Buffer;
  signature: Buffer;
  chain: Buffer[];
  /** The timestamp token sent: its genTime centres the search for an added signing-time. */
  timestampToken: Buffer;
  /** What the request arrived at: used when the token does not parse. */
  now: Date;
  /** Digests a client may have signed instead of this revision's, each with what it is of. */
  mistakenDigests: () => Promise<MistakenDigest[]>;
}

/** How far before and after the timestamp's genTime a client's signing-time is looked for. */
const signingTimeWindowMs = { before: 10 * 60_000, after: 60_000 };
const signingTimeOid = '1.2.840.113549.1.9.5';

const attributeNames: Record<string, string> = {
  [cmsOids.contentType]: 'content-type',
  [cmsOids.messageDigest]: 'message-digest',
  [cmsOids.signingCertificateV2]: 'signing-certificate-v2',
};

/** Tests whether the key of one certificate signed a message (SHA-256, as the service expects). */
interface Matcher {
  signs(message: Uint8Array): boolean;
  /** RSA PKCS#1 v1.5 only: the DigestInfo the signature opens to, or null for other bytes. */
  opened?: { hash: string; digest: Buffer } | null;
}

const ecFieldLength: Record<string, number> = { prime256v1: 32, secp384r1: 48 };

/** The DigestInfo an RSA PKCS#1 v1.5 signature holds, or null when it opens to anything else. */
function openRsa(key: KeyObject, signature: Buffer): Matcher['opened'] {
  let opened: Buffer;
  try {
    opened = crypto.publicDecrypt({ key, padding: crypto.constants.RSA_PKCS1_PADDING }, signature);
  } catch {
    return null;
  }
  try {
    const info = readDerWhole(opened);
    const [algorithm, digest] = derChildren(opened, info);
    if (info.tag !== derTag.sequence || !algorithm || digest?.tag !== derTag.octetString) {
      return null;
    }
    const oid = derChildren(opened, algorithm)[0];
    if (oid?.tag !== derTag.objectIdentifier) return null;
    const hash = (hashOids as Record<string, string>)[readDerObjectIdentifier(opened, oid)];
    return hash === undefined ? null : { hash, digest: Buffer.from(derValue(opened, digest)) };
  } catch (error) {
    if (error instanceof DerError) return null;
    throw error;
  }
}

function matcherFor(certificate: Buffer, signature: Buffer): Matcher | undefined {
  let key: KeyObject;
  try {
    key = new X509Certificate(certificate).publicKey;
  } catch {
    return undefined;
  }
  const sha256 = (message: Uint8Array) => crypto.createHash('sha256').update(message).digest();
  switch (key.asymmetricKeyType) {
    case 'rsa': {
      const opened = openRsa(key, signature);
      return {
        opened,
        signs: (message) => opened?.hash === 'sha256' && opened.digest.equals(sha256(message)),
      };
    }
    case 'rsa-pss':
      return {
        signs: (message) =>
          crypto.verify(
            'sha256',
            message,
            { key, padding: crypto.constants.RSA_PKCS1_PSS_PADDING, saltLength: PSS_SALT_LENGTH },
            signature,
          ),
      };
    case 'ec': {
      const field = ecFieldLength[key.asymmetricKeyDetails?.namedCurve ?? ''] ?? 0;
      const forms = [signature];
      if (signature.length === 2 * field) {
        forms.push(Buffer.from(ecdsaRawSignatureToDer(signature)));
      }
      return {
        signs: (message) =>
          forms.some((form) => {
            try {
              return crypto.verify('sha256', message, { key, dsaEncoding: 'der' }, form);
            } catch {
              return false;
            }
          }),
      };
    }
    default:
      return undefined;
  }
}

/** The members of a DER SET OF, each as its own bytes. */
function membersOf(set: Uint8Array): Uint8Array[] {
  return derChildren(set, readDerWhole(set)).map((member) => derBytes(set, member));
}

function oidOf(attribute: Uint8Array): string {
  const type = derChildren(attribute, readDerWhole(attribute))[0]!;
  return readDerObjectIdentifier(attribute, type);
}

/** Every other order of the members (a client that did not sort the SET OF). */
function reorderings(members: Uint8Array[]): Uint8Array[] {
  const orders: Uint8Array[][] = [];
  const permute = (done: Uint8Array[], left: Uint8Array[]): void => {
    if (left.length === 0) orders.push(done);
    for (const [i, next] of left.entries()) {
      permute([...done, next], [...left.slice(0, i), ...left.slice(i + 1)]);
    }
  };
  permute([], members);
  return orders.slice(1).map((order) => derElement(derTag.set, ...order));
}

/** The attributes without one or two of their members, with the names of those left out. */
function subsets(members: Uint8Array[]): { attributes: Uint8Array; missing: string[] }[] {
  const found: { attributes: Uint8Array; missing: string[] }[] = [];
  for (let mask = 1; mask < (1 << members.length) - 1; mask++) {
    const kept = members.filter((_, index) => mask & (1 << index));
    const missing = members
      .filter((_, index) => !(mask & (1 << index)))
      .map((member) => attributeNames[oidOf(member)] ?? oidOf(member));
    found.push({ attributes: derSetOf(kept), missing });
  }
  return found;
}

/** The genTime of a token that at least parses, else `fallback`. */
function centreOf(token: Buffer, fallback: Date): Date {
  try {
    return decodeTimestampToken(token).tstInfo.genTime;
  } catch {
    return fallback;
  }
}

const two = (value: number) => String(value).padStart(2, '0');

/** UTCTime (RFC 5652 for signing-time before 2050) and GeneralizedTime of one second. */
function timeEncodings(at: Date): Uint8Array[] {
  const year = at.getUTCFullYear();
  const rest = `${two(at.getUTCMonth() + 1)}${two(at.getUTCDate())}${two(at.getUTCHours())}${two(at.getUTCMinutes())}${two(at.getUTCSeconds())}Z`;
  return [
    derElement(0x17, Buffer.from(`${String(year).slice(2)}${rest}`, 'latin1')),
    derElement(0x18, Buffer.from(`${year}${rest}`, 'latin1')),
  ];
}

/** Whether the key signed the attributes plus a signing-time of some second near `centre`. */
function signedWithSigningTime(matcher: Matcher, members: Uint8Array[], centre: Date): boolean {
  const from = Math.floor((centre.getTime() - signingTimeWindowMs.before) / 1000);
  const to = Math.floor((centre.getTime() + signingTimeWindowMs.after) / 1000);
  for (let second = from; second <= to; second++) {
    for (const time of timeEncodings(new Date(second * 1000))) {
      const signingTime = derSequence(derObjectIdentifier(signingTimeOid), derSetOf([time]));
      if (matcher.signs(derSetOf([...members, signingTime]))) return true;
      if (matcher.signs(derElement(derTag.set, ...members, signingTime))) return true;
    }
  }
  return false;
}

/**
 * The refusal for a signature that does not verify over `signedAttributes` (`refused`: what the
 * verifier said), naming the mistake when one of the likely ones is recognised.
 */
export async function refusalFor(
  input: MistakeInput,
  signedAttributes: Uint8Array,
  refused: EngineError,
): Promise<EngineError> {
  const { documentDigest, signature, chain } = input;
  // The signer's certificate further down: chain[0]'s key may not even fit the signature.
  const other = chain.findIndex(
    (certificate, index) =>
      index > 0 &&
      matcherFor(certificate, signature)?.signs(
        buildSignedAttributes(documentDigest, certificate),
      ) === true,
  );
  if (other > 0) return finalizeErrors.signerNotFirst(other);
  const signer = chain[0]!;
  const matcher = matcherFor(signer, signature);
  if (refused.code !== 'SIGNATURE_INVALID' || !matcher) return refused;
  if (matcher.opened === null) return finalizeErrors.signatureByOtherKey();

  for (const [index, certificate] of chain.entries()) {
    if (index > 0 && matcher.signs(buildSignedAttributes(documentDigest, certificate))) {
      return finalizeErrors.signingCertificateMismatch(index);
    }
  }
  for (const mistaken of await input.mistakenDigests()) {
    if (matcher.signs(buildSignedAttributes(mistaken.digest, signer))) {
      return finalizeErrors.documentDigestMismatch(mistaken.of);
    }
  }
  if (
    matcher.signs(documentDigest) ||
    (matcher.opened?.hash === 'sha256' && matcher.opened.digest.equals(documentDigest))
  ) {
    return finalizeErrors.signedAttributesAbsent();
  }
  const implicit = Buffer.from(signedAttributes);
  implicit[0] = 0xa0;
  if (matcher.signs(implicit)) return finalizeErrors.signedAttributesWrongTag();
  const members = membersOf(signedAttributes);
  if (reorderings(members).some((order) => matcher.signs(order))) {
    return finalizeErrors.signedAttributesUnsorted();
  }
  const fewer = subsets(members).find((subset) => matcher.signs(subset.attributes));
  if (fewer) return finalizeErrors.signedAttributesMissing(fewer.missing);
  if (signedWithSigningTime(matcher, members, centreOf(input.timestampToken, input.now))) {
    return finalizeErrors.signedAttributesExtra('signing-time (1.2.840.113549.1.9.5)');
  }
  if (matcher.opened && matcher.opened.hash !== 'sha256') {
    return finalizeErrors.signatureHashMismatch(matcher.opened.hash);
  }
  if (matcher.opened) return finalizeErrors.signedAttributesMismatch();
  return cmsErrors.signatureInvalid(
    `${refused.message}: another key made it, it is over other bytes (another digest, other attributes) or it is damaged; an ECDSA or RSA-PSS signature does not tell which`,
  );
}
