/**
 * The Electron main process's part, played under plain Node for the browser tests: the core
 * (in this child process, for SOFTHSM2_CONF) with the shell's windowPrompts and SettingsService,
 * and one HTTP server on 127.0.0.1 that serves the built renderer and a bridge standing in for
 * the preload's IPC: POST /bridge {window, method, arg}. Opening a window is a JSON line on
 * stdout, {event:'window', id, request}; the test opens that page in Chromium.
 * Usage: node --import tsx shellHarness.ts <json {settingsFile, rendererDir, intermediateFolders}>
 */
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import readline from 'node:readline';
import { currentHost, loadSettings, saveSettings, startAgentCore } from '../../src/core';
import type { PromptAnswer, WindowRequest } from '../../src/shell/api';
import { windowPrompts } from '../../src/shell/promptWindows';
import { SettingsService } from '../../src/shell/settingsService';

interface Args {
  settingsFile: string;
  rendererDir: string;
  intermediateFolders: string[];
}

const args = JSON.parse(process.argv[2] ?? '{}') as Args;
const report = (event: Record<string, unknown>) =>
  process.stdout.write(`${JSON.stringify(event)}\n`);
const types: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
};

async function main() {
  const host = currentHost();
  const settings = await loadSettings(args.settingsFile, host);
  const save = (changed: typeof settings) => saveSettings(args.settingsFile, changed);
  const windows = new Map<
    string,
    { request: WindowRequest; settle?(answer: PromptAnswer): void }
  >();
  let counter = 0;
  const core = await startAgentCore({
    settings,
    save,
    prompts: windowPrompts(
      (request) =>
        new Promise((resolve) => {
          const id = `w${++counter}`;
          windows.set(id, {
            request,
            settle: (answer) => {
              windows.delete(id);
              resolve(answer);
            },
          });
          report({ event: 'window', id, request });
        }),
      () => settings.language,
    ),
    intermediateFolders: args.intermediateFolders,
    version: '0.1.0-test',
    ports: [0],
    log: (message) => process.stderr.write(`agent: ${message}\n`),
  });
  const service = new SettingsService({ settings, save, core, host, version: '0.1.0-test' });
  windows.set('settings', { request: { kind: 'settings', language: settings.language } });

  const bridge = async (body: { window: string; method: string; arg?: unknown }) => {
    const entry = windows.get(body.window);
    if (!entry) throw new Error(`no window ${body.window}`);
    switch (body.method) {
      case 'request':
        return entry.request.kind === 'settings'
          ? { kind: 'settings', language: settings.language }
          : entry.request;
      case 'answer':
        entry.settle?.(body.arg as PromptAnswer);
        return null;
      case 'settings':
        return service.view();
      case 'changeSettings':
        return service.change(body.arg);
      case 'testModule':
        return service.testModule(body.arg);
      default:
        throw new Error(`no method ${body.method}`);
    }
  };

  const server = http.createServer((request, response) => {
    if (request.method === 'POST' && request.url === '/bridge') {
      const chunks: Buffer[] = [];
      request.on('data', (chunk: Buffer) => chunks.push(chunk));
      request.on('end', () => {
        bridge(JSON.parse(Buffer.concat(chunks).toString('utf8')))
          .then((result) => {
            response.writeHead(200, { 'Content-Type': 'application/json' });
            response.end(JSON.stringify(result ?? null));
          })
          .catch((error: unknown) => response.writeHead(500).end(String(error)));
      });
      return;
    }
    const file = path.join(args.rendererDir, path.basename(request.url ?? '/'));
    if (!fs.existsSync(file)) {
      response.writeHead(404).end();
      return;
    }
    response.writeHead(200, { 'Content-Type': types[path.extname(file)] ?? 'text/plain' });
    response.end(fs.readFileSync(file));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  report({ event: 'ready', port: core.port, pages: (server.address() as AddressInfo).port });
  for await (const _ of readline.createInterface({ input: process.stdin })) {
    // The end of stdin is the stop signal.
  }
  server.close();
  await core.close();
  process.exit(0);
}

void main();
