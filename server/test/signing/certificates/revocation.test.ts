import { execFile } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import { OCSPResponse } from '@peculiar/asn1-ocsp';
import { AsnConvert } from '@peculiar/asn1-schema';
import { parseAllowlist } from '../../../src/outbound/addressPolicy';
import { ManualClock, systemClock } from '../../../src/platform/clock';
import { loadConfig } from '../../../src/platform/config';
import { engineFetcher } from '../../../src/runtime';
import {
  checkChainRevocation,
  checkRevocation,
  RevocationCache,
  type RevocationDeps,
} from '../../../src/signing/certificates';
import { readCertificate } from '../../../src/signing/certificates/certificate';
import {
  judgeOcspResponse,
  type OcspQuery,
  ocspRequest,
} from '../../../src/signing/certificates/ocsp';
import { TestPki } from './testPki';

const run = promisify(execFile);
const day = 24 * 3600_000;

let pki: TestPki;
let deps: RevocationDeps;
beforeAll(async () => {
  pki = await TestPki.create();
  deps = { clock: systemClock, fetcher: engineFetcher({ allowlist: parseAllowlist('127.0.0.1') }) };
}, 60_000);
afterAll(async () => {
  await pki?.close();
});

function check(der: Buffer, at = new Date(), options = {}) {
  return checkRevocation(deps, der, pki.intermediate.der, at, options);
}

/** The check as a server whose clock is `ms` ahead would make it (answers look older). */
function checkWithClockAhead(der: Buffer, ms: number) {
  const later = new ManualClock(new Date(Date.now() + ms));
  return checkRevocation({ ...deps, clock: later }, der, pki.intermediate.der, new Date());
}

describe('Revocation by OCSP (the certificate AIA responder)', () => {
  it('is good, from OCSP, with the DER answer kept for the DSS (openssl agrees)', async () => {
    const leaf = await pki.issue('Good Signer');
    const result = await check(leaf.der);
    expect(result).toMatchObject({ status: 'good', source: 'ocsp', reasons: [] });
    expect(result.nextUpdate!.getTime()).toBeGreaterThan(Date.now());
    const answer = AsnConvert.parse(result.ocspResponse!, OCSPResponse);
    expect(answer.responseStatus).toBe(0);
    const file = path.join(pki.dir, 'kept.der');
    fs.writeFileSync(file, result.ocspResponse!);
    const chainFile = path.join(pki.dir, 'chain.pem');
    fs.writeFileSync(chainFile, pki.intermediate.pem + pki.root.pem);
    const { stdout } = await run('openssl', [
      'ocsp',
      '-respin',
      file,
      '-CAfile',
      chainFile,
      '-issuer',
      pki.intermediate.certFile,
      '-cert',
      leaf.certFile,
      // This kept answer echoes our nonce, not one openssl would make up now.
      '-no_nonce',
    ]);
    expect(stdout).toContain(': good');
  });

  it('asks with a SHA-256 CertID when told to', async () => {
    const leaf = await pki.issue('SHA-256 Signer');
    const result = await check(leaf.der, new Date(), { certIdHash: 'sha256' });
    expect(result).toMatchObject({ status: 'good', source: 'ocsp' });
  });

  it('is revoked after `openssl ca -revoke`, with the time and reason', async () => {
    const leaf = await pki.issue('Revoked Signer');
    const before = new Date(Date.now() - 1000);
    await pki.revoke(leaf, 'keyCompromise');
    const result = await check(leaf.der, new Date(Date.now() + 1000));
    expect(result).toMatchObject({
      status: 'revoked',
      source: 'ocsp',
      revocationReason: 'keyCompromise',
    });
    expect(result.revokedAt!.getTime()).toBeGreaterThanOrEqual(before.getTime() - 1000);
    expect(result.ocspResponse).toBeInstanceOf(Buffer);
  });

  it('judges as of `at`: revoked later than the signature time is still good then', async () => {
    const leaf = await pki.issue('Later Revoked');
    await pki.revoke(leaf, 'superseded');
    const result = await check(leaf.der, new Date(Date.now() - 3600_000));
    expect(result).toMatchObject({
      status: 'good',
      source: 'ocsp',
      revocationReason: 'superseded',
    });
    expect(result.revokedAt).toBeInstanceOf(Date);
  });

  it('is unknown for a serial the CA database does not know (no CRL to fall back on)', async () => {
    const stray = await pki.issueUnrecorded('Stray', pki.url('/ocsp'));
    const result = await check(stray.der);
    expect(result).toMatchObject({ status: 'unknown', source: 'ocsp' });
    expect(result.ocspResponse).toBeInstanceOf(Buffer);
    expect(result.reasons).toContain('the OCSP responder does not know the certificate');
  });

  it('accepts an answer signed by the issuer itself', async () => {
    const leaf = await pki.issue('Issuer Signed', { ocspUrl: pki.url('/ocsp-issuer') });
    expect(await check(leaf.der)).toMatchObject({ status: 'good', source: 'ocsp' });
  });

  it('refuses a forged answer (another key, same issuer name) and falls back to the CRL', async () => {
    const leaf = await pki.issue('Forged For', { ocspUrl: pki.url('/ocsp-forged') });
    await pki.revoke(leaf);
    await pki.publishCrl();
    const result = await check(leaf.der, new Date(Date.now() + 1000));
    expect(result).toMatchObject({ status: 'revoked', source: 'crl' });
    expect(result.ocspResponse).toBeUndefined();
    expect(result.reasons[0]).toMatch(/^OCSP answer refused/);
  });

  it.each([
    [
      'a forged answer, with nothing else to ask',
      '/ocsp-forged',
      "OCSP answer refused: the responder certificate was not issued by the certificate's issuer",
    ],
    [
      'a responder the issuer certified without id-kp-OCSPSigning',
      '/ocsp-no-eku',
      'lacks id-kp-OCSPSigning',
    ],
  ])('refuses %s: unknown', async (_case, responder, reason) => {
    const leaf = await pki.issue(`Refused ${responder.slice(1)}`, {
      profile: 'leaf_ocsp',
      ocspUrl: pki.url(responder),
    });
    const result = await check(leaf.der);
    expect(result).toMatchObject({ status: 'unknown', source: 'none' });
    expect(result.reasons[0]).toContain(reason);
  });

  it('refuses a stale answer (nextUpdate passed by our clock)', async () => {
    const leaf = await pki.issue('Stale', { profile: 'leaf_ocsp' });
    const result = await checkWithClockAhead(leaf.der, 3 * day);
    expect(result).toMatchObject({ status: 'unknown', source: 'none' });
    expect(result.reasons[0]).toContain('stale');
  });
});

describe('OCSP answers are bound to our question', () => {
  /** Asks the test responder directly and returns the raw answer. */
  async function rawAnswer(query: OcspQuery, nonce: Buffer): Promise<Buffer> {
    const response = await fetch(query.url, {
      method: 'POST',
      headers: { 'Content-Type': 'application/ocsp-request' },
      body: ocspRequest(query, nonce),
    });
    return Buffer.from(await response.arrayBuffer());
  }

  function queryFor(der: Buffer): OcspQuery {
    return {
      certificate: readCertificate(der),
      issuer: readCertificate(pki.intermediate.der),
      url: pki.url('/ocsp'),
      hash: 'sha1',
      timeoutMs: 5_000,
      skewMs: 60_000,
    };
  }

  it('refuses an answer that echoes another nonce (a replay)', async () => {
    const leaf = await pki.issue('Nonce');
    const query = queryFor(leaf.der);
    const sent = Buffer.alloc(16, 1);
    const der = await rawAnswer(query, sent);
    expect(judgeOcspResponse(der, query, sent, new Date())).toMatchObject({
      kind: 'answer',
      status: 'good',
    });
    expect(judgeOcspResponse(der, query, Buffer.alloc(16, 2), new Date())).toEqual({
      kind: 'unusable',
      reason: 'OCSP answer refused: the nonce is not ours',
    });
  });

  it('refuses an answer about another certificate', async () => {
    const asked = await pki.issue('Asked About');
    const other = await pki.issue('Someone Else');
    const nonce = Buffer.alloc(16, 3);
    const der = await rawAnswer(queryFor(other.der), nonce);
    expect(judgeOcspResponse(der, queryFor(asked.der), nonce, new Date())).toEqual({
      kind: 'unusable',
      reason: 'the OCSP answer is about another certificate',
    });
  });

  it('refuses garbage and error statuses as unusable, never throwing', () => {
    const query = queryFor(pki.intermediate.der);
    expect(judgeOcspResponse(Buffer.from('garbage'), query, null, new Date())).toMatchObject({
      kind: 'unusable',
    });
    // OCSPResponse { responseStatus tryLater(3) }
    expect(judgeOcspResponse(Buffer.from('30030a0103', 'hex'), query, null, new Date())).toEqual({
      kind: 'unusable',
      reason: 'the OCSP responder answered tryLater',
    });
  });
});

describe('Revocation of a whole chain', () => {
  it('asks each certificate of the chain of its own issuer; any revoked makes the chain revoked', async () => {
    const leaf = await pki.issue('Chain Revoked');
    await pki.revoke(leaf);
    const chain = [leaf.der, pki.intermediate.der, pki.root.der];
    const result = await checkChainRevocation(deps, chain, new Date(Date.now() + 1000));
    expect(result.status).toBe('revoked');
    expect(result.certificates).toHaveLength(2);
    expect(result.certificates[0]).toMatchObject({ status: 'revoked', source: 'ocsp' });
    // The intermediate is asked of the root: its CRL.
    expect(result.certificates[1]).toMatchObject({ status: 'good', source: 'crl' });
  });

  it('is unknown when a certificate above the signer cannot be checked', async () => {
    const leaf = await pki.issue('Chain Good');
    // The same intermediate certified without a CRL pointer: nothing to ask, unknown, said so.
    const silent = await pki.intermediateWithoutCrl();
    const result = await checkChainRevocation(
      deps,
      [leaf.der, silent.der, pki.root.der],
      new Date(),
    );
    expect(result.status).toBe('unknown');
    expect(result.certificates[0]).toMatchObject({ status: 'good', source: 'ocsp' });
    expect(result.certificates[1]).toMatchObject({ status: 'unknown', source: 'none' });
  });
});

describe('Revocation by CRL when OCSP does not answer', () => {
  it('responder down → CRL → good', async () => {
    const leaf = await pki.issue('Down Good', { ocspUrl: `${pki.deadBase}/ocsp` });
    const result = await check(leaf.der);
    expect(result).toMatchObject({ status: 'good', source: 'crl' });
    expect(result.crl).toBeInstanceOf(Buffer);
    expect(result.reasons[0]).toContain('OUTBOUND_UNREACHABLE');
    // The CRL kept is the one served: openssl reads it and verifies it with the issuer.
    const file = path.join(pki.dir, 'kept.crl');
    fs.writeFileSync(file, result.crl!);
    const { stderr } = await run('openssl', [
      'crl',
      '-inform',
      'DER',
      '-in',
      file,
      '-CAfile',
      pki.intermediate.certFile,
      '-noout',
    ]);
    expect(stderr).toContain('verify OK');
  });

  it('responder down → CRL → revoked, with the reason', async () => {
    const leaf = await pki.issue('Down Revoked', { ocspUrl: `${pki.deadBase}/ocsp` });
    await pki.revoke(leaf, 'cessationOfOperation');
    await pki.publishCrl();
    const result = await check(leaf.der, new Date(Date.now() + 1000));
    expect(result).toMatchObject({
      status: 'revoked',
      source: 'crl',
      revocationReason: 'cessationOfOperation',
    });
    expect(result.revokedAt).toBeInstanceOf(Date);
  });

  it('uses the CRL when the certificate names no responder', async () => {
    const leaf = await pki.issue('CRL Only', { profile: 'leaf_crl' });
    const result = await check(leaf.der);
    expect(result).toMatchObject({ status: 'good', source: 'crl' });
    expect(result.reasons).toEqual(['the certificate names no OCSP responder']);
  });

  it('refuses a stale CRL', async () => {
    const leaf = await pki.issue('Stale CRL', { profile: 'leaf_crl' });
    const result = await checkWithClockAhead(leaf.der, 10 * day);
    expect(result).toMatchObject({ status: 'unknown', source: 'none' });
    expect(result.reasons.join(' ')).toContain('CRL refused: stale');
  });

  it('both down → unknown, naming both failures', async () => {
    const leaf = await pki.issue('Both Down', {
      ocspUrl: `${pki.deadBase}/ocsp`,
      crlUrl: `${pki.deadBase}/int.crl`,
    });
    const result = await check(leaf.der);
    expect(result).toMatchObject({ status: 'unknown', source: 'none' });
    expect(result.reasons).toHaveLength(2);
    expect(result.reasons[0]).toMatch(/^OCSP request .* failed/);
    expect(result.reasons[1]).toMatch(/^CRL download .* failed/);
  });

  it('a CRL signed by another key is refused', async () => {
    // Another CA with the intermediate's name: its CRL has the right issuer name only.
    const other = await TestPki.create();
    try {
      const crlUrl = other.url('/int.crl');
      const misled = await pki.issue('Misled', { profile: 'leaf_crl', crlUrl });
      const refused = await checkRevocation(deps, misled.der, pki.intermediate.der, new Date());
      expect(refused).toMatchObject({ status: 'unknown', source: 'none' });
      expect(refused.reasons.join(' ')).toContain('CRL refused: the signature does not verify');
    } finally {
      await other.close();
    }
  }, 60_000);
});

describe('Answers kept in memory until nextUpdate', () => {
  it('asks the responder once for the same certificate, and judges each time as of `at`', async () => {
    const cached = { ...deps, revocationCache: new RevocationCache() };
    const leaf = await pki.issue('Cached');
    await pki.revoke(leaf);
    const before = pki.hits.length;
    const first = await checkRevocation(
      cached,
      leaf.der,
      pki.intermediate.der,
      new Date(Date.now() + 1000),
    );
    const again = await checkRevocation(
      cached,
      leaf.der,
      pki.intermediate.der,
      new Date(Date.now() - 3600_000),
    );
    expect(pki.hits.length - before).toBe(1);
    expect(first).toMatchObject({ status: 'revoked', source: 'ocsp' });
    expect(again).toMatchObject({ status: 'good', source: 'ocsp' });
    expect(again.ocspResponse).toEqual(first.ocspResponse);
  });

  it('asks again once nextUpdate has passed, and never keeps unknown', async () => {
    const cache = new RevocationCache();
    const leaf = await pki.issue('Cache Expiry');
    const clock = new ManualClock(new Date());
    await checkRevocation(
      { ...deps, clock, revocationCache: cache },
      leaf.der,
      pki.intermediate.der,
      new Date(),
    );
    expect(cache.size).toBe(1);
    clock.advance(2 * day);
    const before = pki.hits.length;
    await checkRevocation(
      { ...deps, clock, revocationCache: cache },
      leaf.der,
      pki.intermediate.der,
      new Date(),
    );
    expect(pki.hits.length).toBeGreaterThan(before);
    // (The refetched OCSP answer is stale by this clock, so the CRL answered and was kept.)
    const kept = cache.size;
    const stray = await pki.issueUnrecorded('Uncached', pki.url('/ocsp'));
    await checkRevocation(
      { ...deps, revocationCache: cache },
      stray.der,
      pki.intermediate.der,
      new Date(),
    );
    expect(cache.size).toBe(kept);
  });
});

describe('Revocation fetches go through the safe outbound client', () => {
  it('an internal address not in OUTBOUND_ALLOWLIST is never contacted', async () => {
    const leaf = await pki.issue('Not Allowlisted');
    const hitsBefore = pki.hits.length;
    const closed = { ...deps, fetcher: engineFetcher({ allowlist: parseAllowlist('') }) };
    const result = await checkRevocation(closed, leaf.der, pki.intermediate.der, new Date());
    expect(result).toMatchObject({ status: 'unknown', source: 'none' });
    expect(result.reasons.every((r) => r.includes('OUTBOUND_ADDRESS_FORBIDDEN'))).toBe(true);
    expect(pki.hits.length).toBe(hitsBefore);
  });

  it('the allowlist comes from the OUTBOUND_ALLOWLIST setting', async () => {
    const config = loadConfig({ OUTBOUND_ALLOWLIST: '127.0.0.1' });
    const leaf = await pki.issue('Configured');
    const result = await checkRevocation(
      { clock: systemClock, fetcher: engineFetcher({ allowlist: config.outboundAllowlist }) },
      leaf.der,
      pki.intermediate.der,
      new Date(),
    );
    expect(result).toMatchObject({ status: 'good', source: 'ocsp' });
  });

  it('an issuer that did not issue the certificate gives unknown without asking anyone', async () => {
    const leaf = await pki.issue('Wrong Issuer');
    const hitsBefore = pki.hits.length;
    const result = await checkRevocation(deps, leaf.der, pki.root.der, new Date());
    expect(result).toEqual({
      status: 'unknown',
      source: 'none',
      reasons: ['the issuer given did not issue the certificate'],
    });
    expect(pki.hits.length).toBe(hitsBefore);
  });
});
