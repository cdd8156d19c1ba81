import crypto from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { derUnsignedMagnitude } from '@esign/shared/cms';
import { AsnConvert } from '@peculiar/asn1-schema';
import { TimeStampReq } from '@peculiar/asn1-tsp';
import {
  createOpensslPki,
  type OpensslPki,
  opensslQuery,
  opensslReply,
  opensslTokenOf,
  readBody,
} from '../../test/support/opensslTsa';
import { AgentFailure, checkTimestampToken, requestTimestamp } from '../src/core';

let pki: OpensslPki;
let server: http.Server;
let url: string;
/** What the TSA does with the next query. */
let answer: (query: Buffer) => { status: number; body: Buffer } = (query) => ({
  status: 200,
  body: opensslReply(pki, query),
});

beforeAll(async () => {
  pki = createOpensslPki();
  server = http.createServer((request, response) => {
    void readBody(request).then((query) => {
      const { status, body } = answer(query);
      response.writeHead(status, { 'Content-Type': 'application/timestamp-reply' }).end(body);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/tsa`;
}, 60_000);

afterAll(async () => {
  await new Promise<void>((resolve) => server.close(() => resolve()));
  pki.remove();
});

async function refusal(work: () => unknown): Promise<string> {
  try {
    await work();
  } catch (error) {
    if (error instanceof AgentFailure) return `${error.code}: ${error.message}`;
    throw error;
  }
  throw new Error('accepted');
}

describe('timestamps the agent returns', () => {
  it('are over SHA-256 of the signature, with our nonce, signed by a timeStamping certificate', async () => {
    const imprint = crypto.randomBytes(32);
    const token = await requestTimestamp(url, imprint);
    expect(token[0]).toBe(0x30);
  });

  it('are refused when the TSA timestamps other data', async () => {
    answer = () => ({
      status: 200,
      body: opensslReply(pki, opensslQuery(pki, crypto.randomBytes(32).toString('hex'))),
    });
    expect(await refusal(() => requestTimestamp(url, crypto.randomBytes(32)))).toMatch(
      /^TIMESTAMP_FAILED: the token timestamps other data/,
    );
  });

  it('are refused when the nonce is not ours (a replayed answer)', async () => {
    const imprint = crypto.randomBytes(32);
    const query = opensslQuery(pki, imprint.toString('hex'));
    const token = opensslTokenOf(pki, opensslReply(pki, query));
    const theirNonce = new Uint8Array(AsnConvert.parse(query, TimeStampReq).nonce!);
    expect(() =>
      checkTimestampToken(token, imprint, derUnsignedMagnitude(theirNonce)),
    ).not.toThrow();
    expect(
      await refusal(() => checkTimestampToken(token, imprint, Uint8Array.of(1, 2, 3))),
    ).toMatch(/our nonce/);
  });

  it('are refused when a byte of the TSA signature changed', async () => {
    const imprint = crypto.randomBytes(32);
    const query = opensslQuery(pki, imprint.toString('hex'));
    const token = Buffer.from(opensslTokenOf(pki, opensslReply(pki, query)));
    const nonce = derUnsignedMagnitude(
      new Uint8Array(AsnConvert.parse(query, TimeStampReq).nonce!),
    );
    // The signature value is the last element of the token's only SignerInfo.
    token[token.length - 5]! ^= 0xff;
    expect(await refusal(() => checkTimestampToken(token, imprint, nonce))).toMatch(
      /TSA signature on the token does not verify/,
    );
  });

  it('fail with TIMESTAMP_FAILED when the TSA answers an HTTP error or nothing', async () => {
    answer = () => ({ status: 500, body: Buffer.alloc(0) });
    expect(await refusal(() => requestTimestamp(url, crypto.randomBytes(32)))).toMatch(
      /^TIMESTAMP_FAILED: .* answered HTTP 500/,
    );
    expect(
      await refusal(() => requestTimestamp('http://127.0.0.1:1/tsa', crypto.randomBytes(32))),
    ).toMatch(/^TIMESTAMP_FAILED/);
  });
});
