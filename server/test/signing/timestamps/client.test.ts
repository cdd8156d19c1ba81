import crypto from 'node:crypto';
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { AsnConvert } from '@peculiar/asn1-schema';
import {
  PKIFailureInfo,
  PKIFailureInfoFlags,
  PKIStatus,
  PKIStatusInfo,
  TimeStampReq,
  TimeStampResp,
} from '@peculiar/asn1-tsp';
import type { TestHttpsServer } from '../../../../test/support/httpsServer';
import { derOfPemFile } from '../../../../test/support/openssl';
import {
  createOpensslPki,
  type OpensslPki,
  opensslQuery,
  opensslReply,
  sendReply,
  startTsaServer,
} from '../../../../test/support/opensslTsa';
import { timestampResponse } from '../../../src/dev/tsaResponder';
import { systemClock } from '../../../src/platform/clock';
import { engineFetcher, timestampAuthority } from '../../../src/runtime';
import {
  type HttpTimestampAuthorityOptions,
  httpTimestampAuthority,
  requestTimestamp,
  type TimestampClientDeps,
} from '../../../src/signing/timestamps/client';
import { addTrustAnchor } from '../../../src/trust/service';
import { createHarness, type Harness } from '../../support/harness';

let pki: OpensslPki;
let tsa: TestHttpsServer;
let h: Harness;
let received: { authorization: string | undefined; contentType: string | undefined }[] = [];

beforeAll(async () => {
  pki = createOpensslPki();
  tsa = await startTsaServer({
    '/tsa': (query, request, response) => {
      received.push({
        authorization: request.headers.authorization,
        contentType: request.headers['content-type'],
      });
      sendReply(response, opensslReply(pki, query));
    },
    // openssl ts refuses to sign with such a certificate, so our responder signs with it.
    '/noncritical-eku': (query, _request, response) => {
      const tsaSigner = {
        certificateChain: [derOfPemFile(pki.tsaNonCriticalEku.certificate), pki.rootDer],
        sign: async (data: Buffer) =>
          crypto.sign(
            'sha256',
            data,
            crypto.createPrivateKey(fs.readFileSync(pki.tsaNonCriticalEku.key)),
          ),
      };
      timestampResponse({ clock: systemClock, tsaSigner }, query).then((reply) =>
        sendReply(response, reply),
      );
    },
    '/untrusted': (query, _request, response) =>
      sendReply(response, opensslReply(pki, query, pki.tsaUntrusted)),
    // Answers a query of its own for the same imprint: a valid token with another nonce.
    '/other-nonce': (query, _request, response) => {
      const imprint = AsnConvert.parse(query, TimeStampReq).messageImprint.hashedMessage;
      const hex = Buffer.from(imprint.buffer).toString('hex');
      sendReply(response, opensslReply(pki, opensslQuery(pki, hex)));
    },
    // Timestamps other data, keeping the nonce: only the imprint is wrong.
    '/other-imprint': (query, _request, response) => {
      const request = AsnConvert.parse(query, TimeStampReq);
      request.messageImprint.hashedMessage = new (
        request.messageImprint.hashedMessage.constructor as new (
          b: ArrayBuffer,
        ) => never
      )(new Uint8Array(crypto.randomBytes(32)).buffer);
      sendReply(response, opensslReply(pki, Buffer.from(AsnConvert.serialize(request))));
    },
    '/rejects': (_query, _request, response) => {
      const failInfo = new PKIFailureInfo();
      failInfo.fromNumber(PKIFailureInfoFlags.systemFailure);
      const reply = new TimeStampResp({
        status: new PKIStatusInfo({ status: PKIStatus.rejection, failInfo }),
      });
      sendReply(response, Buffer.from(AsnConvert.serialize(reply)));
    },
    '/http-500': (_query, _request, response) => response.writeHead(500).end('down'),
    '/html': (_query, _request, response) =>
      response.writeHead(200, { 'Content-Type': 'text/html' }).end('<html></html>'),
    '/garbage': (_query, _request, response) => sendReply(response, Buffer.from('not DER')),
    '/slow': () => {
      // Never answers: the client's deadline must end it.
    },
  });
  h = createHarness({ OUTBOUND_ALLOWLIST: '127.0.0.1' });
  // openssl stamps with the real time; our window is judged by the same clock.
  h.clock.set(new Date());
});

afterAll(async () => {
  await tsa.close();
  await h.close();
  pki.remove();
});

beforeEach(() => {
  received = [];
  h.clock.set(new Date());
});

/** The client's inputs for the test TSA at `pathname` (or at `url`), through the outbound policy. */
function depsFor(
  pathname: string,
  settings: Partial<HttpTimestampAuthorityOptions> = {},
): TimestampClientDeps {
  return {
    clock: h.deps.clock,
    timestamps: httpTimestampAuthority({
      url: tsa.url(pathname),
      fetcher: h.deps.fetcher,
      ...settings,
    }),
  };
}

const imprint = () => crypto.createHash('sha256').update(crypto.randomBytes(64)).digest();

async function failure(promise: Promise<unknown>) {
  const error = await promise.then(
    () => undefined,
    (caught: unknown) => caught,
  );
  expect(error).toMatchObject({ code: 'TIMESTAMP_FAILED' });
  return (error as { detailCode: string }).detailCode;
}

describe('TSA client against an openssl ts TSA over HTTPS', () => {
  it('gets a token for the imprint and verifies it (nonce, imprint, signature, chain)', async () => {
    const digest = imprint();
    const before = Date.now();
    const stamp = await requestTimestamp(depsFor('/tsa'), digest, { trustAnchors: [pki.rootDer] });
    expect(stamp.genTime.getTime()).toBeGreaterThanOrEqual(Math.floor(before / 1000) * 1000 - 1000);
    expect(stamp.genTime.getTime()).toBeLessThanOrEqual(Date.now() + 1000);
    expect(stamp.policy).toBe('1.2.3.4.1');
    expect(stamp.tsaChain).toHaveLength(2);
    expect(stamp.tsaChain[1]!.equals(pki.rootDer)).toBe(true);
    expect(stamp.token[0]).toBe(0x30);
    expect(received[0]).toEqual({
      authorization: undefined,
      contentType: 'application/timestamp-query',
    });
  });

  it('sends TSA_USERNAME and TSA_PASSWORD as HTTP Basic', async () => {
    await requestTimestamp(depsFor('/tsa', { username: 'signer', password: 'p:w' }), imprint(), {
      trustAnchors: [pki.rootDer],
    });
    expect(received[0]?.authorization).toBe(
      `Basic ${Buffer.from('signer:p:w').toString('base64')}`,
    );
  });

  it('trusts the global and tenant trust anchors of the database (the trust policy)', async () => {
    const deps = depsFor('/tsa');
    const anchors = async () => ({ trustAnchors: (await h.deps.trust(null)).timestampAnchors });
    expect(await failure(requestTimestamp(deps, imprint(), await anchors()))).toBe('TSA_UNTRUSTED');
    const pem = Buffer.from(
      `-----BEGIN CERTIFICATE-----\n${pki.rootDer.toString('base64')}\n-----END CERTIFICATE-----\n`,
    );
    const { anchor } = await addTrustAnchor(h.deps.db, h.now(), {
      tenantId: null,
      certificateFile: pem,
    });
    try {
      const stamp = await requestTimestamp(deps, imprint(), await anchors());
      expect(stamp.tsaChain.at(-1)!.equals(pki.rootDer)).toBe(true);
    } finally {
      await h.deps.db.deleteFrom('trust_anchors').where('id', '=', anchor.id).execute();
    }
  });

  it('refuses a token with another nonce (NONCE_MISMATCH)', async () => {
    const detail = await failure(
      requestTimestamp(depsFor('/other-nonce'), imprint(), { trustAnchors: [pki.rootDer] }),
    );
    expect(detail).toBe('NONCE_MISMATCH');
  });

  it('refuses a token over another imprint (IMPRINT_MISMATCH)', async () => {
    const detail = await failure(
      requestTimestamp(depsFor('/other-imprint'), imprint(), { trustAnchors: [pki.rootDer] }),
    );
    expect(detail).toBe('IMPRINT_MISMATCH');
  });

  it('refuses a TSA certificate whose timeStamping EKU is not critical (TSA_EKU_INVALID)', async () => {
    const detail = await failure(
      requestTimestamp(depsFor('/noncritical-eku'), imprint(), { trustAnchors: [pki.rootDer] }),
    );
    expect(detail).toBe('TSA_EKU_INVALID');
  });

  it('refuses a TSA under an untrusted root (TSA_UNTRUSTED)', async () => {
    const detail = await failure(
      requestTimestamp(depsFor('/untrusted'), imprint(), { trustAnchors: [pki.rootDer] }),
    );
    expect(detail).toBe('TSA_UNTRUSTED');
  });

  it('refuses a genTime away from our clock (GEN_TIME_OUTSIDE_WINDOW), never using local time', async () => {
    h.clock.set(new Date(Date.now() + 10 * 60_000));
    const detail = await failure(
      requestTimestamp(depsFor('/tsa'), imprint(), { trustAnchors: [pki.rootDer] }),
    );
    expect(detail).toBe('GEN_TIME_OUTSIDE_WINDOW');
  });

  it.each([
    ['/rejects', 'TSA_REJECTED'],
    ['/http-500', 'TSA_HTTP_STATUS'],
    ['/html', 'TSA_CONTENT_TYPE'],
    ['/garbage', 'TSA_RESPONSE_MALFORMED'],
  ])('fails with 502 TIMESTAMP_FAILED when %s answers (%s)', async (pathname, reason) => {
    const detail = await failure(
      requestTimestamp(depsFor(pathname), imprint(), { trustAnchors: [pki.rootDer] }),
    );
    expect(detail).toBe(reason);
  });

  it('fails with TSA_TIMEOUT when the TSA does not answer in time', async () => {
    const started = Date.now();
    const detail = await failure(
      requestTimestamp(depsFor('/slow', { timeoutMs: 500 }), imprint(), {
        trustAnchors: [pki.rootDer],
      }),
    );
    expect(detail).toBe('TSA_TIMEOUT');
    expect(Date.now() - started).toBeLessThan(5_000);
  });

  it('fails with TSA_UNREACHABLE when the TSA is down', async () => {
    const closedPort = tsa.port === 1 ? 2 : 1;
    const deps = depsFor('/tsa', { url: `https://127.0.0.1:${closedPort}/tsa` });
    const detail = await failure(
      requestTimestamp(deps, imprint(), { trustAnchors: [pki.rootDer] }),
    );
    expect(detail).toBe('TSA_UNREACHABLE');
  });

  it('reaches an http: TSA (most public TSAs): the token is signed, so it is verified like any other', async () => {
    const plain = http.createServer((request, response) => {
      const chunks: Buffer[] = [];
      request.on('data', (chunk: Buffer) => chunks.push(chunk));
      request.on('end', () => sendReply(response, opensslReply(pki, Buffer.concat(chunks))));
    });
    await new Promise<void>((resolve) => plain.listen(0, '127.0.0.1', resolve));
    try {
      const url = `http://127.0.0.1:${(plain.address() as AddressInfo).port}/tsa`;
      const deps = depsFor('/tsa', { url });
      const digest = imprint();
      const stamp = await requestTimestamp(deps, digest, { trustAnchors: [pki.rootDer] });
      expect(stamp.token.length).toBeGreaterThan(0);
      expect(stamp.policy).toBe('1.2.3.4.1');
    } finally {
      await new Promise((resolve) => plain.close(resolve));
    }
  });

  it('fails with TSA_UNREACHABLE for an address the outbound policy refuses', async () => {
    const closed = engineFetcher({ allowlist: { hosts: new Set<string>(), ranges: [] } });
    const deps = depsFor('/tsa', { fetcher: closed });
    const detail = await failure(
      requestTimestamp(deps, imprint(), { trustAnchors: [pki.rootDer] }),
    );
    expect(detail).toBe('TSA_UNREACHABLE');
  });
});

describe('TSA client without TSA_URL (development and sandbox)', () => {
  it('timestamps with the development TSA and verifies it against its CA', async () => {
    const config = {
      ...h.deps.config,
      tsa: { url: undefined, username: undefined, password: undefined },
    };
    const deps = { clock: h.deps.clock, timestamps: timestampAuthority({ ...h.deps, config }) };
    const stamp = await requestTimestamp(deps, imprint(), {
      trustAnchors: (await h.deps.trust(null)).timestampAnchors,
    });
    expect(stamp.policy).toBe('2.999.3161.1');
    expect(stamp.genTime.getTime()).toBe(Math.floor(h.clock.now().getTime() / 1000) * 1000);
  });
});
