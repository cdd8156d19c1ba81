export * from './algorithms';
export * from './der';
export * from './ecdsa';
export * from './nonce';
export * from './signedAttributes';
export * from './signerInfo';
