export type { SignatureAlgorithm } from './algorithms';
export { cmsErrors, fromSignedAttributesError } from './errors';
export type { ParsedSignedData, SignedDataInput, SignerIdentifier } from './signedData';
export { assembleSignedData, parseSignedData } from './signedData';
export type { RawSignatureInput, RsaScheme, VerifiedSignature } from './verifyRawSignature';
export { verifyRawSignature } from './verifyRawSignature';
