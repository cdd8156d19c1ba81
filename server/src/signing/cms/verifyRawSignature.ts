import { constants, type KeyObject, verify, X509Certificate } from 'node:crypto';
import {
  certificateIssuerAndSerial,
  DerError,
  derChildren,
  derTag,
  derValue,
  ecdsaRawSignatureToDer,
  readDerWhole,
} from '@esign/shared/cms';
import { PSS_SALT_LENGTH, type SignatureAlgorithm } from './algorithms';
import { cmsErrors, fromSignedAttributesError } from './errors';

/** RSA padding asked for by the request; an id-RSASSA-PSS certificate asks for PSS itself. */
export type RsaScheme = 'pkcs1' | 'pss';

export interface RawSignatureInput {
  /** The DER `SET OF Attribute` (tag 0x31) that was signed. */
  signedAttributes: Uint8Array;
  /** RSA signature, or ECDSA as DER `ECDSA-Sig-Value` or raw r||s. */
  signature: Uint8Array;
  /** The signer certificate, DER. */
  certificate: Uint8Array;
  scheme?: RsaScheme;
}

export interface VerifiedSignature {
  signatureAlgorithm: SignatureAlgorithm;
  /** The signature as CMS carries it: ECDSA always in DER, RSA as given. */
  signature: Buffer;
}

/** Field sizes of the accepted curves (Node's names), the length of r and of s. */
const curveFieldLength: Record<string, number> = { prime256v1: 32, secp384r1: 48 };

function publicKeyOf(certificate: Uint8Array): KeyObject {
  try {
    // Node's parser also takes PEM: insist on DER first, with the shared certificate check.
    certificateIssuerAndSerial(certificate);
    return new X509Certificate(certificate).publicKey;
  } catch (error) {
    const mapped = fromSignedAttributesError(error);
    if (mapped !== error) throw mapped;
    throw cmsErrors.certificateMalformed('The signer certificate cannot be read');
  }
}

/** Whether the bytes are a strict DER ECDSA-Sig-Value with r and s no longer than the field. */
function isStrictEcdsaDer(signature: Uint8Array, fieldLength: number): boolean {
  try {
    const outer = readDerWhole(signature);
    if (outer.tag !== derTag.sequence) return false;
    const parts = derChildren(signature, outer);
    if (parts.length !== 2) return false;
    return parts.every((part) => {
      if (part.tag !== derTag.integer) return false;
      const value = derValue(signature, part);
      const first = value[0];
      if (first === undefined || first & 0x80) return false; // empty or negative
      if (first === 0 && value.length > 1 && !((value[1] as number) & 0x80)) return false; // not minimal
      return value.length - (first === 0 ? 1 : 0) <= fieldLength;
    });
  } catch (error) {
    if (error instanceof DerError) return false;
    throw error;
  }
}

function verifyEcdsa(key: KeyObject, data: Uint8Array, signature: Uint8Array): VerifiedSignature {
  const curve = key.asymmetricKeyDetails?.namedCurve ?? '';
  const fieldLength = curveFieldLength[curve];
  if (fieldLength === undefined) {
    throw cmsErrors.certificateKeyUnsupported(
      `The certificate's EC key is on ${curve || 'an unnamed curve'}; P-256 and P-384 are accepted`,
    );
  }
  // A 64- or 96-byte value can, rarely, read both ways: try each reading that parses.
  const candidates: Buffer[] = [];
  if (isStrictEcdsaDer(signature, fieldLength)) candidates.push(Buffer.from(signature));
  if (signature.length === 2 * fieldLength)
    candidates.push(Buffer.from(ecdsaRawSignatureToDer(signature)));
  if (candidates.length === 0) {
    throw cmsErrors.signatureMalformed(
      `An ECDSA signature with this key is DER or ${2 * fieldLength} bytes of r||s; got ${signature.length} bytes that are neither`,
    );
  }
  const valid = candidates.find((der) => verify('sha256', data, { key, dsaEncoding: 'der' }, der));
  if (!valid) {
    throw cmsErrors.signatureInvalid(
      'The ECDSA signature does not verify over the signed attributes with the certificate key',
    );
  }
  return { signatureAlgorithm: 'ecdsaSha256', signature: valid };
}

/** PSS as the engine signs it: a certificate restricted to other PSS parameters is refused. */
function checkPssKeyParameters(key: KeyObject): void {
  const details = key.asymmetricKeyDetails ?? {};
  const hash = details.hashAlgorithm;
  const mgf1Hash = details.mgf1HashAlgorithm;
  const salt = details.saltLength;
  if (
    (hash !== undefined && hash !== 'sha256') ||
    (mgf1Hash !== undefined && mgf1Hash !== 'sha256') ||
    (salt !== undefined && salt > PSS_SALT_LENGTH)
  ) {
    throw cmsErrors.certificateKeyUnsupported(
      `The certificate's RSASSA-PSS key is restricted to ${hash}/MGF1-${mgf1Hash}/salt ${salt}; SHA-256, MGF1-SHA-256, salt ${PSS_SALT_LENGTH} are accepted`,
    );
  }
}

function verifyRsa(
  key: KeyObject,
  data: Uint8Array,
  signature: Uint8Array,
  scheme: RsaScheme | undefined,
): VerifiedSignature {
  const pssKey = key.asymmetricKeyType === 'rsa-pss';
  if (pssKey && scheme === 'pkcs1') {
    throw cmsErrors.signatureSchemeMismatch(
      'The certificate key is id-RSASSA-PSS: it cannot verify a PKCS#1 v1.5 signature',
    );
  }
  if (pssKey) checkPssKeyParameters(key);
  const modulusBytes = Math.ceil((key.asymmetricKeyDetails?.modulusLength ?? 0) / 8);
  if (signature.length !== modulusBytes) {
    throw cmsErrors.signatureMalformed(
      `An RSA signature with this ${modulusBytes * 8}-bit key is ${modulusBytes} bytes; got ${signature.length}`,
    );
  }
  const pss = pssKey || scheme === 'pss';
  const valid = pss
    ? verify(
        'sha256',
        data,
        { key, padding: constants.RSA_PKCS1_PSS_PADDING, saltLength: PSS_SALT_LENGTH },
        signature,
      )
    : verify('sha256', data, { key, padding: constants.RSA_PKCS1_PADDING }, signature);
  if (!valid) {
    throw cmsErrors.signatureInvalid(
      `The RSA ${pss ? 'PSS' : 'PKCS#1 v1.5'} signature does not verify over the signed attributes with the certificate key`,
    );
  }
  return {
    signatureAlgorithm: pss ? 'rsaPssSha256' : 'rsaPkcs1Sha256',
    signature: Buffer.from(signature),
  };
}

/**
 * Checks a token's signature over the signed attributes with the signer certificate's key:
 * RSA PKCS#1 v1.5 with SHA-256; RSASSA-PSS (SHA-256, MGF1-SHA-256, salt 32) when the
 * certificate's key is id-RSASSA-PSS or `scheme` is 'pss'; ECDSA P-256 or P-384 with SHA-256,
 * as DER or raw r||s. Returns the algorithm and the signature in the form CMS carries. Throws
 * a 4xx EngineError: 400 CERTIFICATE_MALFORMED, 422 CERTIFICATE_KEY_UNSUPPORTED, 422
 * SIGNATURE_SCHEME_MISMATCH, 400 SIGNATURE_MALFORMED, 422 SIGNATURE_INVALID.
 */
export function verifyRawSignature(input: RawSignatureInput): VerifiedSignature {
  const key = publicKeyOf(input.certificate);
  switch (key.asymmetricKeyType) {
    case 'ec':
      if (input.scheme !== undefined) {
        throw cmsErrors.signatureSchemeMismatch(
          `The certificate key is EC: an RSA ${input.scheme} signature cannot come from it`,
        );
      }
      return verifyEcdsa(key, input.signedAttributes, input.signature);
    case 'rsa':
    case 'rsa-pss':
      return verifyRsa(key, input.signedAttributes, input.signature, input.scheme);
    default:
      throw cmsErrors.certificateKeyUnsupported(
        `The certificate key is ${key.asymmetricKeyType}; RSA and ECDSA P-256/P-384 are accepted`,
      );
  }
}
