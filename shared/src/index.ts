/**
 * What the agent and the server share. The CMS helpers (`@esign/shared/cms`) are a separate entry:
 * they load the ASN.1 libraries, which a process that never signs should not pay for at start.
 */
export * from './agentEndpoint';
export * from './agentProtocol';
export * from './agentTicket';
export * from './base64';
export * from './canonicalJson';
export * from './codedError';
export * from './displayTime';
export * from './webOrigin';
export * from './zodIssues';
