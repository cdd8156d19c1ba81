import { execFileSync } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import {
  decodeTimestampToken,
  derUnsignedMagnitude,
  readTimestampResponse,
  TimestampTokenError,
  timestampNonce,
  timestampRequest,
  timestampSignerCertificate,
} from '../src/cms';

/** A self-signed TSA and `openssl ts -reply`: the tokens here come from a tool we did not write. */
let dir: string;
const openssl = (...args: string[]) =>
  execFileSync('openssl', args, {
    cwd: dir,
    encoding: 'latin1',
    stdio: ['ignore', 'pipe', 'pipe'],
  });

beforeAll(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'tst-'));
  fs.writeFileSync(path.join(dir, 'serial'), '3A\n');
  fs.writeFileSync(
    path.join(dir, 'tsa.cnf'),
    `[ req ]
distinguished_name = dn
[ dn ]
[ tsa ]
default_tsa = tsa1
[ tsa1 ]
serial = ${path.join(dir, 'serial')}
crypto_device = builtin
signer_digest = sha256
default_policy = 1.3.6.1.4.1.99999.7
digests = sha256
accuracy = secs:1, millisecs:500
ordering = yes
tsa_name = yes
ess_cert_id_alg = sha256
[ tsa_ext ]
basicConstraints = CA:FALSE
keyUsage = critical,digitalSignature
extendedKeyUsage = critical,timeStamping
`,
  );
  openssl(
    ...['req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256', '-nodes'],
    ...['-keyout', 'tsa.key', '-out', 'tsa.pem', '-subj', '/C=VN/O=Thử nghiệm/CN=Test TSA'],
    ...['-days', '5', '-config', 'tsa.cnf', '-extensions', 'tsa_ext', '-utf8'],
  );
});

afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

function reply(query: Buffer): Buffer {
  fs.writeFileSync(path.join(dir, 'q.tsq'), query);
  openssl(
    ...['ts', '-reply', '-config', 'tsa.cnf', '-queryfile', 'q.tsq', '-signer', 'tsa.pem'],
    ...['-inkey', 'tsa.key', '-out', 'r.tsr'],
  );
  return fs.readFileSync(path.join(dir, 'r.tsr'));
}

describe('readTimestampResponse and decodeTimestampToken', () => {
  it('read what openssl ts -reply -text reads in an openssl token', () => {
    const imprint = crypto.createHash('sha256').update('hợp đồng số 7').digest();
    const nonce = timestampNonce();
    const answer = reply(timestampRequest(imprint, nonce));
    const response = readTimestampResponse(answer);
    expect(response).toMatchObject({ status: 0, statusName: 'granted', granted: true });
    const decoded = decodeTimestampToken(response.token!);

    const text = openssl('ts', '-reply', '-in', 'r.tsr', '-text');
    expect(text).toContain(`Policy OID: ${decoded.tstInfo.policy}`);
    expect(decoded.tstInfo.policy).toBe('1.3.6.1.4.1.99999.7');
    expect(text).toContain(`Nonce: 0x${nonce.toString('hex').toUpperCase()}`);
    expect(decoded.tstInfo.imprintAlgorithm).toBe('2.16.840.1.101.3.4.2.1');
    expect(Buffer.from(decoded.tstInfo.hashedMessage)).toEqual(imprint);
    expect(text).toContain(
      `Serial number: 0x${Buffer.from(decoded.tstInfo.serialNumber).toString('hex').toUpperCase()}`,
    );
    expect(Buffer.from(derUnsignedMagnitude(decoded.tstInfo.nonce!))).toEqual(nonce);
    // openssl prints "Time stamp: Nov 26 09:30:12.345 2026 GMT": the same instant to the second.
    const printed = /Time stamp: (.+) GMT/.exec(text)![1]!.replace(/\.\d+/, '');
    expect(Math.floor(decoded.tstInfo.genTime.getTime() / 1000)).toBe(
      new Date(`${printed} GMT`).getTime() / 1000,
    );

    // The signer named by issuer and serial is the TSA certificate; its signature verifies.
    const tsaPem = fs.readFileSync(path.join(dir, 'tsa.pem'), 'utf8');
    const tsa = new crypto.X509Certificate(tsaPem);
    expect(Buffer.from(timestampSignerCertificate(decoded)!)).toEqual(tsa.raw);
    expect(decoded.signer.digestAlgorithm).toBe('2.16.840.1.101.3.4.2.1');
    expect(
      crypto.verify(
        'sha256',
        decoded.signer.signedAttributes!,
        tsa.publicKey,
        decoded.signer.signature,
      ),
    ).toBe(true);
    const types = decoded.signer.attributes.map((attribute) => attribute.type);
    expect(types).toEqual(
      expect.arrayContaining([
        '1.2.840.113549.1.9.3',
        '1.2.840.113549.1.9.4',
        '1.2.840.113549.1.9.16.2.47',
      ]),
    );
  });

  it('read a rejection with its failInfo, and refuse what is not a reply or not a token', () => {
    // openssl is configured for SHA-256 only: a SHA-512 query is rejected with badAlg.
    const sha512Query = openssl(
      ...['ts', '-query', '-digest', 'ab'.repeat(64), '-sha512', '-cert'],
    );
    const rejected = readTimestampResponse(reply(Buffer.from(sha512Query, 'latin1')));
    expect(rejected).toMatchObject({ granted: false, statusName: 'rejection', token: undefined });
    expect(rejected.failInfo).toEqual(['badAlg']);

    expect(() => readTimestampResponse(Buffer.from('not DER'))).toThrow(TimestampTokenError);
    const granted = readTimestampResponse(
      reply(timestampRequest(crypto.randomBytes(32), timestampNonce())),
    ).token!;
    const cut = granted.subarray(0, granted.length - 10);
    expect(() => decodeTimestampToken(cut)).toThrow(
      expect.objectContaining({ problem: 'MALFORMED' }),
    );
    // A CMS signature over a document, not a timestamp token.
    fs.writeFileSync(path.join(dir, 'doc.txt'), 'văn bản');
    const signed = openssl(
      ...['cms', '-sign', '-in', 'doc.txt', '-signer', 'tsa.pem', '-inkey', 'tsa.key'],
      ...['-outform', 'DER', '-nodetach', '-binary'],
    );
    expect(() => decodeTimestampToken(Buffer.from(signed, 'latin1'))).toThrow(
      expect.objectContaining({ problem: 'NOT_TST_INFO' }),
    );
  });
});
