import crypto from 'node:crypto';
import fs from 'node:fs';
import { CodedError } from '@esign/shared';
import {
  buildSignedAttributes,
  derBytes,
  derChildren,
  derElement,
  derObjectIdentifier,
  derSequence,
  derSetOf,
  derTag,
  readDerWhole,
} from '@esign/shared/cms';
import type { OpensslPki } from '../../../../test/support/opensslTsa';
import { statusOfCode } from '../../../src/http/errorStatuses';
import { readDss, readSignatures } from '../../../src/pdf/signing';
import { ManualClock } from '../../../src/platform/clock';
import { finalizeWithToken, prepareRevision } from '../../../src/signatures';
import type { Preparation } from '../../../src/signing/finalize';
import { localStoreOf } from '../../../src/storage/localFileStore';
import { type Issued, opensslDate, type TestPki } from '../certificates/testPki';
import { pdfsig, pdfsigSignatures } from '../pdf/corpus';
import {
  addVersion,
  createWorld,
  opensslVerdicts,
  pdfsigVerdicts,
  persisted,
  prepare,
  refusal,
  signAsClient,
  type TokenSigner,
  timestampOver,
  tokenSigner,
  useTools,
  useWorld,
  type World,
} from './world';

jest.setTimeout(120_000);

const hour = 3600_000;
const tools = useTools();
let pki: TestPki;
let tsa: OpensslPki;
let dir: string;
let rsaSigner: Issued;
let ecSigner: Issued;

beforeAll(async () => {
  ({ pki, tsa, dir } = tools);
  rsaSigner = await pki.issue('Nguyen Van A', { kind: 'rsa' });
  ecSigner = await pki.issue('Tran Thi B', { kind: 'ec' });
});

function finalize(world: World, preparation: Preparation, signer: TokenSigner, options = {}) {
  return finalizeWithToken(
    world.deps,
    preparation.id,
    signAsClient(tsa, signer, preparation.contractHash, options),
    { tenantId: world.tenantId, commit: addVersion(world) },
  );
}

describe('prepareRevision', () => {
  let world: World;
  useWorld(tools, (made) => {
    world = made;
  });

  it('stores the prepared file and records where its placeholder is and what to sign', async () => {
    const preparation = await prepare(world);
    expect(preparation).toMatchObject({
      tenantId: world.tenantId,
      sourceSha256: world.sourceSha256,
      state: 'open',
      fieldName: 'Signature1',
      contractHash: expect.stringMatching(/^sha256:[0-9a-f]{64}$/),
    });
    const prepared = localStoreOf(world.h.deps.files).pathOf(preparation.preparedSha256);
    const bytes = fs.readFileSync(prepared);
    expect(bytes.subarray(0, tools.contract.length).equals(tools.contract)).toBe(true);
    const [a, b, c, d] = preparation.byteRange;
    const digest = crypto
      .createHash('sha256')
      .update(bytes.subarray(a, a + b))
      .update(bytes.subarray(c, c + d))
      .digest('hex');
    expect(preparation.contractHash).toBe(`sha256:${digest}`);
    expect(
      bytes.toString('latin1', preparation.contentsOffset - 1, preparation.contentsOffset),
    ).toBe('<');
  });

  it('refuses a source the store does not have and an expiry in the past', async () => {
    const missing = await refusal(
      prepareRevision(world.deps, {
        tenantId: world.tenantId,
        sourceSha256: 'a'.repeat(64),
        signingTime: new Date(),
        expiresAt: new Date(Date.now() + hour),
      }),
    );
    expect(missing).toMatchObject({ code: 'SOURCE_FILE_NOT_FOUND' });
    const past = await refusal(
      prepareRevision(world.deps, {
        tenantId: world.tenantId,
        sourceSha256: world.sourceSha256,
        signingTime: new Date(),
        expiresAt: new Date(Date.now() - 1000),
      }),
    );
    expect(past).toMatchObject({ field: 'expiresAt' });
  });
});

describe('finalizeWithToken: a signature the tools accept', () => {
  let world: World;
  useWorld(tools, (made) => {
    world = made;
  });

  it.each([
    ['a software RSA key', () => rsaSigner, {}],
    ['an ECDSA P-256 key sending raw r||s', () => ecSigner, { raw: true }],
  ])(
    '%s: B-T, valid in pdfsig (whole file), openssl cms and openssl ts; its OCSP answer kept for the next DSS',
    async (_name, issued, options) => {
      const preparation = await prepare(world);
      const result = await finalize(world, preparation, tokenSigner(pki, issued()), options);
      expect(result.committed).toBeGreaterThan(1);
      expect(result.summary).toMatchObject({
        fieldName: preparation.fieldName,
        trusted: true,
        level: 'B-T',
        // The intermediate is answered too (the root's CRL); none of it is in this file yet.
        revocation: { status: 'good', chainStatus: 'good' },
        documentDigest: preparation.contractHash,
        signedSha256: result.sha256,
        signer: {
          subject: new crypto.X509Certificate(issued().der).subject,
          issuer: 'CN=Test Intermediate CA',
        },
      });
      const signed = localStoreOf(world.h.deps.files).pathOf(result.sha256);
      const hash = crypto.createHash('sha256').update(fs.readFileSync(signed)).digest('hex');
      expect(hash).toBe(result.sha256);

      expect(pdfsigSignatures(pdfsig(signed))).toEqual([
        expect.objectContaining({ valid: true, total: true }),
      ]);
      const verdicts = opensslVerdicts(dir, signed, 0, {
        signerCa: pki.root.der,
        tsaCa: tsa.rootDer,
      });
      expect(verdicts.cms).toContain('Verification successful');
      expect(verdicts.ts).toContain('Verification: OK');
      // Nothing after the signature: the DSS is the prepared revision's (empty on a fresh file).
      expect(readSignatures(signed).signatures[0]!.coversWholeFile).toBe(true);
      expect(readDss(signed).ocspResponses).toEqual([]);

      const row = await world.h.deps.db
        .selectFrom('signature_preparations')
        .selectAll()
        .where('id', '=', preparation.id)
        .executeTakeFirstOrThrow();
      expect(row).toMatchObject({ state: 'finalized', signed_sha256: result.sha256 });
      expect(JSON.parse(row.signature_summary!)).toEqual(result.summary);
      const kept = JSON.parse(row.validation_material!) as { ocspResponses: string[] };
      expect(kept.ocspResponses.length).toBeGreaterThanOrEqual(1);
    },
  );

  it("two signatures in turn: the second revision's DSS holds the first signer's OCSP answer, kept by finalize (no new request), the last signature covers the whole file", async () => {
    const first = await finalize(world, await prepare(world), tokenSigner(pki, rsaSigner));
    const row = await world.h.deps.db
      .selectFrom('signature_preparations')
      .select('validation_material')
      .where('signed_sha256', '=', first.sha256)
      .executeTakeFirstOrThrow();
    const kept = JSON.parse(row.validation_material!) as { ocspResponses: string[] };
    const asked = pki.hits.length;
    const preparation = await prepare(world, { sourceSha256: first.sha256 });
    expect(pki.hits.length).toBe(asked);
    const preparedDss = readDss(
      localStoreOf(world.h.deps.files).pathOf(preparation.preparedSha256),
    );
    expect(preparedDss.ocspResponses.map((der) => der.toString('base64'))).toEqual(
      kept.ocspResponses,
    );
    expect(preparedDss.certificates.some((der) => der.equals(rsaSigner.der))).toBe(true);
    const second = await finalize(world, preparation, tokenSigner(pki, ecSigner), { raw: true });
    const signed = localStoreOf(world.h.deps.files).pathOf(second.sha256);
    expect(pdfsigSignatures(pdfsig(signed)).map(({ valid, total }) => ({ valid, total }))).toEqual([
      { valid: true, total: false },
      { valid: true, total: true },
    ]);
    expect(readDss(signed).ocspResponses.length).toBe(kept.ocspResponses.length);
    expect(readSignatures(signed).signatures.map((s) => s.fieldName)).toEqual([
      'Signature1',
      'Signature2',
    ]);
    for (const index of [0, 1]) {
      const verdicts = opensslVerdicts(dir, signed, index, {
        signerCa: pki.root.der,
        tsaCa: tsa.rootDer,
      });
      expect(verdicts.cms).toContain('Verification successful');
    }
  });

  it('a signed file from elsewhere (no finalize kept its answers): prepare asks the responder again', async () => {
    const signed = await finalize(world, await prepare(world), tokenSigner(pki, rsaSigner));
    const elsewhere = await createWorld(tools, {
      env: { APP_ENV: 'development' },
    });
    try {
      const stored = await elsewhere.h.deps.files.put(
        localStoreOf(world.h.deps.files).pathOf(signed.sha256),
      );
      elsewhere.h.deps.files.keep(stored);
      const asked = pki.hits.length;
      const preparation = await prepare(elsewhere, { sourceSha256: stored.sha256 });
      expect(pki.hits.length).toBeGreaterThan(asked);
      const dss = readDss(localStoreOf(elsewhere.h.deps.files).pathOf(preparation.preparedSha256));
      expect(dss.ocspResponses).toHaveLength(1);
      expect(dss.certificates.some((der) => der.equals(rsaSigner.der))).toBe(true);
    } finally {
      await elsewhere.h.close();
    }
  });
});

/** The signed attributes for the digest, in another order than DER's. */
function unsortedAttributes(digest: Buffer, certificate: Buffer): Uint8Array {
  const sorted = buildSignedAttributes(digest, certificate);
  const members = derChildren(sorted, readDerWhole(sorted)).map((m) => derBytes(sorted, m));
  return derElement(derTag.set, ...members.reverse());
}

/** The signed attributes plus a signing-time of `at` (what a generic CMS tool adds). */
function attributesWithSigningTime(digest: Buffer, certificate: Buffer, at: Date): Uint8Array {
  const sorted = buildSignedAttributes(digest, certificate);
  const members = derChildren(sorted, readDerWhole(sorted)).map((m) => derBytes(sorted, m));
  const utcTime = Buffer.from(`${at.toISOString().replace(/[-:T]/g, '').slice(2, 14)}Z`, 'latin1');
  const signingTime = derSequence(
    derObjectIdentifier('1.2.840.113549.1.9.5'),
    derSetOf([derElement(0x17, utcTime)]),
  );
  return derSetOf([...members, signingTime]);
}

/** The signed attributes without signing-certificate-v2 (a client that signs the CMS minimum). */
function withoutSigningCertificate(digest: Buffer, certificate: Buffer): Uint8Array {
  const sorted = buildSignedAttributes(digest, certificate);
  const members = derChildren(sorted, readDerWhole(sorted)).map((m) => derBytes(sorted, m));
  return derSetOf(members.slice(0, 2));
}

describe('finalizeWithToken: refusals change nothing', () => {
  let world: World;
  let production: World;
  useWorld(tools, (made) => {
    world = made;
  });
  useWorld(
    tools,
    (made) => {
      production = made;
    },
    { env: { APP_ENV: 'production', TSA_URL: 'https://tsa.example' }, trustSignerRoot: false },
  );

  const codes = new Map<string, string>();

  /** Runs a bad finalize and checks the code, and that rows and stored files are as before. */
  async function refused(
    name: string,
    target: World,
    attempt: (preparation: Preparation) => Promise<unknown>,
    expected: { status: number; code: string; field?: string },
    preparation?: Preparation,
  ) {
    const prepared = preparation ?? (await prepare(target));
    const before = await persisted(target);
    const error = await refusal(attempt(prepared));
    expect({ status: statusOfCode(error.code), code: error.code, field: error.field }).toEqual({
      field: undefined,
      ...expected,
    });
    expect(await persisted(target)).toEqual(before);
    codes.set(name, error.code);
    return error;
  }

  const send = (target: World, preparation: Preparation, input: ReturnType<typeof signAsClient>) =>
    finalizeWithToken(target.deps, preparation.id, input, {
      tenantId: target.tenantId,
      commit: addVersion(target),
    });

  it('a signature by another key', async () => {
    const other = tokenSigner(pki, await pki.issue('Another Signer', { kind: 'rsa' }));
    const error = await refused(
      'wrong key',
      world,
      (p) =>
        send(
          world,
          p,
          signAsClient(tsa, other, p.contractHash, { chain: tokenSigner(pki, rsaSigner).chain }),
        ),
      { status: 422, code: 'SIGNATURE_INVALID', field: 'signedHash' },
    );
    expect(error.message).toContain("does not open with the signer certificate's public key");
  });

  it('the digest of another preparation of the document', async () => {
    const earlier = await prepare(world, { reason: 'Bản nháp' });
    const signer = tokenSigner(pki, rsaSigner);
    await refused(
      'other digest',
      world,
      (p) => send(world, p, signAsClient(tsa, signer, earlier.contractHash)),
      { status: 422, code: 'DOCUMENT_DIGEST_MISMATCH', field: 'signedHash' },
    );
  });

  it('each way the signed attributes can be wrong has its own code and message', async () => {
    const signer = tokenSigner(pki, rsaSigner);
    const digestOf = (p: Preparation) => Buffer.from(p.contractHash.slice(7), 'hex');
    const mistakes: [string, (p: Preparation) => Uint8Array, string][] = [
      [
        'unsorted attributes',
        (p) => unsortedAttributes(digestOf(p), rsaSigner.der),
        'SIGNED_ATTRIBUTES_UNSORTED',
      ],
      [
        'extra attribute',
        (p) => attributesWithSigningTime(digestOf(p), rsaSigner.der, new Date()),
        'SIGNED_ATTRIBUTES_EXTRA',
      ],
      [
        'missing attribute',
        (p) => withoutSigningCertificate(digestOf(p), rsaSigner.der),
        'SIGNED_ATTRIBUTES_MISSING',
      ],
      [
        'implicit tag',
        (p) => {
          const tagged = Buffer.from(buildSignedAttributes(digestOf(p), rsaSigner.der));
          tagged[0] = 0xa0;
          return tagged;
        },
        'SIGNED_ATTRIBUTES_WRONG_TAG',
      ],
      ['bare digest', (p) => digestOf(p), 'SIGNED_ATTRIBUTES_ABSENT'],
      [
        'another certificate named',
        (p) => buildSignedAttributes(digestOf(p), pki.intermediate.der),
        'SIGNING_CERTIFICATE_MISMATCH',
      ],
      [
        'digest of other bytes',
        () => buildSignedAttributes(crypto.randomBytes(32), rsaSigner.der),
        'SIGNED_ATTRIBUTES_MISMATCH',
      ],
    ];
    const messages = new Map<string, string>();
    for (const [name, attributes, code] of mistakes) {
      const error = await refused(
        name,
        world,
        (p) =>
          send(world, p, signAsClient(tsa, signer, p.contractHash, { attributes: attributes(p) })),
        { status: 422, code, field: 'signedHash' },
      );
      messages.set(name, error.message);
    }
    expect(messages.get('extra attribute')).toContain('signing-time');
    expect(messages.get('missing attribute')).toContain('signing-certificate-v2');
    expect(messages.get('another certificate named')).toContain('certificateChain[1]');
    expect(new Set(messages.values()).size).toBe(messages.size);
  });

  it('a digest of the unprepared file, a SHA-1 token, an ECDSA signature over other bytes: distinct messages', async () => {
    const signer = tokenSigner(pki, rsaSigner);
    const unprepared = await refused(
      'unprepared file',
      world,
      (p) =>
        send(
          world,
          p,
          signAsClient(tsa, signer, p.contractHash, {
            attributes: buildSignedAttributes(
              Buffer.from(world.sourceSha256, 'hex'),
              rsaSigner.der,
            ),
          }),
        ),
      { status: 422, code: 'DOCUMENT_DIGEST_MISMATCH', field: 'signedHash' },
    );
    expect(unprepared.detailCode).toBe('UNPREPARED_FILE');
    codes.delete('unprepared file');
    await refused(
      'SHA-1 token',
      world,
      (p) => send(world, p, signAsClient(tsa, signer, p.contractHash, { hash: 'sha1' })),
      { status: 422, code: 'SIGNATURE_HASH_MISMATCH', field: 'signedHash' },
    );
    const ec = await refused(
      'ECDSA over other bytes',
      world,
      (p) =>
        send(
          world,
          p,
          signAsClient(tsa, tokenSigner(pki, ecSigner), p.contractHash, {
            attributes: buildSignedAttributes(crypto.randomBytes(32), ecSigner.der),
          }),
        ),
      { status: 422, code: 'SIGNATURE_INVALID', field: 'signedHash' },
    );
    expect(ec.message).toContain('does not tell which');
    codes.delete('ECDSA over other bytes');
  });

  it('a timestamp over other bytes, and a tampered one', async () => {
    const signer = tokenSigner(pki, rsaSigner);
    await refused(
      'foreign timestamp',
      world,
      (p) =>
        send(
          world,
          p,
          signAsClient(tsa, signer, p.contractHash, {
            timestampToken: timestampOver(tsa, Buffer.from('another signature')),
          }),
        ),
      { status: 422, code: 'TIMESTAMP_IMPRINT_MISMATCH', field: 'timestampToken' },
    );
    await refused(
      'tampered timestamp',
      world,
      (p) => {
        const input = signAsClient(tsa, signer, p.contractHash);
        const token = Buffer.from(input.timestampToken, 'base64');
        token[token.length - 1]! ^= 0x01;
        return send(world, p, { ...input, timestampToken: token.toString('base64') });
      },
      { status: 422, code: 'TIMESTAMP_INVALID', field: 'timestampToken' },
    );
  });

  it('an expired certificate', async () => {
    const expired = await pki.issue('Expired Signer', {
      kind: 'rsa',
      startDate: opensslDate(new Date(Date.now() - 10 * 24 * hour)),
      endDate: opensslDate(new Date(Date.now() - 24 * hour)),
    });
    await refused(
      'expired certificate',
      world,
      (p) => send(world, p, signAsClient(tsa, tokenSigner(pki, expired), p.contractHash)),
      { status: 422, code: 'CERTIFICATE_EXPIRED', field: 'certificateChain' },
    );
  });

  it('garbage base64, naming the field', async () => {
    const signer = tokenSigner(pki, rsaSigner);
    await refused(
      'garbage base64',
      world,
      (p) =>
        send(world, p, { ...signAsClient(tsa, signer, p.contractHash), signedHash: 'not base64!' }),
      { status: 400, code: 'INVALID_BASE64', field: 'signedHash' },
    );
    const p = await prepare(world);
    const input = signAsClient(tsa, signer, p.contractHash);
    const chain = await refusal(
      send(world, p, { ...input, certificateChain: [input.certificateChain[0]!, 'AB=C'] }),
    );
    expect(chain).toMatchObject({ code: 'INVALID_BASE64', field: 'certificateChain.1' });
    // A second spelling of the same bytes (padding bits set) is refused too.
    const token = await refusal(send(world, p, { ...input, timestampToken: 'AB==' }));
    expect(token).toMatchObject({ code: 'INVALID_BASE64', field: 'timestampToken' });
  });

  it('a chain that does not start with the signer, and one that does not link', async () => {
    const signer = tokenSigner(pki, rsaSigner);
    await refused(
      'signer not first',
      world,
      (p) =>
        send(
          world,
          p,
          signAsClient(tsa, signer, p.contractHash, {
            chain: [pki.intermediate.der, rsaSigner.der],
          }),
        ),
      { status: 422, code: 'SIGNER_CERTIFICATE_NOT_FIRST', field: 'certificateChain' },
    );
    await refused(
      'chain not linking',
      world,
      (p) =>
        send(
          world,
          p,
          signAsClient(tsa, signer, p.contractHash, {
            chain: [rsaSigner.der, tsa.rootDer],
          }),
        ),
      { status: 422, code: 'CERTIFICATE_CHAIN_INVALID', field: 'certificateChain' },
    );
  });

  it('an untrusted signer: refused in production, accepted (and said so) in development', async () => {
    const signer = tokenSigner(pki, rsaSigner);
    await refused(
      'untrusted in production',
      production,
      (p) => send(production, p, signAsClient(tsa, signer, p.contractHash)),
      { status: 422, code: 'CERTIFICATE_UNTRUSTED', field: 'certificateChain' },
      await prepare(production),
    );
    const development = await createWorld(tools, { trustSignerRoot: false });
    try {
      const result = await finalize(development, await prepare(development), signer);
      expect(result.summary).toMatchObject({ trusted: false, level: 'B-T' });
      expect(pdfsigVerdicts(localStoreOf(development.h.deps.files).pathOf(result.sha256))).toEqual([
        true,
      ]);
    } finally {
      await development.h.close();
    }
  });

  it('a revoked certificate', async () => {
    const revoked = await pki.issue('Revoked Signer', { kind: 'rsa' });
    await pki.revoke(revoked);
    await refused(
      'revoked certificate',
      world,
      (p) => send(world, p, signAsClient(tsa, tokenSigner(pki, revoked), p.contractHash)),
      { status: 422, code: 'CERTIFICATE_REVOKED', field: 'certificateChain' },
    );
  });

  it("a preparation already finalized (409), an expired one (410), another tenant's (404)", async () => {
    const signer = tokenSigner(pki, rsaSigner);
    const done = await prepare(world);
    await finalize(world, done, signer);
    await refused(
      'already finalized',
      world,
      (p) => send(world, p, signAsClient(tsa, signer, p.contractHash)),
      { status: 409, code: 'PREPARATION_NOT_OPEN' },
      done,
    );
    const later = new ManualClock(new Date(Date.now() + 2 * hour));
    await refused(
      'expired preparation',
      world,
      (p) =>
        finalizeWithToken(
          { ...world.deps, clock: later },
          p.id,
          signAsClient(tsa, signer, p.contractHash),
          {
            tenantId: world.tenantId,
            commit: addVersion(world),
          },
        ),
      { status: 410, code: 'PREPARATION_EXPIRED' },
    );
    const foreign = await refusal(
      finalizeWithToken(world.deps, done.id, signAsClient(tsa, signer, done.contractHash), {
        tenantId: world.tenantId + 1000,
        commit: addVersion(world),
      }),
    );
    expect(foreign).toMatchObject({ code: 'PREPARATION_NOT_FOUND' });
  });

  it('a failing commit rolls the finalize back: the preparation stays open, no file stays', async () => {
    const preparation = await prepare(world);
    const before = await persisted(world);
    const error = await refusal(
      finalizeWithToken(
        world.deps,
        preparation.id,
        signAsClient(tsa, tokenSigner(pki, rsaSigner), preparation.contractHash),
        {
          tenantId: world.tenantId,
          commit: async () => {
            throw new CodedError('SESSION_CHANGED', 'the session moved on meanwhile');
          },
        },
      ),
    );
    expect(error.code).toBe('SESSION_CHANGED');
    expect(await persisted(world)).toEqual(before);
    // The signer can try again.
    const retried = await finalize(world, preparation, tokenSigner(pki, rsaSigner));
    expect(retried.summary.level).toBe('B-T');
  });

  it('every refusal has its own code', () => {
    expect(codes.size).toBe(20);
    expect(new Set(codes.values()).size).toBe(codes.size);
  });
});
