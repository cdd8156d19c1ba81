import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import {
  buildSignedAttributes,
  compareDerEncodings,
  derChildren,
  derSetOf,
  digestInfoSha256,
  readDerWhole,
  SignedAttributesError,
  signedAttributesDigest,
} from '../src/cms';

/**
 * The expected bytes are written independently of our encoder: an `openssl asn1parse -genconf`
 * description of RFC 5652 / RFC 5035 structures, for a certificate openssl made.
 */
let dir: string;
let certificate: Buffer;
const serialHex = '8f0012ab34cd56ef'; // high bit set: DER needs a leading zero byte
const documentDigest = createHash('sha256').update('the prepared revision').digest();

function openssl(...args: string[]): Buffer {
  return execFileSync('openssl', args, { cwd: dir, stdio: ['ignore', 'pipe', 'pipe'] });
}

beforeAll(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'signed-attrs-'));
  openssl(
    'req',
    '-x509',
    '-newkey',
    'ec',
    '-pkeyopt',
    'ec_paramgen_curve:P-256',
    '-nodes',
    '-keyout',
    'key.pem',
    '-out',
    'cert.der',
    '-outform',
    'DER',
    '-days',
    '30',
    '-utf8',
    '-set_serial',
    `0x${serialHex}`,
    '-subj',
    '/C=VN/O=Công ty Cổ phần Ký số/CN=Nguyễn Văn Thử',
  );
  certificate = fs.readFileSync(path.join(dir, 'cert.der'));
});

afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

function expectedByOpenssl(digest: Buffer, cert: Buffer): Buffer {
  const config = [
    'asn1 = SET:attributes',
    '[attributes]',
    'contentType = SEQUENCE:contentType',
    'messageDigest = SEQUENCE:messageDigest',
    'signingCertificateV2 = SEQUENCE:signingCertificateV2',
    '[contentType]',
    'type = OID:1.2.840.113549.1.9.3',
    'values = SET:contentTypeValues',
    '[contentTypeValues]',
    'value = OID:1.2.840.113549.1.7.1',
    '[messageDigest]',
    'type = OID:1.2.840.113549.1.9.4',
    'values = SET:messageDigestValues',
    '[messageDigestValues]',
    `value = FORMAT:HEX,OCTETSTRING:${digest.toString('hex')}`,
    '[signingCertificateV2]',
    'type = OID:1.2.840.113549.1.9.16.2.47',
    'values = SET:signingCertificateV2Values',
    '[signingCertificateV2Values]',
    'value = SEQUENCE:signingCertificateV2Value',
    '[signingCertificateV2Value]',
    'certs = SEQUENCE:certs',
    '[certs]',
    'essCertIdV2 = SEQUENCE:essCertIdV2',
    '[essCertIdV2]',
    `certHash = FORMAT:HEX,OCTETSTRING:${createHash('sha256').update(cert).digest('hex')}`,
    'issuerSerial = SEQUENCE:issuerSerial',
    '[issuerSerial]',
    'issuer = SEQUENCE:generalNames',
    `serialNumber = INTEGER:0x${serialHex}`,
    '[generalNames]',
    'directoryName = EXPLICIT:4C,SEQUENCE:issuerName',
    '[issuerName]',
    'c = SET:rdnC',
    'o = SET:rdnO',
    'cn = SET:rdnCN',
    '[rdnC]',
    'atv = SEQUENCE:atvC',
    '[atvC]',
    'type = OID:countryName',
    'value = PRINTABLESTRING:VN',
    '[rdnO]',
    'atv = SEQUENCE:atvO',
    '[atvO]',
    'type = OID:organizationName',
    'value = FORMAT:UTF8,UTF8String:Công ty Cổ phần Ký số',
    '[rdnCN]',
    'atv = SEQUENCE:atvCN',
    '[atvCN]',
    'type = OID:commonName',
    'value = FORMAT:UTF8,UTF8String:Nguyễn Văn Thử',
    '',
  ].join('\n');
  fs.writeFileSync(path.join(dir, 'attributes.cnf'), config);
  openssl('asn1parse', '-genconf', 'attributes.cnf', '-noout', '-out', 'expected.der');
  return fs.readFileSync(path.join(dir, 'expected.der'));
}

describe('signed attributes: content-type, message-digest, signing-certificate-v2', () => {
  it('are byte for byte the DER that openssl builds from the RFC 5652 / RFC 5035 structures', () => {
    const ours = Buffer.from(buildSignedAttributes(documentDigest, certificate));
    expect(ours.toString('hex')).toBe(
      expectedByOpenssl(documentDigest, certificate).toString('hex'),
    );
  });

  it('are a SET OF (tag 0x31) with exactly three attributes in ascending DER order', () => {
    const ours = buildSignedAttributes(documentDigest, certificate);
    expect(ours[0]).toBe(0x31);
    const members = derChildren(ours, readDerWhole(ours)).map((m) => ours.subarray(m.start, m.end));
    expect(members).toHaveLength(3);
    for (let i = 1; i < members.length; i++) {
      expect(
        compareDerEncodings(members[i - 1] as Uint8Array, members[i] as Uint8Array),
      ).toBeLessThan(0);
    }
    const printed = execFileSync('openssl', ['asn1parse', '-inform', 'DER'], {
      input: ours,
    }).toString();
    expect(printed).toContain(':contentType');
    expect(printed).toContain(':messageDigest');
    expect(printed).toContain(':id-smime-aa-signingCertificateV2');
    expect(printed).not.toContain('signingTime');
    // hashAlgorithm is omitted (DEFAULT sha256): no SHA-256 OID anywhere in the attributes.
    expect(printed).not.toContain('sha256');
  });

  it('are a pure function of (document digest, certificate)', () => {
    const again = buildSignedAttributes(
      Uint8Array.from(documentDigest),
      Uint8Array.from(certificate),
    );
    expect(Buffer.from(again)).toEqual(
      Buffer.from(buildSignedAttributes(documentDigest, certificate)),
    );
    const otherDigest = createHash('sha256').update('another revision').digest();
    expect(Buffer.from(buildSignedAttributes(otherDigest, certificate))).not.toEqual(
      Buffer.from(again),
    );
  });

  it('sort a SET OF by encodings, shorter ones padded with zero bytes', () => {
    const set = derSetOf([Uint8Array.of(0x04, 0x01, 0x02), Uint8Array.of(0x04, 0x01, 0x01)]);
    expect(Buffer.from(set).toString('hex')).toBe('3106040101040102');
    expect(compareDerEncodings(Uint8Array.of(1), Uint8Array.of(1, 0))).toBeLessThan(0);
    expect(compareDerEncodings(Uint8Array.of(1, 1), Uint8Array.of(2))).toBeLessThan(0);
  });
});

describe('signed attributes: refused inputs', () => {
  const refusal = (run: () => unknown) => {
    try {
      run();
    } catch (error) {
      if (error instanceof SignedAttributesError) return { code: error.code, field: error.field };
      throw error;
    }
    throw new Error('not refused');
  };

  it('a digest that is not 32 bytes', () => {
    expect(refusal(() => buildSignedAttributes(new Uint8Array(31), certificate))).toEqual({
      code: 'DOCUMENT_DIGEST_INVALID',
      field: 'documentDigest',
    });
    expect(refusal(() => buildSignedAttributes(new Uint8Array(48), certificate)).code).toBe(
      'DOCUMENT_DIGEST_INVALID',
    );
  });

  it('a certificate that is not DER X.509: garbage, truncated, trailing bytes, PEM', () => {
    const pem = Buffer.from(
      `-----BEGIN CERTIFICATE-----\n${certificate.toString('base64')}\n-----END CERTIFICATE-----\n`,
    );
    for (const bad of [
      Buffer.from('not a certificate'),
      certificate.subarray(0, certificate.length - 10),
      Buffer.concat([certificate, Buffer.of(0)]),
      pem,
      Buffer.alloc(0),
    ]) {
      expect(refusal(() => buildSignedAttributes(documentDigest, bad))).toEqual({
        code: 'CERTIFICATE_MALFORMED',
        field: 'signerCertificate',
      });
    }
  });
});

describe('what a token signs', () => {
  it('the SHA-256 of the attributes, and the PKCS#1 DigestInfo over it that openssl makes', () => {
    const attributes = buildSignedAttributes(documentDigest, certificate);
    const digest = signedAttributesDigest(attributes);
    expect(Buffer.from(digest)).toEqual(createHash('sha256').update(attributes).digest());
    fs.writeFileSync(
      path.join(dir, 'digestinfo.cnf'),
      [
        'asn1 = SEQUENCE:digestInfo',
        '[digestInfo]',
        'algorithm = SEQUENCE:algorithm',
        `digest = FORMAT:HEX,OCTETSTRING:${Buffer.from(digest).toString('hex')}`,
        '[algorithm]',
        'oid = OID:sha256',
        'parameters = NULL',
        '',
      ].join('\n'),
    );
    openssl('asn1parse', '-genconf', 'digestinfo.cnf', '-noout', '-out', 'digestinfo.der');
    expect(Buffer.from(digestInfoSha256(digest))).toEqual(
      fs.readFileSync(path.join(dir, 'digestinfo.der')),
    );
  });
});
