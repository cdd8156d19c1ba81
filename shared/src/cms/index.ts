export * from './algorithms';
export * from './der';
export * from './ecdsa';
export * from './oids';
export * from './signedAttributes';
export * from './signerInfo';
export * from './timestampRequest';
export * from './timestampToken';
