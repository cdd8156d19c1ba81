/**
 * Where a page finds the desktop agent: the loopback host, the ports in the order a page probes
 * them, the protocol versions, and the URLs and Content-Security-Policy sources they make. No
 * zod and no Node here: the signing page's browser bundle imports this file
 * (`@esign/shared/agentEndpoint`), the agent listens by it and the server's CSP is made from it.
 */

/** The agent listens on loopback only; this is not a setting. */
export const AGENT_HOST = '127.0.0.1';
/** The loopback port the agent listens on unless its settings say otherwise. */
export const AGENT_DEFAULT_PORT = 17891;
/**
 * Where a page looks for the agent, in order: the default port, then the two the agent falls
 * back to when another program holds the default one.
 */
export const AGENT_PORTS: readonly number[] = [AGENT_DEFAULT_PORT, 17892, 17893];

/** The protocol version this code speaks. */
export const AGENT_PROTOCOL_VERSION = 1;
/** Every version this code can speak, oldest first. */
export const SUPPORTED_AGENT_PROTOCOL_VERSIONS: readonly number[] = [AGENT_PROTOCOL_VERSION];

/** The discovery probe's URL on one port (`GET` answers `AgentDiscovery`). */
export function agentProbeUrl(port: number): string {
  return `http://${AGENT_HOST}:${port}/`;
}

/** The WebSocket's URL on one port. */
export function agentSocketUrl(port: number): string {
  return `ws://${AGENT_HOST}:${port}`;
}

/**
 * What a page's `connect-src` must allow to reach the agent, and nothing more: the probe
 * (`http:`) and the socket (`ws:`) on each of `AGENT_PORTS`.
 */
export function agentConnectSources(): string[] {
  const origins = (scheme: 'http' | 'ws') =>
    AGENT_PORTS.map((port) => `${scheme}://${AGENT_HOST}:${port}`);
  return [...origins('http'), ...origins('ws')];
}
