/** Certificate checks for signing and verification: path, signer certificate, revocation. */
export { buildChain, type ChainFailureReason, type ChainResult } from './chain';
export {
  type ChainRevocation,
  checkChainRevocation,
  checkRevocation,
  type RevocationDeps,
  type RevocationOptions,
  type RevocationResult,
  type RevocationStatus,
} from './revocation';
export { RevocationCache } from './revocationCache';
export {
  checkSignerCertificate,
  type SignerCertificateCheck,
  type SignerCertificateInput,
  signerCertificateError,
} from './signerCheck';
