/**
 * `npm run agent:build`: what electron-builder.yml packages must exist after it, and the core
 * must load under plain Node. electron-builder itself cannot run here (it downloads Electron).
 */
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { parse } from 'yaml';

const root = path.resolve(__dirname, '../..');
const agent = path.join(root, 'agent');

interface FileSet {
  from: string;
  to: string;
  filter?: string[];
}

interface BuilderConfig {
  directories: { app: string };
  files: string[];
  extraMetadata: { main: string };
  extraResources: FileSet[];
}

beforeAll(() => {
  const result = spawnSync('npm', ['run', '-s', 'agent:build'], { cwd: root, encoding: 'utf8' });
  if (result.status !== 0) throw new Error(`agent:build failed: ${result.stderr}`);
}, 60_000);

describe('agent build', () => {
  it('writes the Electron main and preload, the renderer page and the core to agent/dist', () => {
    for (const file of [
      'electron/main.js',
      'electron/preload.js',
      'renderer/window.html',
      'renderer/window.js',
      'renderer/window.css',
      'core/index.js',
    ]) {
      expect(fs.existsSync(path.join(agent, 'dist', file))).toBe(true);
    }
  });

  it('builds a core that loads under plain Node, without Electron', () => {
    const result = spawnSync(
      process.execPath,
      [
        '-e',
        "const core = require('./agent/dist/core'); process.stdout.write(typeof core.startAgentCore)",
      ],
      { cwd: root, encoding: 'utf8' },
    );
    expect(result.stderr).toBe('');
    expect(result.stdout).toBe('function');
  });

  it('leaves nothing electron-builder.yml names missing', () => {
    const config = parse(
      fs.readFileSync(path.join(root, 'electron-builder.yml'), 'utf8'),
    ) as BuilderConfig;
    const app = path.join(root, config.directories.app);
    expect(fs.existsSync(path.join(app, config.extraMetadata.main))).toBe(true);
    // `files` are globs relative to the app folder; each positive one must match something.
    for (const pattern of config.files.filter((entry) => !entry.startsWith('!'))) {
      const folder = pattern.replace(/\/?\*.*$/, '');
      expect(fs.existsSync(path.join(app, folder))).toBe(true);
    }
    // extraResources are relative to the project folder; the bundled CAs are what main.ts reads.
    expect(config.extraResources).toContainEqual(
      expect.objectContaining({ from: 'agent/resources/intermediates', to: 'intermediates' }),
    );
    for (const resource of config.extraResources) {
      const names = fs.readdirSync(path.join(root, resource.from));
      expect(names.filter((name) => name.endsWith('.pem')).length).toBeGreaterThan(0);
    }
  });
});
