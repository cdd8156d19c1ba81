import type { AppDeps } from '../context';
import { type ContractCaller, contractInScope } from '../contracts/access';
import { existingSignaturesOf } from '../contracts/existingSignatures';
import { fileVersion, signedVersionsOf, signersOf } from '../contracts/queries';
import { ApiError } from '../errors/apiError';
import { verifyPdfSignatures } from '../signing/verification';

/**
 * GET /api/signing/verify/{contractId}: the engine's verification of the newest signed version.
 * Each signature is named by the contract signer whose version added it (the seal signs for
 * otp_sms and image_signature, so the certificate alone would name the service); the
 * certificate's subject is given beside. 404 CONTRACT_NOT_SIGNED before the first signature.
 */
export async function verifyContract(deps: AppDeps, caller: ContractCaller, contractId: string) {
  const contract = await contractInScope(deps, caller, contractId);
  const newest = await fileVersion(deps.db, contract.id, 'newest');
  if (!newest || newest.version === 1) {
    throw new ApiError(404, 'CONTRACT_NOT_SIGNED', 'The contract has no signature yet', {
      field: 'contractId',
    });
  }
  const [signers, versions] = await Promise.all([
    signersOf(deps.db, contract.id),
    signedVersionsOf(deps.db, contract.id),
  ]);
  const verification = await verifyPdfSignatures(deps, deps.files.pathOf(newest.sha256), {
    tenantId: contract.tenant_id,
  });
  // Signatures the uploaded PDF already carried come first and name no contract signer.
  const existing = new Set(
    existingSignaturesOf(contract.existing_signatures).map((s) => s.fieldName),
  );
  let ours = 0;
  return {
    isValid: verification.isValid,
    signatures: verification.signatures.map((signature) => {
      const version = existing.has(signature.fieldName) ? undefined : versions[ours++];
      const signer = version && signers.find((s) => s.id === version.signer_id);
      return {
        signerName: signer?.name ?? signature.signerName,
        signerEmail: signer?.email ?? null,
        signedAt: signature.signedAt,
        isValid: signature.isValid,
        integrityCheck: signature.integrityCheck,
        certificateStatus: signature.certificateStatus,
        timestampVerified: signature.timestampVerified,
        fieldName: signature.fieldName,
        level: signature.level,
        coversWholeDocument: signature.coversWholeDocument,
        modifiedAfterSigning: signature.modifiedAfterSigning,
        certificate: signature.certificate,
        problems: signature.problems,
        changes: signature.changes,
      };
    }),
  };
}
