import { z } from 'zod';
import type { AppDeps } from '../context';
import { DomainError } from '../errors/domainError';
import { type SignatureVerification, verifyPdfSignatures } from '../signing/verification';
import { ExistingSignature } from './schemas';

/**
 * The signatures an uploaded PDF already carries, verified once at upload by the verification
 * engine and kept with the contract (`contracts.existing_signatures`), so that reading the
 * contract never verifies again.
 */

const ExistingSignatures = z.array(ExistingSignature);

export const existingSignatureCodes = { invalid: 'EXISTING_SIGNATURE_INVALID' } as const;

function existingOf(signature: SignatureVerification): ExistingSignature {
  return {
    fieldName: signature.fieldName,
    signerName: signature.signerName,
    signedAt: signature.signedAt,
    isValid: signature.isValid,
    integrityCheck: signature.integrityCheck,
    certificateStatus: signature.certificateStatus,
    timestampVerified: signature.timestampVerified,
    modifiedAfterSigning: signature.modifiedAfterSigning,
    certificateSubject: signature.certificate?.subject ?? null,
    problems: signature.problems,
  };
}

/**
 * Verifies the signatures of an uploaded PDF that has some, for the caller's tenant (its trust
 * anchors). One that is not valid refuses the upload with 422 EXISTING_SIGNATURE_INVALID
 * (`details.field` `file`), unless the caller accepted invalid signatures explicitly.
 */
export async function verifyExistingSignatures(
  deps: AppDeps,
  pdfPath: string,
  options: { tenantId: number; acceptInvalid: boolean },
): Promise<ExistingSignature[]> {
  const verification = await verifyPdfSignatures(deps, pdfPath, { tenantId: options.tenantId });
  const existing = verification.signatures.map(existingOf);
  const failed = existing.filter((signature) => !signature.isValid);
  if (failed.length > 0 && !options.acceptInvalid) {
    const reasons = failed
      .map((signature) => `${signature.fieldName}: ${signature.problems[0] ?? 'not valid'}`)
      .join('; ');
    throw new DomainError(
      existingSignatureCodes.invalid,
      `The PDF carries ${failed.length === 1 ? 'a signature that is' : `${failed.length} signatures that are`} not valid (${reasons}); send acceptInvalidSignatures=true to upload it anyway`,
      { field: 'file' },
    );
  }
  return existing;
}

/** The column's JSON, read back. */
export function existingSignaturesOf(json: string): ExistingSignature[] {
  return ExistingSignatures.parse(JSON.parse(json));
}
