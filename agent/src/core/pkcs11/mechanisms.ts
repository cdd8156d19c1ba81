/**
 * Which signature mechanism a token's key is used with, and the signing itself: what each
 * mechanism is given and how its output becomes what the server takes.
 */
import {
  digestInfoSha256,
  ecdsaRawSignatureToDer,
  signedAttributesDigest,
} from '@esign/shared/cms';
import type { PrivateKey, Session, Slot } from 'graphene-pk11';
import type { CertificateFacts } from '../certificates';
import { AgentFailure } from '../errors';
import type { AgentMechanism } from '../settings';
import { ckr, pkcs11Code } from './returnValues';

/** Graphene's names of the mechanisms the agent signs with. */
export type Mechanism = 'SHA256_RSA_PKCS' | 'RSA_PKCS' | 'ECDSA' | 'ECDSA_SHA256';

const GRAPHENE_NAMES: Record<AgentMechanism, Mechanism> = {
  CKM_SHA256_RSA_PKCS: 'SHA256_RSA_PKCS',
  CKM_RSA_PKCS: 'RSA_PKCS',
  CKM_ECDSA: 'ECDSA',
  CKM_ECDSA_SHA256: 'ECDSA_SHA256',
};

/**
 * The mechanisms for this key on this token, best first: those it advertises less those the
 * settings avoid for its module. MECHANISM_UNSUPPORTED when none is left.
 */
export function mechanismsFor(
  slot: Slot,
  keyAlgorithm: CertificateFacts['keyAlgorithm'],
  avoided: readonly AgentMechanism[],
): Mechanism[] {
  const available = new Set<string>();
  const list = slot.getMechanisms();
  for (let index = 0; index < list.length; index++) available.add(list.items(index).name);
  const skipped = new Set(avoided.map((name) => GRAPHENE_NAMES[name]));
  const wanted: Mechanism[] =
    keyAlgorithm === 'rsa' ? ['SHA256_RSA_PKCS', 'RSA_PKCS'] : ['ECDSA', 'ECDSA_SHA256'];
  const usable = wanted.filter((name) => available.has(name) && !skipped.has(name));
  if (usable.length === 0) {
    const because = avoided.length > 0 ? ` (the settings avoid ${avoided.join(', ')})` : '';
    throw new AgentFailure(
      'MECHANISM_UNSUPPORTED',
      `the token offers none of ${wanted.map((name) => `CKM_${name}`).join(', ')} for this ${keyAlgorithm.toUpperCase()} key${because}`,
    );
  }
  return usable;
}

/** What a mechanism is given: the signed attributes, or their SHA-256 (in a DigestInfo for RSA). */
function signInput(mechanism: Mechanism, attributes: Uint8Array): Buffer {
  const digest = Buffer.from(signedAttributesDigest(attributes));
  switch (mechanism) {
    case 'SHA256_RSA_PKCS':
    case 'ECDSA_SHA256':
      return Buffer.from(attributes);
    case 'RSA_PKCS':
      return Buffer.from(digestInfoSha256(digest));
    case 'ECDSA':
      return digest;
  }
}

/**
 * Signs with the first mechanism whose C_SignInit the token accepts. Tokens in the field
 * advertise mechanisms their firmware (or the key's CKA_ALLOWED_MECHANISMS) then refuses with
 * CKR_MECHANISM_INVALID: the next one gives the same signature value's meaning, so the user
 * never sees the difference. Returns the signature as the server takes it (ECDSA in DER).
 */
export function signWithFirstAccepted(
  session: Session,
  key: PrivateKey,
  mechanisms: readonly Mechanism[],
  attributes: Uint8Array,
  log: (message: string) => void,
): Buffer {
  for (const [index, mechanism] of mechanisms.entries()) {
    let signer: ReturnType<Session['createSign']>;
    try {
      signer = session.createSign(mechanism, key);
    } catch (error) {
      const next = mechanisms[index + 1];
      if (pkcs11Code(error) !== ckr.MECHANISM_INVALID || next === undefined) throw error;
      log(`the token refused CKM_${mechanism} at C_SignInit; trying CKM_${next}`);
      continue;
    }
    const signature = signer.once(signInput(mechanism, attributes));
    return mechanism.startsWith('ECDSA')
      ? Buffer.from(ecdsaRawSignatureToDer(signature))
      : signature;
  }
  throw new Error('no mechanism to sign with');
}
