import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { CodedError } from '@esign/shared';
import { buildSignedAttributes, ecdsaRawSignatureToDer } from '@esign/shared/cms';
import {
  createOpensslPki,
  type OpensslPki,
  opensslQuery,
  opensslReply,
  opensslTokenOf,
} from '../../../../test/support/opensslTsa';
import { attempt, derToPem } from '../../../../test/support/tools';
import type { Db } from '../../../src/db/database';
import { readSignatures } from '../../../src/pdf/signing';
import { systemClock } from '../../../src/platform/clock';
import { prepareRevision, type SignatureDeps, type SignedRevision } from '../../../src/signatures';
import { parseSignedData } from '../../../src/signing/cms';
import type { Preparation, TokenSignatureInput } from '../../../src/signing/finalize';
import { localStoreOf } from '../../../src/storage/localFileStore';
import { addTrustAnchor } from '../../../src/trust/service';
import { insertFileVersion, newestVersionNumber } from '../../../src/workflow/queries/dossiers';
import { createDossier, createProcess } from '../../support/dossiers';
import { createHarness, type Harness, seedTenant } from '../../support/harness';
import { type Issued, TestPki } from '../certificates/testPki';
import { classicPdf, pdfsig, pdfsigSignatures } from '../pdf/corpus';

/** What the tests of a file share: the two PKIs, the contract PDF, a scratch directory. */
export interface Tools {
  pki: TestPki;
  tsa: OpensslPki;
  contract: Buffer;
  dir: string;
}

/** Makes the tools before the file's tests and removes them after; filled in by beforeAll. */
export function useTools(): Tools {
  const tools = {} as Tools;
  beforeAll(async () => {
    tools.pki = await TestPki.create();
    tools.tsa = createOpensslPki();
    tools.contract = await classicPdf(2);
    tools.dir = fs.mkdtempSync(path.join(os.tmpdir(), 'finalize-'));
  }, 120_000);
  afterAll(async () => {
    await tools.pki?.close();
    tools.tsa?.remove();
    if (tools.dir) fs.rmSync(tools.dir, { recursive: true, force: true });
  });
  return tools;
}

/** A preparation of the world's file (or another stored version), open for an hour. */
export function prepare(
  world: World,
  options: { sourceSha256?: string; reason?: string } = {},
): Promise<Preparation> {
  return prepareRevision(world.deps, {
    tenantId: world.tenantId,
    sourceSha256: options.sourceSha256 ?? world.sourceSha256,
    signingTime: new Date(),
    signerName: 'Nguyễn Văn A',
    reason: options.reason ?? 'Ký hợp đồng',
    expiresAt: new Date(Date.now() + 3600_000),
  });
}

/**
 * A service with one tenant and one dossier file, the signer PKI (certificates/testPki: root →
 * intermediate → leaves, with its OCSP responder) and an openssl TSA: the tenant trusts both
 * roots unless told otherwise. The clock is the system's: the tools stamp real times.
 */
export interface World {
  h: Harness;
  deps: SignatureDeps;
  tenantId: number;
  /** The dossier's MAIN file (version 1 = the contract PDF). */
  fileId: number;
  sourceSha256: string;
}

export async function createWorld(
  { pki, tsa, contract }: Tools,
  options: { env?: Record<string, string>; trustSignerRoot?: boolean } = {},
): Promise<World> {
  const h = createHarness({ OUTBOUND_ALLOWLIST: '127.0.0.1', ...options.env });
  h.clock.set(new Date());
  const deps: SignatureDeps = { ...h.deps, clock: systemClock };
  const tenant = await seedTenant(h, 'ACME');
  const anchors = [tsa.rootDer, ...(options.trustSignerRoot === false ? [] : [pki.root.der])];
  for (const certificateFile of anchors) {
    await addTrustAnchor(h.deps.db, h.now(), { tenantId: tenant.tenantId, certificateFile });
  }
  const process = await createProcess(h, {
    tenantId: tenant.tenantId,
    organizationId: tenant.rootOrganizationId,
    code: 'KY',
    steps: [{ stepCode: 'KY', kind: 'phone_guest' }],
  });
  const dossier = await createDossier(h, process, {
    files: [{ title: 'Hợp đồng', content: contract }],
    start: false,
  });
  const fileId = dossier.fileIds[0]!;
  const version = await h.deps.db
    .selectFrom('file_versions')
    .select('sha256')
    .where('file_id', '=', fileId)
    .executeTakeFirstOrThrow();
  return { h, deps, tenantId: tenant.tenantId, fileId, sourceSha256: version.sha256 };
}

/** A world for the tests of one describe block, handed to `set` before them, closed after. */
export function useWorld(
  tools: Tools,
  set: (world: World) => void,
  options: Parameters<typeof createWorld>[1] = {},
): void {
  let made: World | undefined;
  beforeAll(async () => {
    made = await createWorld(tools, options);
    set(made);
  });
  afterAll(() => made?.h.close());
}

/** The caller's part of the finalize transaction: the signed file as the file's next version. */
export function addVersion(world: World) {
  return async (trx: Db, signed: SignedRevision): Promise<number> => {
    const version = (await newestVersionNumber(trx, world.fileId)) + 1;
    await insertFileVersion(trx, {
      file_id: world.fileId,
      version,
      sha256: signed.sha256,
      size: signed.size,
      created_at: new Date().toISOString(),
    });
    return version;
  };
}

/** A signer as a token client holds it: the private key and the chain it sends. */
export interface TokenSigner {
  key: crypto.KeyObject;
  chain: Buffer[];
}

export function tokenSigner(pki: TestPki, issued: Issued): TokenSigner {
  return {
    key: crypto.createPrivateKey(fs.readFileSync(issued.keyFile)),
    chain: [issued.der, pki.intermediate.der],
  };
}

const sha256 = (bytes: Uint8Array) => crypto.createHash('sha256').update(bytes).digest();

/** `openssl ts` stamps SHA-256 of `bytes`: the token alone. */
export function timestampOver(tsa: OpensslPki, bytes: Uint8Array): Buffer {
  return opensslTokenOf(tsa, opensslReply(tsa, opensslQuery(tsa, sha256(bytes).toString('hex'))));
}

export interface TokenSigning {
  /** Sign these attributes instead of the ones for the digest (a client's mistake). */
  attributes?: Uint8Array;
  /** ECDSA as raw r||s (CKM_ECDSA) rather than DER. */
  raw?: boolean;
  chain?: Buffer[];
  /** The token to send instead of one over the signature. */
  timestampToken?: Buffer;
  /** The hash the token signs with (a client's mistake when not SHA-256). */
  hash?: 'sha1' | 'sha256';
}

/** What a token client sends for `contractHash`, signing as docs/signing-with-a-token.md says. */
export function signAsClient(
  tsa: OpensslPki,
  signer: TokenSigner,
  contractHash: string,
  options: TokenSigning = {},
): TokenSignatureInput {
  const chain = options.chain ?? signer.chain;
  const digest = Buffer.from(contractHash.replace(/^sha256:/, ''), 'hex');
  const attributes = options.attributes ?? buildSignedAttributes(digest, signer.chain[0]!);
  const hash = options.hash ?? 'sha256';
  const signature = options.raw
    ? crypto.sign(hash, attributes, { key: signer.key, dsaEncoding: 'ieee-p1363' })
    : crypto.sign(hash, attributes, signer.key);
  const stamped = options.raw ? ecdsaRawSignatureToDer(signature) : signature;
  return {
    signedHash: signature.toString('base64'),
    certificateChain: chain.map((der) => der.toString('base64')),
    timestampToken: (options.timestampToken ?? timestampOver(tsa, stamped)).toString('base64'),
  };
}

/** The CodedError a promise rejects with. */
export async function refusal(promise: Promise<unknown>): Promise<CodedError> {
  try {
    await promise;
  } catch (error) {
    if (error instanceof CodedError) return error;
    throw error;
  }
  throw new Error('expected a refusal');
}

/** Every file under the FileStore root (temp files included), relative, sorted. */
export function storeListing(world: World): string[] {
  const root = localStoreOf(world.h.deps.files).root;
  if (!fs.existsSync(root)) return [];
  return (fs.readdirSync(root, { recursive: true }) as string[])
    .filter((name) => fs.statSync(path.join(root, name)).isFile())
    .sort();
}

/** The rows a refused finalize must leave as they were. */
export async function persisted(world: World) {
  const db = world.h.deps.db;
  return {
    versions: await db
      .selectFrom('file_versions')
      .selectAll()
      .where('file_id', '=', world.fileId)
      .orderBy('version')
      .execute(),
    preparations: await db.selectFrom('signature_preparations').selectAll().orderBy('id').execute(),
    files: storeListing(world),
  };
}

/** pdfsig's verdict on each signature of the file. */
export function pdfsigVerdicts(file: string): boolean[] {
  return pdfsigSignatures(pdfsig(file)).map((signature) => signature.valid);
}

/**
 * The external verdicts on the file's signature `index`: `openssl cms -verify` of its CMS over
 * the signed bytes (chain to `caPem`), and `openssl ts -verify` of its timestamp token over the
 * signature value (chain to `tsaCaPem`).
 */
export function opensslVerdicts(
  dir: string,
  file: string,
  index: number,
  anchors: { signerCa: Buffer; tsaCa: Buffer },
): { cms: string; ts: string } {
  const signature = readSignatures(file).signatures[index]!;
  const bytes = fs.readFileSync(file);
  const [a, b, c, d] = signature.byteRange;
  const name = (suffix: string) =>
    path.join(dir, `sig-${index}-${process.hrtime.bigint()}.${suffix}`);
  const content = name('content');
  const cms = name('cms');
  const value = name('value');
  const token = name('token');
  const signerCa = name('ca.pem');
  const tsaCa = name('tsa-ca.pem');
  fs.writeFileSync(content, Buffer.concat([bytes.subarray(a, a + b), bytes.subarray(c, c + d)]));
  fs.writeFileSync(cms, signature.contents);
  const parsed = parseSignedData(signature.contents);
  fs.writeFileSync(value, parsed.signature);
  fs.writeFileSync(token, parsed.timestampToken ?? Buffer.alloc(0));
  fs.writeFileSync(signerCa, derToPem(anchors.signerCa));
  fs.writeFileSync(tsaCa, derToPem(anchors.tsaCa));
  const cmsVerdict = attempt('openssl', [
    'cms',
    '-verify',
    '-binary',
    '-inform',
    'DER',
    '-in',
    cms,
    '-content',
    content,
    '-purpose',
    'any',
    '-CAfile',
    signerCa,
    '-out',
    '/dev/null',
  ]);
  const tsVerdict = attempt('openssl', [
    'ts',
    '-verify',
    '-data',
    value,
    '-token_in',
    '-in',
    token,
    '-CAfile',
    tsaCa,
  ]);
  return { cms: cmsVerdict.output, ts: tsVerdict.output };
}
