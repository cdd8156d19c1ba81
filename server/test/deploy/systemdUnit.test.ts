import fs from 'node:fs';
import path from 'node:path';
import { attempt, tempDir } from '../../../test/support/tools';
import { repoRoot } from '../startup/builtServer';

/**
 * deploy/esign.service as systemd reads it: `systemd-analyze verify` finds nothing to say
 * (a warning is a failure too: systemd ignores a misspelt or unparsable hardening line and
 * carries on), and `systemd-analyze security --offline` rates it at most 2.0 ("OK"). Neither
 * needs systemd running as PID 1, so this runs in a container. verify checks that ExecStart's
 * program exists: where Node is not /usr/bin/node (an official Node image), the copy verified
 * names the Node running this test instead; nothing else is changed.
 */

const deployDir = path.join(repoRoot, 'deploy');
const unitFile = path.join(deployDir, 'esign.service');
const unitNode = '/usr/bin/node';

let work: { dir: string; remove(): void };
beforeAll(() => {
  work = tempDir('esign-unit-');
});
afterAll(() => work.remove());

/** A unit of deploy/ (with `edit` applied) written under its name in a fresh folder; its path. */
function unitCopy(edit: (text: string) => string = (text) => text, name = 'esign.service'): string {
  const dir = fs.mkdtempSync(path.join(work.dir, 'unit-'));
  let text = fs.readFileSync(path.join(deployDir, name), 'utf8');
  if (!fs.existsSync(unitNode)) text = text.replaceAll(`${unitNode} `, `${process.execPath} `);
  const file = path.join(dir, name);
  fs.writeFileSync(file, edit(text));
  return file;
}

function verify(...files: string[]) {
  return attempt('systemd-analyze', ['verify', ...files], { SYSTEMD_LOG_COLOR: '0' });
}

describe('deploy/esign.service', () => {
  it('passes systemd-analyze verify without a word', () => {
    expect(verify(unitCopy())).toEqual({ status: 0, output: '' });
  });

  it('the daily backup (esign-backup.service and its timer) passes too', () => {
    const service = unitCopy(undefined, 'esign-backup.service');
    const timer = path.join(path.dirname(service), 'esign-backup.timer');
    fs.copyFileSync(path.join(deployDir, 'esign-backup.timer'), timer);
    expect(verify(service, timer)).toEqual({ status: 0, output: '' });
  });

  it('is hardened as the deployment guide says', () => {
    const text = fs.readFileSync(unitFile, 'utf8');
    for (const line of [
      'User=esign',
      'ProtectSystem=strict',
      'ReadWritePaths=/var/lib/esign',
      'Environment=DATA_DIR=/var/lib/esign',
      'NoNewPrivileges=yes',
      'PrivateTmp=yes',
      'ProtectHome=yes',
      'CapabilityBoundingSet=',
      'EnvironmentFile=/etc/esign/env',
    ]) {
      expect(text.split('\n')).toContain(line);
    }
    const security = attempt('systemd-analyze', [
      'security',
      '--offline=yes',
      '--threshold=20',
      unitCopy(),
    ]);
    expect(security.output).toMatch(/Overall exposure level for esign\.service: (0|1)\.\d/);
    expect(security.status).toBe(0);
  });

  it('the check sees what systemd would ignore: a misspelt key, a bad value, a missing program', () => {
    const misspelt = verify(
      unitCopy((text) => text.replace('NoNewPrivileges=', 'NoNewPrivilege=')),
    );
    expect(misspelt.output).toContain("Unknown key 'NoNewPrivilege'");
    const badValue = verify(
      unitCopy((text) => text.replace('ProtectSystem=strict', 'ProtectSystem=tight')),
    );
    expect(badValue.output).toContain('tight');
    const missing = verify(
      unitCopy((text) => text.replace(/^ExecStart=\S+/m, 'ExecStart=/nonexistent/node')),
    );
    expect(missing.status).not.toBe(0);
    expect(missing.output).toContain('/nonexistent/node');
  });
});
