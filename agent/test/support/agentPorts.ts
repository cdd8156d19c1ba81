import { execFileSync } from 'node:child_process';
import { AGENT_PORTS, agentProbeUrl } from '@esign/shared';

export type AgentPortState = 'free' | 'agent' | 'other';

/**
 * What holds each of the agent's loopback ports right now: nothing, an ESign Agent (it answers
 * the discovery probe), or another program. Synchronous (a child process), so that a test file
 * can decide at load time whether it can run: a page finds the first agent in port order.
 */
export function agentPortStates(): Map<number, AgentPortState> {
  const script = `
    const net = require('node:net');
    const state = async (port, url) => {
      const free = await new Promise((resolve) => {
        const server = net.createServer().once('error', () => resolve(false));
        server.listen(port, '127.0.0.1', () => server.close(() => resolve(true)));
      });
      if (free) return 'free';
      try {
        const answer = await fetch(url, { signal: AbortSignal.timeout(2000) });
        return (await answer.json()).name === 'ESign Agent' ? 'agent' : 'other';
      } catch {
        return 'other';
      }
    };
    const ports = ${JSON.stringify(AGENT_PORTS.map((port) => [port, agentProbeUrl(port)]))};
    Promise.all(ports.map(([port, url]) => state(port, url))).then((states) =>
      process.stdout.write(JSON.stringify(states)));
  `;
  const states = JSON.parse(
    execFileSync(process.execPath, ['-e', script], { encoding: 'utf8', timeout: 20_000 }),
  ) as AgentPortState[];
  return new Map(AGENT_PORTS.map((port, index) => [port, states[index] ?? 'other']));
}

/**
 * The port a test agent should take so that a page probing in order finds it (the first free
 * one), or why there is none: all taken, or an ESign Agent before it that the page would find.
 */
export function agentPortForPages(): { port: number } | { unavailable: string } {
  const states = agentPortStates();
  for (const port of AGENT_PORTS) {
    const state = states.get(port);
    if (state === 'free') return { port };
    if (state === 'agent') {
      return {
        unavailable: `an ESign Agent already listens on 127.0.0.1:${port}; a page would find it before ours`,
      };
    }
  }
  return {
    unavailable: `the agent's ports ${AGENT_PORTS.join(', ')} are all taken by other programs`,
  };
}
