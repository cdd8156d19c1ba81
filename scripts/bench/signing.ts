import { spawn, spawnSync } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { developmentCa } from '../../server/src/dev/developmentCa';
import { sealKey } from '../../server/src/keys/signingKeys';
import { prepareSigningKeys } from '../../server/src/keys/startup';
import { loadConfig } from '../../server/src/platform/config';
import { createLogger } from '../../server/src/platform/logger';
import { openRuntime } from '../../server/src/runtime';
import { prepareRevision, signWithServerKey } from '../../server/src/signatures';
import { closeKeyStore } from '../../server/src/signing/keys/keyStores';
import { requestTimestamp } from '../../server/src/signing/timestamps/client';
import { verifyPdfSignatures } from '../../server/src/signing/verification';
import { localStoreOf } from '../../server/src/storage/localFileStore';
import { createTenant } from '../../server/src/tenancy/service';
import { TestPki } from '../../server/test/signing/cms/testPki';
import { opensslP12, signWithSignpdf } from '../../server/test/signing/foreignSigners';
import { classicPdf, nssDatabase, writeLargePdf } from '../../server/test/signing/pdf/corpus';
import { median, printColumns } from './figures';

/**
 * Signing bench, on ONE generated PDF of BENCH_SIGNING_MB MB (50; four pages of incompressible
 * image samples, classic xref so that @signpdf can read it):
 * - prepare + finalize: ours is prepareRevision + signWithServerKey with the seal (a software
 *   RSA-2048 key of the embedded key store, development CA certificate) timestamped by the
 *   development TSA in-process (no network), the files in the FileStore (fsync'd); the reference
 *   is @signpdf/signpdf 3.x (plainAddPlaceholder + P12Signer, node-forge) with an RSA-2048 P12
 *   made by openssl, reading and writing the files. Time and peak RSS growth of the signing call.
 * - verification: verifyPdfSignatures on our signed file (byte range, digest, CMS signature,
 *   signing-certificate-v2, chain to the development CA, validity and revocation, the
 *   timestamp, later changes), in-process, against poppler's `pdfsig -nssdir <db>` on the same
 *   file, the whole process (its start-up is in its figure: see its one-page time). The NSS
 *   database trusts the development CA, so pdfsig checks the chain as we do (no `-nocert`). It
 *   would ask an OCSP responder, but the development certificates name none, so neither side
 *   goes to the network (`-no-ocsp` is left out: poppler 22 then fails every chain with
 *   "Unknown issue"). pdfsig does not check the timestamp at all; we do.
 * Each side runs in a child process of its own (same Node flags), the sides alternating for
 * BENCH_SIGNING_ROUNDS rounds (5); medians. Each child first signs a one-page PDF the same way,
 * unmeasured, as a running server has (modules loaded, code compiled, key read), then the large
 * one, measured. Prints figures only; asserts nothing.
 * Runs alone with `node --import tsx scripts/bench/signing.ts`.
 */

const root = path.resolve(__dirname, '..', '..');
const role = process.env.BENCH_SIGNING_ROLE;
const megabytes = Number(process.env.BENCH_SIGNING_MB || 50);
const rounds = Number(process.env.BENCH_SIGNING_ROUNDS || 5);
const passphrase = 'bench';
const mb = 1024 * 1024;

/** What a child reports: the work's time and its memory (maxRSS is the process's peak so far). */
interface Sample {
  ms: number;
  /** Resident set just before the work. */
  rssBefore: number;
  /** Peak resident set before the work (start-up) and after it, in bytes. */
  peakBefore: number;
  peakAfter: number;
}

/** How far the work raised the process's resident set: exact when the peak is the work's. */
function peakGrowth(sample: Sample): { bytes: number; bound: boolean } {
  // When start-up peaked higher than the work, the work's growth is at most that peak.
  return {
    bytes: sample.peakAfter - sample.rssBefore,
    bound: sample.peakAfter <= sample.peakBefore,
  };
}

async function measured(work: () => Promise<void>): Promise<Sample> {
  // Whatever an earlier run left to write back (@signpdf does not fsync its 50 MB) goes to disk
  // now, not during this run's fsyncs.
  spawnSync('sync');
  const rssBefore = process.memoryUsage().rss;
  const peakBefore = process.resourceUsage().maxRSS * 1024;
  const began = performance.now();
  await work();
  const ms = performance.now() - began;
  return { ms, rssBefore, peakBefore, peakAfter: process.resourceUsage().maxRSS * 1024 };
}

/** Where the service's database is: none means SQLite under DATA_DIR (the default). */
export interface DatabaseEnv {
  DATABASE_URL?: string;
  SECRET_KEY?: string;
}

/** The environment of the service the children share: development, its CA and TSA, no network. */
function serviceConfig(dataDir: string, database: DatabaseEnv = {}) {
  return loadConfig({
    DATA_DIR: dataDir,
    APP_ENV: 'development',
    PUBLIC_URL: 'http://127.0.0.1:3000',
    ...database,
  });
}

interface Setup {
  dataDir: string;
  database?: DatabaseEnv;
  tenantId: number;
  sourceSha256: string;
  /** The one-page PDF of the warm-up signature. */
  warmUpSha256: string;
  /** The development CA certificate, PEM: pdfsig's NSS database trusts it. */
  caPem: string;
}

/** A DATA_DIR with a tenant, the development CA, seal and TSA made, and the PDFs stored. */
async function setUpService(
  dataDir: string,
  source: string,
  warmUp: string,
  where: DatabaseEnv = {},
): Promise<Setup> {
  const config = serviceConfig(dataDir, where);
  const { deps, database } = openRuntime(config, { logger: createLogger('silent') });
  try {
    await prepareSigningKeys(deps);
    // The development TSA's key and certificate are made on its first answer.
    await requestTimestamp(deps, crypto.createHash('sha256').digest(), {
      trustAnchors: (await deps.trust(null)).timestampAnchors,
    });
    const { tenant } = await createTenant(deps.db, deps.clock.now().toISOString(), {
      code: 'BENCH',
      name: 'Bench tenant',
    });
    const [stored, small] = [await deps.files.put(source), await deps.files.put(warmUp)];
    deps.files.keep(stored);
    deps.files.keep(small);
    return {
      dataDir,
      database: where,
      tenantId: tenant.id,
      sourceSha256: stored.sha256,
      warmUpSha256: small.sha256,
      caPem: (await developmentCa(deps)).certificatePem,
    };
  } finally {
    await closeKeyStore(config);
    await database.close();
  }
}

/** Where a signing child copies the signed files to (for the verification part). */
interface Keep {
  large: string;
  warmUp: string;
}

/**
 * Child: prepare + finalize with the seal, the warm-up then the measured one (`smallToo`: then
 * the one-page file again, measured as well, reported as `small`).
 */
async function oursSign(
  setup: Setup,
  keep?: Keep,
  smallToo = false,
): Promise<Sample & { small?: Sample }> {
  const config = serviceConfig(setup.dataDir, setup.database);
  const { deps, database } = openRuntime(config, { logger: createLogger('silent') });
  const sign = async (sourceSha256: string) => {
    const now = deps.clock.now();
    const preparation = await prepareRevision(deps, {
      tenantId: setup.tenantId,
      sourceSha256,
      signingTime: now,
      signerName: 'Bench',
      expiresAt: new Date(now.getTime() + 3600_000),
    });
    const signed = await signWithServerKey(deps, preparation.id, await sealKey(deps), {
      tenantId: setup.tenantId,
      commit: async () => null,
    });
    return [preparation.preparedSha256, signed.sha256].map((sha256) =>
      localStoreOf(deps.files).pathOf(sha256),
    );
  };
  try {
    const warmUp = await sign(setup.warmUpSha256);
    let written: string[] = [];
    const sample = await measured(async () => {
      written = await sign(setup.sourceSha256);
    });
    if (keep) {
      fs.copyFileSync(written[1]!, keep.large);
      fs.copyFileSync(warmUp[1]!, keep.warmUp);
    }
    const small = smallToo
      ? await measured(async () => {
          for (const file of await sign(setup.warmUpSha256)) fs.rmSync(file, { force: true });
        })
      : undefined;
    for (const file of [...warmUp, ...written]) fs.rmSync(file, { force: true });
    return small ? { ...sample, small } : sample;
  } finally {
    await closeKeyStore(config);
    await database.close();
  }
}

/** Child: @signpdf signs from disk to disk, the warm-up then the measured one. */
async function signpdfSign(
  source: string,
  warmUp: string,
  p12: string,
  output: string,
): Promise<Sample> {
  await signWithSignpdf(warmUp, output, { p12Path: p12, passphrase });
  return measured(() => signWithSignpdf(source, output, { p12Path: p12, passphrase }));
}

/** Child: verifyPdfSignatures, the warm-up file then the measured one; every signature valid. */
async function oursVerify(setup: Setup, signed: Keep): Promise<Sample> {
  const config = serviceConfig(setup.dataDir, setup.database);
  const { deps, database } = openRuntime(config, { logger: createLogger('silent') });
  const verify = async (file: string) => {
    const verification = await verifyPdfSignatures(deps, file, { tenantId: setup.tenantId });
    const [signature] = verification.signatures;
    // A bench of a verification that fails early would time nothing worth knowing.
    if (!signature?.timestampVerified || signature.integrityCheck !== 'passed') {
      throw new Error(`${file}: not verified as signed (${JSON.stringify(verification)})`);
    }
  };
  try {
    await verify(signed.warmUp);
    return await measured(() => verify(signed.large));
  } finally {
    await closeKeyStore(config);
    await database.close();
  }
}

/** pdfsig's flags (see the header) on `file`: its wall time, and whether it says valid. */
function pdfsigRun(nssDir: string, file: string): { ms: number; valid: boolean } {
  const began = performance.now();
  // -nocert: poppler 22 (NSS) calls a certificate naming an OCSP responder "Unknown issue"
  // whether it may go online or not (it never asks the responder), and every certificate of the
  // development CA names its responder. pdfsig then checks the signature and its byte range
  // only, less work than ours (chain, revocation, later revisions): a stricter comparison.
  const run = spawnSync('pdfsig', ['-nssdir', `sql:${nssDir}`, '-nocert', file], {
    encoding: 'utf8',
  });
  const ms = performance.now() - began;
  const valid = run.status === 0 && run.stdout.includes('Signature is Valid.');
  return { ms, valid };
}

type Job =
  | { role: 'ours-sign'; setup: Setup; keep?: Keep; smallToo?: boolean }
  | { role: 'ours-verify'; setup: Setup; signed: Keep }
  | { role: 'signpdf-sign'; source: string; warmUp: string; p12: string; output: string };

/** Runs `job` in a child process with this one's Node flags; its one line of JSON. */
function inChild(job: Job): Promise<Sample & { small?: Sample }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [...process.execArgv, __filename], {
      cwd: root,
      env: { ...process.env, BENCH_SIGNING_ROLE: JSON.stringify(job) },
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    let out = '';
    child.stdout.setEncoding('utf8').on('data', (text: string) => {
      out += text;
    });
    child.on('error', reject);
    child.on('exit', (code) => {
      if (code !== 0) reject(new Error(`bench child ${job.role} exited ${code}`));
      else resolve(JSON.parse(out.trim().split('\n').pop()!) as Sample & { small?: Sample });
    });
  });
}

async function runChild(job: Job): Promise<void> {
  const sample =
    job.role === 'ours-sign'
      ? await oursSign(job.setup, job.keep, job.smallToo)
      : job.role === 'ours-verify'
        ? await oursVerify(job.setup, job.signed)
        : await signpdfSign(job.source, job.warmUp, job.p12, job.output);
  process.stdout.write(`${JSON.stringify(sample)}\n`);
}

interface Row {
  name: string;
  ours: string;
  reference: string;
  ratio: number;
  target: string;
  met: boolean;
}

function printTable(rows: Row[]): void {
  const table = [
    ['case', 'ours', 'reference', 'ratio', 'target', 'verdict'],
    ...rows.map((row) => [
      row.name,
      row.ours,
      row.reference,
      `${row.ratio.toFixed(3)}x`,
      row.target,
      row.met ? 'met' : 'MISSED',
    ]),
  ];
  printColumns(table);
}

/** Reads a file through once (into the page cache). */
function readThrough(file: string): void {
  const fd = fs.openSync(file, 'r');
  try {
    const chunk = Buffer.allocUnsafe(mb);
    while (fs.readSync(fd, chunk) > 0);
  } finally {
    fs.closeSync(fd);
  }
}

const megabytesOf = (bytes: number) => `${(bytes / mb).toFixed(1)} MB`;

export async function benchSigning(): Promise<void> {
  const scratch = fs.mkdtempSync(path.join(os.tmpdir(), 'esign-bench-signing-'));
  const pki = new TestPki();
  try {
    const source = path.join(scratch, 'contract.pdf');
    writeLargePdf(source, megabytes);
    const warmUp = path.join(scratch, 'one-page.pdf');
    fs.writeFileSync(warmUp, await classicPdf(1));
    const p12 = opensslP12(pki, 'bench-signer', passphrase);
    const setup = await setUpService(path.join(scratch, 'data'), source, warmUp);
    const ours: Sample[] = [];
    const reference: Sample[] = [];
    // Alternating, so a change in the machine's load touches both sides alike.
    const signed: Keep = {
      large: path.join(scratch, 'ours-signed.pdf'),
      warmUp: path.join(scratch, 'ours-signed-one-page.pdf'),
    };
    for (let round = 0; round < rounds; round += 1) {
      ours.push(
        await inChild({ role: 'ours-sign', setup, ...(round === 0 ? { keep: signed } : {}) }),
      );
      reference.push(
        await inChild({
          role: 'signpdf-sign',
          source,
          warmUp,
          p12,
          output: path.join(scratch, 'signpdf.pdf'),
        }),
      );
    }

    const ourMs = median(ours.map((sample) => sample.ms));
    const referenceMs = median(reference.map((sample) => sample.ms));
    // Round by round, so that a drift in the machine's load does not tilt the ratio.
    const timeRatio = median(ours.map((sample, round) => sample.ms / reference[round]!.ms));
    const ourGrowth = ours.map(peakGrowth);
    const ourPeak = median(ourGrowth.map((growth) => growth.bytes));
    const referencePeak = median(reference.map((sample) => peakGrowth(sample).bytes));
    const bounded = ourGrowth.some((growth) => growth.bound) ? '≤ ' : '';
    const size = fs.statSync(source).size;
    process.stdout.write(
      `Signing: ${process.version}, ${os.cpus().length} CPUs, load ${os.loadavg()[0]!.toFixed(1)}; one ${megabytesOf(size)} PDF, ${rounds} alternating rounds of one child process per side (warm), medians (ratios: of each round's).\n`,
    );
    // Verification: ours in a child per round (warm), pdfsig right after it on the same file.
    const caFile = path.join(scratch, 'development-ca.pem');
    fs.writeFileSync(caFile, setup.caPem);
    const nssDir = nssDatabase(path.join(scratch, 'nss'), [caFile]);
    // Read once, so that both sides find the signed files in the page cache from the start.
    for (const file of [signed.large, signed.warmUp]) readThrough(file);
    const verifications: Sample[] = [];
    const pdfsigTimes: number[] = [];
    const pdfsigStarts: number[] = [];
    for (let round = 0; round < rounds; round += 1) {
      verifications.push(await inChild({ role: 'ours-verify', setup, signed }));
      const large = pdfsigRun(nssDir, signed.large);
      const small = pdfsigRun(nssDir, signed.warmUp);
      if (!large.valid || !small.valid) throw new Error('pdfsig does not find our signature valid');
      pdfsigTimes.push(large.ms);
      pdfsigStarts.push(small.ms);
    }
    const verifyMs = median(verifications.map((sample) => sample.ms));
    const pdfsigMs = median(pdfsigTimes);
    const verifyRatio = median(
      verifications.map((sample, round) => sample.ms / pdfsigTimes[round]!),
    );
    printTable([
      {
        name: 'prepare + finalize vs @signpdf (P12), time',
        ours: `${ourMs.toFixed(0)} ms`,
        reference: `${referenceMs.toFixed(0)} ms`,
        ratio: timeRatio,
        target: '≤ 0.10x',
        met: timeRatio <= 0.1,
      },
      {
        name: 'prepare + finalize, peak RSS growth',
        ours: `${bounded}${megabytesOf(ourPeak)}`,
        reference: megabytesOf(referencePeak),
        ratio: ourPeak / referencePeak,
        target: '≤ 32 MB',
        met: ourPeak <= 32 * mb,
      },
      {
        name: 'verification (with timestamp) vs pdfsig, time',
        ours: `${verifyMs.toFixed(0)} ms`,
        reference: `${pdfsigMs.toFixed(0)} ms`,
        ratio: verifyRatio,
        target: '≤ 1.0x',
        met: verifyRatio <= 1,
      },
    ]);
    process.stdout.write(
      `pdfsig -nssdir <db trusting the development CA> -nocert, whole process; on the one-page signed PDF it takes ${median(pdfsigStarts).toFixed(0)} ms (its start-up). Ours: in a warm process.\n`,
    );
  } finally {
    pki.remove();
    fs.rmSync(scratch, { recursive: true, force: true });
  }
}

/**
 * A signing round (prepare + finalize with the seal, timed as in `benchSigning`) with the service
 * on SQLite and on the PostgreSQL database `postgres` names, the sides alternating in child
 * processes for BENCH_SIGNING_ROUNDS rounds; each child signs a one-page PDF unmeasured, then one
 * of `megabytes` MB and the one-page PDF again, both measured. Same files, same flags on both sides.
 */
export async function compareSigningOnPostgres(
  postgres: DatabaseEnv,
  megabytes: number,
): Promise<void> {
  const scratch = fs.mkdtempSync(path.join(os.tmpdir(), 'esign-bench-signing-pg-'));
  try {
    const source = path.join(scratch, 'contract.pdf');
    writeLargePdf(source, megabytes);
    const warmUp = path.join(scratch, 'one-page.pdf');
    fs.writeFileSync(warmUp, await classicPdf(1));
    const sides = {
      sqlite: await setUpService(path.join(scratch, 'sqlite'), source, warmUp),
      postgres: await setUpService(path.join(scratch, 'postgres'), source, warmUp, postgres),
    };
    const samples = { sqlite: [] as Sample[], postgres: [] as Sample[] };
    const small = { sqlite: [] as Sample[], postgres: [] as Sample[] };
    for (let round = 0; round < rounds; round += 1) {
      for (const side of ['sqlite', 'postgres'] as const) {
        const { small: one, ...large } = await inChild({
          role: 'ours-sign',
          setup: sides[side],
          smallToo: true,
        });
        samples[side].push(large);
        small[side].push(one!);
      }
    }
    const row = (name: string, figures: typeof samples) => {
      const ratio = median(
        figures.postgres.map((sample, round) => sample.ms / figures.sqlite[round]!.ms),
      );
      return [
        name,
        `${median(figures.sqlite.map((sample) => sample.ms)).toFixed(1)} ms`,
        `${median(figures.postgres.map((sample) => sample.ms)).toFixed(1)} ms`,
        `${ratio.toFixed(2)}x`,
      ];
    };
    process.stdout.write(
      `Signing round on PostgreSQL: ${process.version}, ${os.cpus().length} CPUs, load ${os.loadavg()[0]!.toFixed(1)}; prepare + finalize with the seal in a warm child process, ${rounds} alternating rounds, medians (ratio: of each round's, PostgreSQL / SQLite).\n`,
    );
    printColumns([
      ['signing round (prepare + finalize)', 'SQLite', 'PostgreSQL', 'ratio'],
      row('one-page PDF', small),
      row(`${megabytesOf(fs.statSync(source).size)} PDF`, samples),
    ]);
  } finally {
    fs.rmSync(scratch, { recursive: true, force: true });
  }
}

if (require.main === module) {
  const run = role ? runChild(JSON.parse(role) as Job) : benchSigning();
  run.catch((error: unknown) => {
    process.stderr.write(
      `${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`,
    );
    process.exit(1);
  });
}
