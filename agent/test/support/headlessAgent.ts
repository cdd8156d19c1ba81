import { type ChildProcess, spawn } from 'node:child_process';
import path from 'node:path';
import readline from 'node:readline';
import type { AgentMessage } from '@esign/shared';
import WebSocket from 'ws';
import { appendRunLog } from '../../../test/support/runLog';

const repoRoot = path.resolve(__dirname, '../../..');

/**
 * `agent/src/main.ts --headless --policy FILE` in a child process (jest gives a test file only a
 * copy of the environment, so SOFTHSM2_CONF and the PIN variables go in `env`); its log lines as
 * they come, its port once it listens.
 */
export class HeadlessAgent {
  readonly log: string[] = [];
  readonly port: Promise<number>;
  private readonly child: ChildProcess;

  constructor(policyFile: string, env: Record<string, string>) {
    this.child = spawn(
      process.execPath,
      ['--import', 'tsx', 'agent/src/main.ts', '--headless', '--policy', policyFile],
      { cwd: repoRoot, env: { ...process.env, ...env } },
    );
    readline.createInterface({ input: this.child.stderr! }).on('line', (line) => {
      this.log.push(line);
      // The agent's log joins the jest run's, checked for the credentials the run was issued.
      appendRunLog('agent', `${line}\n`);
    });
    this.port = new Promise((resolve, reject) => {
      readline.createInterface({ input: this.child.stdout! }).on('line', (line) => {
        const port = /ws:\/\/127\.0\.0\.1:(\d+)/.exec(line)?.[1];
        if (port) resolve(Number(port));
      });
      this.child.once('exit', (code) =>
        reject(new Error(`exited ${code}: ${this.log.join('\n')}`)),
      );
    });
    // Awaited later, or never when a test only reads the log: not an unhandled rejection.
    this.port.catch(() => undefined);
  }

  async stop(): Promise<void> {
    if (this.child.exitCode !== null) return;
    const exited = new Promise((resolve) => this.child.once('exit', resolve));
    this.child.kill('SIGTERM');
    await exited;
  }
}

/**
 * A page's socket to the agent: sends the requests in turn; each answer is the message with its
 * id, or a push without one (pushes are not answers, but an unsolicited error ends the talk).
 * Stops after a refused first request.
 */
export async function askAgent(
  port: number,
  origin: string,
  requests: Record<string, unknown>[],
): Promise<AgentMessage[]> {
  const socket = new WebSocket(`ws://127.0.0.1:${port}`, { origin });
  const inbox: AgentMessage[] = [];
  const waiting: (() => void)[] = [];
  socket.on('message', (data) => {
    inbox.push(JSON.parse(data.toString()) as AgentMessage);
    waiting.shift()?.();
  });
  await new Promise((resolve, reject) => socket.once('open', resolve).once('error', reject));
  const answerTo = async (id: string): Promise<AgentMessage> => {
    for (;;) {
      const found = inbox.findIndex((message) => message.id === id || message.id === null);
      if (found >= 0) return inbox.splice(found, 1)[0]!;
      await new Promise<void>((resolve) => waiting.push(resolve));
    }
  };
  const answers: AgentMessage[] = [];
  for (const [index, request] of requests.entries()) {
    socket.send(JSON.stringify({ id: `h${index}`, ...request }));
    answers.push(await answerTo(`h${index}`));
    if (answers.at(-1)?.type === 'error' && index === 0) break;
  }
  socket.close();
  return answers;
}
