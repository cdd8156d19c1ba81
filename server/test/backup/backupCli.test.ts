import fs from 'node:fs';
import path from 'node:path';
import { tempDir } from '../../../test/support/tools';
import { registerTemplate } from '../../src/templates/service';
import { runCli } from '../admin/runCli';
import { createHarness, type Harness, seedTenant } from '../support/harness';
import { exampleTemplateFile } from '../templates/fixtures';

/**
 * `admin backup` and `admin restore` refusing what they must, through the real CLI: the
 * backup's target, a restore's target, a manifest that is not one, a path that leaves the
 * backup, a symbolic link, a missing file; and a restore next to the master.key it keeps.
 */

jest.setTimeout(180_000);

interface Failure {
  error: { code: string; message: string };
}

let h: Harness;
let work: { dir: string; remove(): void };
let backup: string;
const templateSha = { value: '' };

beforeAll(async () => {
  h = createHarness();
  work = tempDir('esign-backup-cli-');
  const acme = await seedTenant(h, 'ACME');
  const tenant = await h.deps.db
    .selectFrom('tenants')
    .selectAll()
    .where('id', '=', acme.tenantId)
    .executeTakeFirstOrThrow();
  const { template } = await registerTemplate(h.deps, tenant, 'ACME', {
    code: 'HD',
    name: 'Mẫu',
    pdfPath: exampleTemplateFile,
  });
  templateSha.value = template.sha256;
  backup = path.join(work.dir, 'backup');
  const made = await runCli(h.dataDir, ['backup', '--out', backup, '--json']);
  expect(made.code).toBe(0);
  // The harness's master.key: the service uses it (no SECRET_KEY), so the backup says to keep it.
  expect(made.stderr).toContain('master.key, which is not in the backup');
  expect(made.json()).toMatchObject({
    storedFiles: 1,
    missingFiles: [],
    masterKeyFile: path.join(h.dataDir, 'master.key'),
  });
});

afterAll(async () => {
  await h.close();
  work.remove();
});

/** A copy of the good backup, changed by `edit`, to restore from. */
function variant(name: string, edit: (dir: string) => void): string {
  const dir = path.join(work.dir, name);
  fs.cpSync(backup, dir, { recursive: true });
  edit(dir);
  return dir;
}

function editManifest(dir: string, edit: (manifest: Record<string, unknown>) => void): void {
  const file = path.join(dir, 'manifest.json');
  const manifest = JSON.parse(fs.readFileSync(file, 'utf8')) as Record<string, unknown>;
  edit(manifest);
  fs.writeFileSync(file, JSON.stringify(manifest));
}

async function restoreRefusal(from: string): Promise<Failure['error']> {
  const target = path.join(work.dir, `target-${path.basename(from)}`);
  const result = await runCli(target, ['restore', '--from', from, '--json']);
  expect(result.code).toBe(1);
  // Nothing was created: neither the target nor a temp directory beside it.
  expect(fs.existsSync(target)).toBe(false);
  expect(fs.readdirSync(work.dir).filter((name) => name.includes('.staging-'))).toEqual([]);
  return result.json<Failure>().error;
}

describe('admin backup', () => {
  it('refuses a target that is not empty or overlaps DATA_DIR, and a DATA_DIR without a database', async () => {
    const full = await runCli(h.dataDir, ['backup', '--out', backup, '--json']);
    expect(full.code).toBe(1);
    expect(full.json<Failure>().error.code).toBe('BACKUP_TARGET_REFUSED');
    const inside = await runCli(h.dataDir, ['backup', '--out', path.join(h.dataDir, 'b')]);
    expect(inside.code).toBe(1);
    expect(inside.stderr).toContain('BACKUP_TARGET_REFUSED');
    const nowhere = path.join(work.dir, 'no-data');
    const missing = await runCli(nowhere, ['backup', '--out', path.join(work.dir, 'b2'), '--json']);
    expect(missing.json<Failure>().error.code).toBe('BACKUP_SOURCE_MISSING');
    // The backup opened nothing: no database, no master key was created there.
    expect(fs.existsSync(nowhere)).toBe(false);
    // An empty directory that exists (a mounted volume) is fine: the backup is put inside it.
    const mounted = path.join(work.dir, 'mounted');
    fs.mkdirSync(mounted);
    const intoEmpty = await runCli(h.dataDir, ['backup', '--out', mounted, '--json']);
    expect(intoEmpty.code).toBe(0);
    expect(fs.readdirSync(mounted).sort()).toEqual(['esign.sqlite', 'files', 'manifest.json']);
    const usage = await runCli(h.dataDir, 'backup');
    expect({ code: usage.code, stderr: usage.stderr }).toMatchObject({
      code: 2,
      stderr: expect.stringContaining('backup: --out is required'),
    });
  });
});

describe('admin restore', () => {
  it('refuses a directory without a manifest, and a manifest that is not one of a backup', async () => {
    expect(await restoreRefusal(path.join(work.dir, 'nothing-here'))).toMatchObject({
      code: 'RESTORE_MANIFEST_INVALID',
    });
    const notJson = variant('not-json', (dir) =>
      fs.writeFileSync(path.join(dir, 'manifest.json'), '{'),
    );
    expect((await restoreRefusal(notJson)).code).toBe('RESTORE_MANIFEST_INVALID');
    const newer = variant('newer', (dir) =>
      editManifest(dir, (manifest) => {
        manifest.schemaVersion = 10_000;
      }),
    );
    expect((await restoreRefusal(newer)).code).toBe('RESTORE_SCHEMA_NEWER');
  });

  it('refuses a path that leaves the backup, a symbolic link and a missing file', async () => {
    const escaping = variant('escaping', (dir) =>
      editManifest(dir, (manifest) => {
        const entries = manifest.entries as { path: string }[];
        entries.push({ ...entries[0]!, path: 'dev-ca/../../etc/passwd' });
      }),
    );
    const refusal = await restoreRefusal(escaping);
    expect(refusal.code).toBe('RESTORE_MANIFEST_INVALID');
    expect(refusal.message).toContain('is not a path of the backup layout');

    const stored = path.join(
      'files',
      templateSha.value.slice(0, 2),
      templateSha.value.slice(2, 4),
      templateSha.value,
    );
    const linked = variant('linked', (dir) => {
      const file = path.join(dir, stored);
      fs.renameSync(file, path.join(dir, 'elsewhere.pdf'));
      fs.symlinkSync(path.join(dir, 'elsewhere.pdf'), file);
    });
    expect(await restoreRefusal(linked)).toMatchObject({
      code: 'RESTORE_BACKUP_DAMAGED',
      message: expect.stringContaining('is a symbolic link'),
    });

    const missing = variant('missing', (dir) => fs.rmSync(path.join(dir, stored)));
    expect(await restoreRefusal(missing)).toMatchObject({
      code: 'RESTORE_BACKUP_DAMAGED',
      message: `${stored} is missing from the backup`,
    });

    // The manifest no longer lists the template's file: the database still names it.
    const unlisted = variant('unlisted', (dir) =>
      editManifest(dir, (manifest) => {
        manifest.entries = (manifest.entries as { path: string }[]).filter(
          (entry) => entry.path !== stored,
        );
      }),
    );
    expect(await restoreRefusal(unlisted)).toMatchObject({
      code: 'RESTORE_BACKUP_DAMAGED',
      message: expect.stringContaining(`names the stored file ${templateSha.value}`),
    });
  });

  it('restores next to the master.key kept for it, and refuses anything else in DATA_DIR', async () => {
    const target = path.join(work.dir, 'with-key');
    fs.mkdirSync(target);
    fs.copyFileSync(path.join(h.dataDir, 'master.key'), path.join(target, 'master.key'));
    const restored = await runCli(target, ['restore', '--from', backup, '--json']);
    expect({ code: restored.code, stderr: restored.stderr }).toEqual({ code: 0, stderr: '' });
    expect(restored.json()).toMatchObject({ masterSecret: 'master.key', storedFiles: 1 });
    expect(fs.readdirSync(target).sort()).toEqual(['esign.sqlite', 'files', 'master.key']);
    // The restored service reads what the original wrote: the template is listed.
    const listed = await runCli(target, 'template list --tenant ACME --json');
    expect(listed.json<{ templates: { sha256?: string; code: string }[] }>().templates).toEqual([
      expect.objectContaining({ code: 'HD' }),
    ]);

    const other = path.join(work.dir, 'not-empty');
    fs.mkdirSync(other);
    fs.writeFileSync(path.join(other, 'notes.txt'), 'mine');
    const refused = await runCli(other, ['restore', '--from', backup, '--json']);
    expect(refused.code).toBe(1);
    expect(refused.json<Failure>().error.code).toBe('RESTORE_TARGET_NOT_EMPTY');
    expect(fs.readdirSync(other)).toEqual(['notes.txt']);
  });
});
