export * from './der';
export * from './ecdsa';
export * from './signedAttributes';
