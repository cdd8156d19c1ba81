import { EngineError } from '../../pdf/engineError';
import type { TrustPolicy } from '../trustPolicy';
import { hasKeyUsage, keyUsageBits, readCertificate, subjectName } from './certificate';
import { buildChain, type ChainFailureReason } from './chain';

export type SignerCertificateCheck =
  | {
      status: 'valid';
      /** Signer first, trust anchor last. */
      chain: Buffer[];
    }
  | {
      status: 'expired' | 'not_yet_valid';
      /** Position in the chain of the certificate outside its validity (0 = the signer). */
      index: number;
      notBefore: Date;
      notAfter: Date;
      message: string;
    }
  | { status: 'wrong_key_usage'; message: string }
  | {
      /** The certificate itself is fine but no path to an anchor was found. */
      status: 'untrusted';
      reason: ChainFailureReason;
      message: string;
      /** The chain as given (signer first); nothing here is trusted. */
      chain: Buffer[];
    };

export interface SignerCertificateInput {
  /** DER certificates as the signer sent them, signer first. */
  chain: Buffer[];
  /** The time the signature is judged at: the timestamp's genTime. */
  at: Date;
  anchors: Buffer[];
}

function outsideValidity(
  index: number,
  notBefore: Date,
  notAfter: Date,
  at: Date,
  name: string,
): SignerCertificateCheck | null {
  const which = index === 0 ? 'signer certificate' : `chain certificate "${name}"`;
  if (at.getTime() < notBefore.getTime()) {
    return {
      status: 'not_yet_valid',
      index,
      notBefore,
      notAfter,
      message: `The ${which} is valid only from ${notBefore.toISOString()} (judged at ${at.toISOString()})`,
    };
  }
  if (at.getTime() > notAfter.getTime()) {
    return {
      status: 'expired',
      index,
      notBefore,
      notAfter,
      message: `The ${which} expired at ${notAfter.toISOString()} (judged at ${at.toISOString()})`,
    };
  }
  return null;
}

/**
 * Judges the signer's certificate at the timestamp's time: key usage (digitalSignature or
 * nonRepudiation), validity of the signer certificate, then the path to a trust anchor and the
 * validity of every certificate on it (PKIX: each must be valid at that time). The first
 * failure is the answer, so `untrusted` means "a usable certificate, only not trusted": the
 * one result development and sandbox may accept (see untrustedSignerError).
 */
export function checkSignerCertificate(input: SignerCertificateInput): SignerCertificateCheck {
  const signerDer = input.chain[0];
  if (signerDer === undefined) {
    throw new EngineError('CERTIFICATE_CHAIN_EMPTY', 'The certificate chain is empty', {
      field: 'certificateChain',
    });
  }
  const signer = readCertificate(signerDer, 'signer certificate');
  if (
    !hasKeyUsage(signer, keyUsageBits.digitalSignature) &&
    !hasKeyUsage(signer, keyUsageBits.nonRepudiation)
  ) {
    return {
      status: 'wrong_key_usage',
      message: `The signer certificate "${subjectName(signer)}" may not sign documents (keyUsage has neither digitalSignature nor nonRepudiation)`,
    };
  }
  const own = outsideValidity(0, signer.notBefore, signer.notAfter, input.at, '');
  if (own !== null) return own;

  const built = buildChain(signerDer, input.chain.slice(1), input.anchors);
  if (!built.ok) {
    return {
      status: 'untrusted',
      reason: built.reason,
      message: built.message,
      chain: input.chain,
    };
  }
  for (const [index, der] of built.chain.entries()) {
    if (index === 0) continue;
    const facts = readCertificate(der);
    const outside = outsideValidity(
      index,
      facts.notBefore,
      facts.notAfter,
      input.at,
      subjectName(facts),
    );
    if (outside !== null) return outside;
  }
  return { status: 'valid', chain: built.chain };
}

/**
 * Reasons a chain is broken rather than merely unanchored: refused in every environment (a
 * chain for another signer or with a bad signature is a bad request, not a test setup).
 */
const brokenChain: ReadonlySet<ChainFailureReason> = new Set([
  'chain_not_ending_at_signer',
  'signature_mismatch',
  'issuer_not_ca',
  'path_too_long',
]);

/**
 * The error a finalize must refuse with for this check under the trust policy, or null to go
 * on. `untrusted` is 422 CERTIFICATE_UNTRUSTED unless the policy accepts untrusted signers (a
 * development or sandbox service: verification then reports `untrusted`). A broken chain,
 * expired, not yet valid and wrong key usage are refused under every policy.
 */
export function signerCertificateError(
  check: SignerCertificateCheck,
  policy: Pick<TrustPolicy, 'acceptUntrustedSigners'>,
): EngineError | null {
  const field = { field: 'certificateChain' };
  switch (check.status) {
    case 'valid':
      return null;
    case 'expired':
      return new EngineError('CERTIFICATE_EXPIRED', check.message, field);
    case 'not_yet_valid':
      return new EngineError('CERTIFICATE_NOT_YET_VALID', check.message, field);
    case 'wrong_key_usage':
      return new EngineError('CERTIFICATE_KEY_USAGE', check.message, field);
    case 'untrusted':
      if (brokenChain.has(check.reason)) {
        return new EngineError('CERTIFICATE_CHAIN_INVALID', check.message, field);
      }
      return policy.acceptUntrustedSigners
        ? null
        : new EngineError('CERTIFICATE_UNTRUSTED', check.message, field);
  }
}
