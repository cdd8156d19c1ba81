import crypto from 'node:crypto';
import {
  bindIdentity,
  certificateIdentity,
  type ExpectedSigner,
  foldedName,
  type IdentityBinding,
} from '../certificates/identity';
import { finalizeErrors } from './errors';
import type { Preparation } from './preparedRevision';

/**
 * Whose signature a finalize accepts, beyond the cryptography: the person it must be of, and
 * how old the prepared revision's signing time may be.
 */
export interface SignerExpectations {
  /**
   * The person the signature must be of: their identifiers are compared with the signer
   * certificate's (422 SIGNER_IDENTITY_MISMATCH), and a revision prepared without knowing the
   * certificate must show the certificate's name (422 CERTIFICATE_NAME_NOT_PREPARED). 'service':
   * the service's seal signs for them (identity `service`). Absent: nothing is compared.
   */
  signer?: ExpectedSigner | 'service';
  /** Refused (409 PREPARATION_STALE) when the timestamp is this much later than the /M. */
  maxSigningTimeLagMs?: number;
}

const sha256Hex = (bytes: Buffer) => crypto.createHash('sha256').update(bytes).digest('hex');

/** Before anything else: a revision prepared for a certificate is finalized by that one only. */
export function checkPreparedCertificate(preparation: Preparation, certificate: Buffer): void {
  if (preparation.certificateSha256 && preparation.certificateSha256 !== sha256Hex(certificate)) {
    throw finalizeErrors.certificateNotPrepared();
  }
}

/**
 * After the signature and its timestamp checked: the identity binding, the name the box shows,
 * the age of the signing time. Returns the binding to keep with the signature.
 */
export function checkSigner(
  preparation: Preparation,
  certificate: Buffer,
  genTime: Date,
  expectations: SignerExpectations,
): IdentityBinding | undefined {
  const { signer, maxSigningTimeLagMs } = expectations;
  if (
    maxSigningTimeLagMs !== undefined &&
    genTime.getTime() - preparation.signingTime.getTime() > maxSigningTimeLagMs
  ) {
    throw finalizeErrors.preparationStale(preparation.signingTime, genTime, maxSigningTimeLagMs);
  }
  if (signer === undefined) return undefined;
  if (signer === 'service') return { status: 'service' };
  const binding = bindIdentity(signer, certificate);
  const commonName = certificateIdentity(certificate).commonName;
  if (
    preparation.certificateSha256 === null &&
    preparation.shownName !== null &&
    commonName &&
    foldedName(commonName) !== foldedName(preparation.shownName)
  ) {
    throw finalizeErrors.certificateNameNotPrepared();
  }
  return binding;
}
