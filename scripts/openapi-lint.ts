/**
 * `npm run check` step: the OpenAPI document the server serves passes `redocly lint` (recommended
 * rules, plus redocly.yaml) with no error and no warning, so a partner can generate a client.
 *
 * Builds the app exactly as the server does, on a throw-away data directory and with no socket,
 * asks it for `/api/openapi.json`, writes that to a temp file and lints it offline (telemetry and
 * the update check off). Everything temporary is removed, whatever happens.
 *
 * `--write <file>` also keeps a copy of the document (for a look, or a client generator).
 */
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { buildApp } from '../server/src/app';
import { loadConfig } from '../server/src/platform/config';
import { createLogger } from '../server/src/platform/logger';
import { openRuntime } from '../server/src/runtime';

const root = path.resolve(__dirname, '..');

async function openApiDocument(dataDir: string): Promise<string> {
  const config = loadConfig({ DATA_DIR: dataDir, APP_ENV: 'development', LOG_LEVEL: 'silent' });
  const runtime = openRuntime(config, { logger: createLogger('silent') });
  try {
    const response = await buildApp(runtime.deps).request('/api/openapi.json');
    if (response.status !== 200) throw new Error(`/api/openapi.json answered ${response.status}`);
    return JSON.stringify(await response.json(), null, 2);
  } finally {
    await runtime.database.close();
  }
}

interface LintReport {
  totals: { errors: number; warnings: number };
  problems: {
    ruleId: string;
    severity: string;
    message: string;
    location: { pointer?: string }[];
  }[];
}

function lintReport(stdout: string): LintReport | null {
  try {
    const report = JSON.parse(stdout) as LintReport;
    return typeof report.totals?.errors === 'number' ? report : null;
  } catch {
    return null;
  }
}

async function main(): Promise<number> {
  const workDir = fs.mkdtempSync(path.join(os.tmpdir(), 'esign-openapi-'));
  try {
    const documentFile = path.join(workDir, 'openapi.json');
    fs.writeFileSync(documentFile, await openApiDocument(path.join(workDir, 'data')));
    const keep = process.argv.indexOf('--write');
    if (keep !== -1 && process.argv[keep + 1])
      fs.copyFileSync(documentFile, process.argv[keep + 1]!);
    const lint = spawnSync(
      path.join(root, 'node_modules/.bin/redocly'),
      [
        'lint',
        documentFile,
        '--extends',
        'recommended',
        '--config',
        path.join(root, 'redocly.yaml'),
        '--max-problems',
        '1000',
        '--format',
        'json',
      ],
      {
        cwd: workDir,
        encoding: 'utf8',
        env: { ...process.env, REDOCLY_TELEMETRY: 'off', REDOCLY_SUPPRESS_UPDATE_NOTICE: 'true' },
      },
    );
    const report = lintReport(lint.stdout);
    if (!report) {
      process.stderr.write(`${lint.stdout}${lint.stderr}openapi: redocly lint did not run\n`);
      return 1;
    }
    // Redocly exits 0 on warnings; the check wants none of either.
    if (report.totals.errors > 0 || report.totals.warnings > 0) {
      for (const problem of report.problems) {
        const pointer = problem.location[0]?.pointer ?? '';
        process.stderr.write(
          `${problem.severity} ${problem.ruleId} ${pointer}: ${problem.message}\n`,
        );
      }
      process.stderr.write(
        `openapi: redocly lint found ${report.totals.errors} errors and ${report.totals.warnings} warnings\n`,
      );
      return 1;
    }
    process.stdout.write('openapi: redocly lint (recommended) clean, 0 errors, 0 warnings\n');
    return 0;
  } finally {
    fs.rmSync(workDir, { recursive: true, force: true });
  }
}

main().then(
  (code) => process.exit(code),
  (error: unknown) => {
    process.stderr.write(`openapi: ${error instanceof Error ? error.stack : String(error)}\n`);
    process.exit(1);
  },
);
