export * from './agentProtocol';
export * from './base64';
export * from './canonicalJson';
export * from './zodIssues';
