export type { SignatureAlgorithm } from './algorithms';
export { cmsErrors, fromSignedAttributesError } from './errors';
export type { SignedAttributeValues, SigningCertificateReference } from './signedAttributeValues';
export { readSignedAttributes, signingCertificateMatches } from './signedAttributeValues';
export type { ParsedSignedData, SignedDataInput, SignerIdentifier } from './signedData';
export { assembleSignedData, parseSignedData } from './signedData';
export type { RawSignatureInput, RsaScheme, VerifiedSignature } from './verifyRawSignature';
export { verifyRawSignature } from './verifyRawSignature';
