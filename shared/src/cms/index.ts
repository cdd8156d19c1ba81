export * from './der';
export * from './signedAttributes';
