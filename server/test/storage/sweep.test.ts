import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { Readable } from 'node:stream';
import { openPreparation } from '../../src/signatures';
import { LocalFileStore, localStoreOf } from '../../src/storage/localFileStore';
import { type SweepReport, sweepFileStore } from '../../src/storage/sweep';
import { registerTemplate } from '../../src/templates/service';
import type { TenantRow } from '../../src/tenancy/resolveTenant';
import { contractPdf, contractsPath, storedFiles } from '../contracts/fixtures';
import { addProcess } from '../dossiers/fixtures';
import {
  dataOf,
  developmentTsa,
  openSessionWorld,
  type SessionWorld,
  SoftToken,
} from '../sessions/world';
import { exampleTemplateFile, makePdf } from '../templates/fixtures';

/**
 * The sweep over a store filled by real flows: a dossier rendered from a template, the template
 * replaced, contracts signed by usb_token (one session superseded), one session left to expire.
 */

jest.setTimeout(240_000);

const hourMs = 3_600_000;
const signer = { name: 'Nguyễn Văn Ánh', email: 'anh@partner.example', order: 1 };
const sha256 = (bytes: Buffer) => crypto.createHash('sha256').update(bytes).digest('hex');

let world: SessionWorld;
let token: SoftToken;
let acmeTenant: TenantRow;
beforeAll(async () => {
  world = await openSessionWorld();
  token = await SoftToken.create(world, signer);
  acmeTenant = await world.h.deps.db
    .selectFrom('tenants')
    .selectAll()
    .where('id', '=', world.acme.tenantId)
    .executeTakeFirstOrThrow();
  await addProcess(
    world.h,
    { tenantId: world.acme.tenantId, organizationId: world.acme.rootOrganizationId },
    'SWEEP',
    ['HD'],
    [{ stepCode: 'SIGN', name: 'Khách hàng ký', kind: 'guest' }],
  );
});
afterAll(async () => {
  token?.remove();
  await world?.close();
});

const sweep = (options: { dryRun: boolean; graceMs?: number }) =>
  sweepFileStore(world.h.deps, options);
const deletedOf = (report: SweepReport) => report.deletedFiles.map((file) => file.sha256).sort();
const onDisk = () => storedFiles(world.h).sort();

async function download(url: string): Promise<Buffer> {
  const response = await world.h.request('GET', url, {
    headers: { 'x-api-key': world.acme.orgKey },
  });
  if (response.status !== 200)
    throw new Error(`${url}: ${response.status} ${await response.text()}`);
  return Buffer.from(await response.arrayBuffer());
}

/** A dossier of process SWEEP whose one file is rendered from template HD_MAU. */
async function templateDossier(name: string): Promise<{ downloadUrl: string }> {
  const created = await world.h.request('POST', '/api/integration/documents', {
    headers: { 'x-api-key': world.acme.orgKey },
    json: {
      documentId: `HD-${crypto.randomUUID()}`,
      documentTitle: 'Hợp đồng dịch vụ',
      processDefCode: 'SWEEP',
      files: [{ source: 'template', templateCode: 'HD_MAU', templateData: { hoTen: name } }],
      signers: [
        {
          stepCode: 'SIGN',
          fullName: name,
          email: 'khach@example.com',
          identityNumber: '001099012345',
        },
      ],
    },
  });
  const body = (await created.json()) as { data: { files: { downloadUrl: string }[] } };
  if (created.status !== 201) throw new Error(`dossier: ${created.status} ${JSON.stringify(body)}`);
  return body.data.files[0]!;
}

async function registerHdMau(pdfPath: string): Promise<string> {
  const { template } = await registerTemplate(world.h.deps, acmeTenant, 'ACME', {
    code: 'HD_MAU',
    name: 'Hợp đồng mẫu',
    pdfPath,
  });
  return template.sha256;
}

interface Initiated {
  sessionId: string;
  contractHash: string;
  tsaUrl: string;
}

async function initiate(contractId: string): Promise<Initiated> {
  return dataOf<Initiated>(await world.initiate(contractId, signer.email, 'usb_token'));
}

async function signWithToken(session: Initiated): Promise<Response> {
  const tsa = developmentTsa(world, session.tsaUrl);
  try {
    const body = await token.signAsClient(session.contractHash, tsa.stamp);
    return await world.step(session.sessionId, 'sign-with-token', body);
  } finally {
    tsa.remove();
  }
}

async function preparationOfSession(sessionId: string) {
  const session = await world.h.deps.db
    .selectFrom('signing_sessions')
    .select('preparation_id')
    .where('public_id', '=', sessionId)
    .executeTakeFirstOrThrow();
  return world.h.deps.db
    .selectFrom('signature_preparations')
    .selectAll()
    .where('id', '=', session.preparation_id)
    .executeTakeFirstOrThrow();
}

async function contractVersions(contractId: string) {
  return world.h.deps.db
    .selectFrom('contract_file_versions')
    .innerJoin('contracts', 'contracts.id', 'contract_file_versions.contract_id')
    .select(['contract_file_versions.version', 'contract_file_versions.sha256'])
    .where('contracts.uuid', '=', contractId)
    .orderBy('contract_file_versions.version')
    .execute();
}

describe('sweepFileStore over real flows', () => {
  it('deletes exactly the orphans past the grace period; every live record still downloads its bytes; a dry run deletes nothing', async () => {
    const oldTemplate = await registerHdMau(exampleTemplateFile);
    const dossierFile = await templateDossier('Nguyễn Văn Ánh');
    const replacement = path.join(world.h.dataDir, 'mau-moi.pdf');
    fs.writeFileSync(
      replacement,
      await makePdf((form, page) =>
        form.createTextField('hoTen').addToPage(page, { x: 20, y: 300 }),
      ),
    );
    const newTemplate = await registerHdMau(replacement);
    expect(newTemplate).not.toBe(oldTemplate);

    // Contract A: initiated twice (the first session superseded), then signed.
    const signed = await world.sentContract([signer], { title: 'Hợp đồng A' });
    const superseded = await initiate(signed);
    // Another signing second: otherwise both prepared revisions are the same bytes.
    world.h.clock.advance(2_000);
    const used = await initiate(signed);
    expect((await signWithToken(used)).status).toBe(200);
    // Contract B: a session nobody finishes.
    const pending = await world.sentContract([signer], { title: 'Hợp đồng B' });
    const left = await initiate(pending);

    const p1 = await preparationOfSession(superseded.sessionId);
    const p2 = await preparationOfSession(used.sessionId);
    const p3 = await preparationOfSession(left.sessionId);
    expect([p1.state, p2.state, p3.state]).toEqual(['abandoned', 'finalized', 'open']);
    const orphans = [
      oldTemplate,
      p1.prepared_sha256,
      p2.prepared_sha256,
      p3.prepared_sha256,
    ].sort();
    const before = onDisk();
    for (const orphan of orphans) expect(before).toContain(orphan);

    // Within the grace period nothing goes, not even the orphans already unreferenced.
    const early = await sweep({ dryRun: false });
    expect(early.deleted).toBe(0);
    expect(early.recent).toBe(3);
    expect(onDisk()).toEqual(before);

    // Past B's session expiry plus the grace period.
    world.h.clock.set(new Date(Date.parse(p3.expires_at) + hourMs + 60_000));
    const dry = await sweep({ dryRun: true });
    expect(deletedOf(dry)).toEqual(orphans);
    expect(dry.abandonedPreparations).toBe(1);
    expect(dry.deletedBytes).toBe(dry.deletedFiles.reduce((sum, file) => sum + file.size, 0));
    expect(onDisk()).toEqual(before);
    expect((await preparationOfSession(left.sessionId)).state).toBe('open');

    const swept = await sweep({ dryRun: false });
    expect(deletedOf(swept)).toEqual(orphans);
    expect(swept.deletedBytes).toBe(dry.deletedBytes);
    expect([swept.abandonedPreparations, swept.missing, swept.recent]).toEqual([1, 0, 0]);
    expect(swept.kept).toBe(before.length - orphans.length);
    expect(onDisk()).toEqual(before.filter((name) => !orphans.includes(name)));
    // No reader can reach the deleted prepared file: the preparation is no longer open.
    expect((await preparationOfSession(left.sessionId)).state).toBe('abandoned');
    await expect(openPreparation(world.h.deps, p3.id, world.acme.tenantId)).rejects.toMatchObject({
      code: 'PREPARATION_NOT_OPEN',
    });

    // Every live record still serves its bytes.
    const dossierVersion = await world.h.deps.db
      .selectFrom('file_versions')
      .select('sha256')
      .orderBy('id', 'desc')
      .executeTakeFirstOrThrow();
    expect(sha256(await download(dossierFile.downloadUrl))).toBe(dossierVersion.sha256);
    // Completed: the signed version, then the archive (B-LTA) that the download serves.
    const [originalA, signedA, archiveA] = await contractVersions(signed);
    expect(signedA?.sha256).toBe(p2.signed_sha256);
    expect(onDisk()).toContain(signedA!.sha256);
    expect(sha256(await download(`${contractsPath}/${signed}/download?type=original`))).toBe(
      originalA!.sha256,
    );
    expect(sha256(await download(`${contractsPath}/${signed}/download?type=signed`))).toBe(
      archiveA!.sha256,
    );
    const [originalB] = await contractVersions(pending);
    expect(sha256(await download(`${contractsPath}/${pending}/download?type=original`))).toBe(
      originalB!.sha256,
    );
    // The current template still renders.
    expect(onDisk()).toContain(newTemplate);
    await templateDossier('Trần Thị Bình');

    // A second sweep finds nothing more.
    expect((await sweep({ dryRun: false })).deleted).toBe(0);
  });

  it('keeps the prepared file of an open, unexpired preparation (by its row, not its age); it still signs', async () => {
    const contractId = await world.sentContract([signer], { title: 'Hợp đồng C' });
    const session = await initiate(contractId);
    const preparation = await preparationOfSession(session.sessionId);
    // Four minutes: older than the grace period, young enough to be signed (a token's timestamp
    // may come at most 5 minutes after the revision's /M).
    world.h.clock.advance(4 * 60_000);
    // A one-minute grace period: only the row protects the four-minute-old prepared file.
    const report = await sweep({ dryRun: false, graceMs: 60_000 });
    expect(deletedOf(report)).not.toContain(preparation.prepared_sha256);
    expect(onDisk()).toContain(preparation.prepared_sha256);
    expect((await signWithToken(session)).status).toBe(200);
    const newest = (await contractVersions(contractId)).at(-1)!;
    expect(sha256(await download(`${contractsPath}/${contractId}/download?type=signed`))).toBe(
      newest.sha256,
    );
  });
});

describe('the dedupe race: an old orphan put again before its row commits', () => {
  const orphanBytes = () => Buffer.from(`% orphan ${crypto.randomUUID()}\n`.repeat(50));

  it('is spared while the put is uncommitted and through the grace period after; deleted once really orphaned', async () => {
    const { files } = world.h.deps;
    const bytes = orphanBytes();
    const first = await files.put(Readable.from(bytes));
    files.keep(first);
    world.h.clock.advance(2 * hourMs);

    // Put again: the content exists, so the put returns the old file and refreshes it.
    const again = await files.put(Readable.from(bytes));
    expect(again.created).toBe(false);
    expect(deletedOf(await sweep({ dryRun: false }))).not.toContain(again.sha256);
    expect(await files.exists(again.sha256)).toBe(true);
    // The row committed after the sweep read the references: the grace period still covers it.
    files.keep(again);
    world.h.clock.advance(30 * 60_000);
    expect(deletedOf(await sweep({ dryRun: false }))).not.toContain(again.sha256);
    expect(await files.exists(again.sha256)).toBe(true);
    // No row ever named it: past the grace period it goes.
    world.h.clock.advance(hourMs);
    expect(deletedOf(await sweep({ dryRun: false }))).toContain(again.sha256);
    expect(await files.exists(again.sha256)).toBe(false);
  });

  it('a put by another process (no shared lock or claim) refreshing the file keeps it', async () => {
    const files = localStoreOf(world.h.deps.files);
    const bytes = orphanBytes();
    files.keep(await files.put(Readable.from(bytes)));
    world.h.clock.advance(2 * hourMs);
    const otherProcess = new LocalFileStore(files.root, world.h.clock);
    const again = await otherProcess.put(Readable.from(bytes));
    otherProcess.keep(again);
    expect(deletedOf(await sweep({ dryRun: false }))).not.toContain(again.sha256);
    expect(sha256(fs.readFileSync(files.pathOf(again.sha256)))).toBe(sha256(bytes));
  });

  it('a real upload of an old orphan’s bytes: the next sweep keeps them and the download serves them', async () => {
    const bytes = await contractPdf(`orphan ${crypto.randomUUID()}`);
    const { files } = world.h.deps;
    files.keep(await files.put(Readable.from(bytes)));
    world.h.clock.advance(2 * hourMs);
    const contractId = await world.create({ file: { name: 'hop-dong.pdf', bytes } });
    expect(deletedOf(await sweep({ dryRun: false }))).not.toContain(sha256(bytes));
    world.h.clock.advance(2 * hourMs);
    expect(deletedOf(await sweep({ dryRun: false }))).not.toContain(sha256(bytes));
    expect(sha256(await download(`${contractsPath}/${contractId}/download?type=original`))).toBe(
      sha256(bytes),
    );
  });

  it('a file set aside by an interrupted sweep is put back when referenced, dropped when not', async () => {
    const files = localStoreOf(world.h.deps.files);
    const bytes = await contractPdf(`aside ${crypto.randomUUID()}`);
    const contractId = await world.create({ file: { name: 'hop-dong.pdf', bytes } });
    const referenced = files.pathOf(sha256(bytes));
    fs.renameSync(referenced, `${referenced}.sweep`);
    const loose = orphanBytes();
    const stored = await files.put(Readable.from(loose));
    files.keep(stored);
    fs.renameSync(files.pathOf(stored.sha256), `${files.pathOf(stored.sha256)}.sweep`);
    // A recent unreferenced file set aside may be another sweep's, still deciding: left alone.
    await sweep({ dryRun: false });
    expect(fs.existsSync(`${files.pathOf(stored.sha256)}.sweep`)).toBe(true);
    world.h.clock.advance(2 * hourMs);
    await sweep({ dryRun: false });
    expect(fs.existsSync(referenced)).toBe(true);
    expect(fs.existsSync(`${referenced}.sweep`)).toBe(false);
    expect(fs.existsSync(`${files.pathOf(stored.sha256)}.sweep`)).toBe(false);
    expect(await files.exists(stored.sha256)).toBe(false);
    expect(sha256(await download(`${contractsPath}/${contractId}/download?type=original`))).toBe(
      sha256(bytes),
    );
  });
});
