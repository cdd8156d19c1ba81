import type { AppDeps } from '../context';
import { type ContractCaller, contractInScope } from '../contracts/access';
import { existingSignaturesOf } from '../contracts/existingSignatures';
import { type ContractRow, fileVersion, signedVersionsOf, signersOf } from '../contracts/queries';
import { DomainError } from '../errors/domainError';
import { signedSummaries } from '../signatures';
import type { IdentityBinding } from '../signing/certificates/identity';
import { verifyPdfSignatures } from '../signing/verification';

/**
 * Whether the signature was tied to the contract signer when it was made: the certificate alone
 * cannot say whom the contract expected, so this is the service's record of its comparison
 * (`unknown` for a signature it did not make, or made before identities were compared).
 */
function identityOf(binding: IdentityBinding | undefined): IdentityBinding | { status: 'unknown' } {
  return binding ?? { status: 'unknown' };
}

/**
 * GET /api/signing/verify/{contractId}: the engine's verification of the newest signed version.
 * Each signature is named by the contract signer whose version added it (the seal signs for
 * otp_sms and image_signature, so the certificate alone would name the service); the
 * certificate's subject is given beside, with the kinds of identifiers it carries, and whether
 * the service found it naming the signer (`identity`, from its record of the signature). 404 CONTRACT_NOT_SIGNED before the first signature.
 */
export async function verifyContract(deps: AppDeps, caller: ContractCaller, contractId: string) {
  return verifyContractRow(deps, await contractInScope(deps, caller, contractId));
}

/** The verification of a contract already found (the signing page shows its signer the same). */
export async function verifyContractRow(deps: AppDeps, contract: ContractRow) {
  const newest = await fileVersion(deps.db, contract.id, 'newest');
  if (!newest || newest.version === 1) {
    throw new DomainError('CONTRACT_NOT_SIGNED', 'The contract has no signature yet', {
      field: 'contractId',
    });
  }
  const [signers, versions] = await Promise.all([
    signersOf(deps.db, contract.id),
    signedVersionsOf(deps.db, contract.id),
  ]);
  const verification = await deps.files.withLocalFile(newest.sha256, (file) =>
    verifyPdfSignatures(deps, file, { tenantId: contract.tenant_id }),
  );
  // Signatures the uploaded PDF already carried come first and name no contract signer.
  const existing = new Set(
    existingSignaturesOf(contract.existing_signatures).map((s) => s.fieldName),
  );
  let ours = 0;
  const summaries = await signedSummaries(
    deps,
    contract.tenant_id,
    versions.map((version) => version.sha256),
  );
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
        subFilter: signature.subFilter,
        level: signature.level,
        coversWholeDocument: signature.coversWholeDocument,
        modifiedAfterSigning: signature.modifiedAfterSigning,
        certificate: signature.certificate,
        problems: signature.problems,
        changes: signature.changes,
        identity: identityOf(version && summaries.get(version.sha256)?.identity),
      };
    }),
  };
}
