import { execFileSync } from 'node:child_process';
import { databaseEnv } from '../../../test/support/postgres';
import { words } from '../admin/runCli';
import { builtServerSuite, repoRoot, rowsOfDataDir } from './builtServer';

/**
 * What the built server seeds and prints on its first starts: the demo tenant only in
 * development on a new DATA_DIR, instructions for the first tenant wherever there is none.
 */

const demoCreated = 'Created demo tenant DEMO';
const noTenantYet = 'No tenant yet. Create the first one with the operator CLI';

function tenantCodes(dataDir: string): string[] {
  return rowsOfDataDir<{ code: string }>(dataDir, 'SELECT code FROM tenants ORDER BY id').map(
    (row) => row.code,
  );
}

function count(text: string, part: string): number {
  return text.split(part).length - 1;
}

describe('first start of the built server', () => {
  const { newDataDir, start } = builtServerSuite();

  async function runOnce(env: Record<string, string>): Promise<string> {
    const running = await start(env);
    const response = await fetch(`http://127.0.0.1:${running.port}/health`);
    expect(response.status).toBe(200);
    const code = await running.stop();
    expect(code).toBe(0);
    return running.stdout();
  }

  it('development on a new DATA_DIR creates the demo tenant once and says how to get a key', async () => {
    const dataDir = newDataDir();
    const first = await runOnce({ DATA_DIR: dataDir, APP_ENV: 'development' });
    expect(count(first, demoCreated)).toBe(1);
    expect(first).toContain(
      'npm run -s admin -- apikey create --tenant DEMO --org DEMO --user demo.admin',
    );
    expect(first).not.toContain(noTenantYet);
    expect(tenantCodes(dataDir)).toEqual(['DEMO']);

    const second = await runOnce({ DATA_DIR: dataDir, APP_ENV: 'development' });
    expect(second).not.toContain(demoCreated);
    expect(second).not.toContain(noTenantYet);
    expect(tenantCodes(dataDir)).toEqual(['DEMO']);
  });

  it('production starts with no tenant and prints, once, how to create the first one', async () => {
    const dataDir = newDataDir();
    const stdout = await runOnce({
      DATA_DIR: dataDir,
      APP_ENV: 'production',
      TSA_URL: 'https://tsa.example',
    });
    expect(stdout).not.toContain(demoCreated);
    expect(count(stdout, noTenantYet)).toBe(1);
    for (const command of [
      'npm run -s admin -- tenant create --code <TENANT> --name "<Tenant name>"',
      'npm run -s admin -- user create --tenant <TENANT> --username <USERNAME> --email <EMAIL> --member <TENANT>:"Quản trị"',
      'npm run -s admin -- apikey create --tenant <TENANT> --org <TENANT> --user <USERNAME>',
    ]) {
      expect(stdout).toContain(command);
    }
    // No key, token or secret of any kind in what is printed.
    expect(stdout).not.toMatch(/esk_|eyJ|secret/i);
    expect(tenantCodes(dataDir)).toEqual([]);
  });

  it('the printed commands, run with the built CLI, create a tenant that later starts find', async () => {
    const dataDir = newDataDir();
    const printed = await runOnce({
      DATA_DIR: dataDir,
      APP_ENV: 'production',
      TSA_URL: 'https://tsa.example',
    });
    const commands = printed
      .split('\n')
      .filter((line) => line.startsWith('  npm run -s admin -- '))
      .map((line) =>
        line
          .replace('  npm run -s admin -- ', '')
          .replaceAll('<TENANT>', 'ACME')
          .replace('<Tenant name>', 'Công ty ACME')
          .replace('<USERNAME>', 'acme.admin')
          .replace('<EMAIL>', 'admin@acme.example'),
      );
    expect(commands).toHaveLength(3);
    let output = '';
    for (const command of commands) {
      output = execFileSync(process.execPath, ['server/dist/cli.js', ...words(command)], {
        cwd: repoRoot,
        env: {
          PATH: process.env.PATH ?? '',
          DATA_DIR: dataDir,
          APP_ENV: 'production',
          TSA_URL: 'https://tsa.example',
          ...databaseEnv(dataDir),
        },
        encoding: 'utf8',
      });
    }
    expect(output).toMatch(/API key \(shown once/);
    expect(tenantCodes(dataDir)).toEqual(['ACME']);
    const again = await runOnce({
      DATA_DIR: dataDir,
      APP_ENV: 'production',
      TSA_URL: 'https://tsa.example',
    });
    expect(again).not.toContain(noTenantYet);
  });

  it('sandbox is seeded like production: no demo tenant', async () => {
    const dataDir = newDataDir();
    const stdout = await runOnce({ DATA_DIR: dataDir, APP_ENV: 'sandbox' });
    expect(stdout).not.toContain(demoCreated);
    expect(count(stdout, noTenantYet)).toBe(1);
    expect(tenantCodes(dataDir)).toEqual([]);
  });

  it('development on a DATA_DIR that already has a database gets no demo tenant', async () => {
    const dataDir = newDataDir();
    await runOnce({ DATA_DIR: dataDir, APP_ENV: 'production', TSA_URL: 'https://tsa.example' });
    const stdout = await runOnce({ DATA_DIR: dataDir, APP_ENV: 'development' });
    expect(stdout).not.toContain(demoCreated);
    expect(count(stdout, noTenantYet)).toBe(1);
    expect(tenantCodes(dataDir)).toEqual([]);
  });
});
