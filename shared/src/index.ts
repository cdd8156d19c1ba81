export * from './agentProtocol';
export * from './base64';
export * from './canonicalJson';
export * from './cms';
export * from './zodIssues';
