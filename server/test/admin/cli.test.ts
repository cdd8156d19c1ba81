import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { runCli } from './runCli';

jest.setTimeout(120_000);

describe('admin CLI: synopsis, exit codes and output', () => {
  let dataDir: string;
  beforeAll(() => {
    dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'esign-cli-'));
  });
  afterAll(() => fs.rmSync(dataDir, { recursive: true, force: true }));

  it('prints the synopsis for help and --help, exit 0', async () => {
    for (const args of ['help', '--help', 'apikey create --help']) {
      const result = await runCli(dataDir, args);
      expect(result.code).toBe(0);
      expect(result.stdout).toContain(
        'admin apikey create  --global [--user U] [--expires ISO]            # global key, printed once',
      );
      expect(result.stdout).toContain(
        'admin domain add     --tenant T --origin https://partner.example',
      );
    }
  });

  it('refuses bad arguments with a message on stderr and exit 2, before opening the database', async () => {
    const fresh = path.join(dataDir, 'never-created');
    const cases: [string, RegExp][] = [
      ['', /no command given/],
      ['tenant frob', /unknown command "tenant frob"; tenant has: tenant create/],
      ['tenant create --code X', /tenant create: --name is required/],
      ['tenant create --code X --name N --bogus', /Unknown option '--bogus'/],
      ['tenant create --code "A B" --name N', /--code must be 1 to 64 characters/],
      ['org create --tenant T --code C --name ""', /--name must not be empty/],
      [
        'role create --tenant T --org T --name R --permissions user:fly',
        /unknown permission\(s\) user:fly/,
      ],
      ['apikey revoke --id abc', /--id must be a positive integer/],
      ['apikey create --global --tenant T', /--tenant cannot be used with --global/],
      ['apikey create --global --expires 2001-01-01', /is not in the future/],
      ['apikey create --global --expires tomorrow', /expires must be an ISO 8601/],
      ['apikey create --global --expires 2099-02-30', /expires must be an ISO 8601/],
      ['webhook create --tenant T --org T --url http://hooks.example', /url must use https/],
      [
        'webhook create --tenant T --org T --url https://h.example --events document.signer_signed',
        /Unknown event\(s\): document.signer_signed/,
      ],
      ['domain add --tenant T --origin https://partner.example/embed', /must be a bare origin/],
      [
        'domain add --tenant T --origin http://partner.example',
        /must use https \(http only for localhost\)/,
      ],
      [
        'user create --super-admin --tenant T --username u --email e@x.example --password p',
        /--tenant cannot be used with --super-admin/,
      ],
    ];
    const results = await Promise.all(cases.map(([args]) => runCli(fresh, args)));
    cases.forEach(([args, message], index) => {
      const result = results[index]!;
      expect({ args, code: result.code }).toEqual({ args, code: 2 });
      expect(result.stderr).toMatch(message);
      expect(result.stdout).toBe('');
    });
    expect(fs.existsSync(fresh)).toBe(false);
  });

  it('with --json, a bad argument is still exactly one JSON object on stdout', async () => {
    const result = await runCli(dataDir, 'tenant create --code X --json');
    expect(result.code).toBe(2);
    expect(result.json()).toEqual({
      error: { code: 'BAD_ARGUMENTS', message: 'tenant create: --name is required' },
    });
    expect(result.stderr).toMatch(/--name is required/);
  });

  it('answers a domain error with its code on stderr, the error object with --json, exit 1', async () => {
    const human = await runCli(dataDir, 'org create --tenant NOPE --code C --name N');
    expect(human.code).toBe(1);
    expect(human.stderr).toBe('admin: TENANT_CODE_NOT_FOUND: No tenant with code NOPE\n');
    expect(human.stdout).toBe('');

    await runCli(dataDir, 'tenant create --code ACME --name Acme');
    const json = await runCli(
      dataDir,
      'org create --tenant ACME --code C --name N --parent GHOST --json',
    );
    expect(json.code).toBe(1);
    expect(json.json()).toEqual({
      error: {
        code: 'ORGANIZATION_CODE_NOT_FOUND',
        message: 'No organization GHOST in the tenant',
      },
    });
  });
});
