import { createHash, createPrivateKey, generateKeyPairSync, sign } from 'node:crypto';
import fs from 'node:fs';
import { CodedError } from '@esign/shared';
import {
  buildSignedAttributes,
  derBytes,
  derChildren,
  derElement,
  digestInfoSha256,
  readDerWhole,
  signedAttributesDigest,
} from '@esign/shared/cms';
import { statusOfCode } from '../../../src/http/errorStatuses';
import {
  assembleSignedData,
  parseSignedData,
  type RawSignatureInput,
  readSignedAttributes,
  signingCertificateMatches,
  verifyRawSignature,
} from '../../../src/signing/cms';
import { cmsVerifyVerdict, TestPki } from './testPki';

let pki: TestPki;
let content: Buffer;
let digest: Buffer;
const certificates: Record<string, Buffer> = {};

const keyOptions: Record<string, string[]> = {
  rsa: ['-algorithm', 'RSA', '-pkeyopt', 'rsa_keygen_bits:2048'],
  pss: [
    '-algorithm',
    'RSA-PSS',
    '-pkeyopt',
    'rsa_keygen_bits:2048',
    '-pkeyopt',
    'rsa_pss_keygen_md:sha256',
    '-pkeyopt',
    'rsa_pss_keygen_mgf1_md:sha256',
    '-pkeyopt',
    'rsa_pss_keygen_saltlen:32',
  ],
  pssUnrestricted: ['-algorithm', 'RSA-PSS', '-pkeyopt', 'rsa_keygen_bits:2048'],
  ec256: ['-algorithm', 'EC', '-pkeyopt', 'ec_paramgen_curve:P-256'],
  ec384: ['-algorithm', 'EC', '-pkeyopt', 'ec_paramgen_curve:P-384'],
  ec521: ['-algorithm', 'EC', '-pkeyopt', 'ec_paramgen_curve:P-521'],
  ed25519: ['-algorithm', 'ED25519'],
  other: ['-algorithm', 'RSA', '-pkeyopt', 'rsa_keygen_bits:2048'],
};

beforeAll(() => {
  pki = new TestPki();
  content = Buffer.from(`%PDF-1.7 the byte ranges of a prepared revision ${'x'.repeat(5000)}`);
  fs.writeFileSync(pki.file('content.bin'), content);
  digest = createHash('sha256').update(content).digest();
  for (const [name, options] of Object.entries(keyOptions)) {
    certificates[name] = pki.issue(name, options);
  }
}, 120_000);

afterAll(() => pki.remove());

/** The signed attributes for a signer, written to `<name>.attrs` for openssl to sign. */
function attributesFor(name: string): Buffer {
  const attributes = Buffer.from(buildSignedAttributes(digest, certificates[name] as Buffer));
  fs.writeFileSync(pki.file(`${name}.attrs`), attributes);
  return attributes;
}

/** openssl dgst -sha256 -sign over the attributes, with extra -sigopt options. */
function opensslSign(name: string, key: string, ...sigopts: string[]): Buffer {
  const options = sigopts.flatMap((option) => ['-sigopt', option]);
  pki.openssl(
    'dgst',
    '-sha256',
    '-sign',
    `${key}.key`,
    ...options,
    '-out',
    `${name}.sig`,
    `${name}.attrs`,
  );
  return pki.read(`${name}.sig`);
}

/** Raw r||s over the attributes, as a PKCS#11 CKM_ECDSA token returns it (made by Node). */
function rawEcdsaSignature(name: string, signedAttributes: Uint8Array): Buffer {
  const key = createPrivateKey(pki.read(`${name}.key`));
  return sign('sha256', signedAttributes, { key, dsaEncoding: 'ieee-p1363' });
}

const pssOptions = ['rsa_padding_mode:pss', 'rsa_pss_saltlen:32', 'rsa_mgf1_md:sha256'];

function refusal(run: () => unknown): { status: number; code: string; field?: string } {
  try {
    run();
  } catch (error) {
    if (error instanceof CodedError) {
      return {
        status: statusOfCode(error.code),
        code: error.code,
        ...(error.field ? { field: error.field } : {}),
      };
    }
    throw error;
  }
  throw new Error('not refused');
}

/** openssl's own CMS signature over the content with the RSA signer (a signing-time attribute included). */
function opensslCmsSign(out: string, ...options: string[]): Buffer {
  const signer = ['-signer', 'rsa.pem', '-inkey', 'rsa.key'];
  pki.openssl(
    'cms',
    '-sign',
    '-binary',
    '-in',
    'content.bin',
    ...signer,
    '-outform',
    'DER',
    '-out',
    out,
    ...options,
  );
  return pki.read(out);
}

/** Asks openssl cms -verify about a CMS over content.bin, with the CA as trust anchor or not. */
function opensslCmsVerify(cms: Buffer, trust: 'noverify' | 'ca'): string {
  return cmsVerifyVerdict(pki.dir, cms, 'content.bin', trust === 'ca' ? 'ca.pem' : undefined);
}

describe('verifyRawSignature: the token signature over the signed attributes', () => {
  it('RSA-2048 PKCS#1 v1.5 with SHA-256 (openssl dgst -sign)', () => {
    const signedAttributes = attributesFor('rsa');
    const signature = opensslSign('rsa', 'rsa');
    const verified = verifyRawSignature({
      signedAttributes,
      signature,
      certificate: certificates.rsa as Buffer,
    });
    expect(verified).toEqual({ signatureAlgorithm: 'rsaPkcs1Sha256', signature });
  });

  it('RSA PKCS#1 v1.5 made by a raw mechanism over digestInfoSha256 (CKM_RSA_PKCS), same bytes', () => {
    const signedAttributes = attributesFor('rsa');
    fs.writeFileSync(
      pki.file('rsa.digestinfo'),
      digestInfoSha256(signedAttributesDigest(signedAttributes)),
    );
    pki.openssl(
      'pkeyutl',
      '-sign',
      '-inkey',
      'rsa.key',
      '-in',
      'rsa.digestinfo',
      '-out',
      'rsa.raw.sig',
    );
    const signature = pki.read('rsa.raw.sig');
    expect(signature).toEqual(opensslSign('rsa', 'rsa'));
    expect(
      verifyRawSignature({ signedAttributes, signature, certificate: certificates.rsa as Buffer })
        .signatureAlgorithm,
    ).toBe('rsaPkcs1Sha256');
  });

  it('RSA-PSS when the certificate key is id-RSASSA-PSS, with or without parameters', () => {
    for (const name of ['pss', 'pssUnrestricted']) {
      const signedAttributes = attributesFor(name);
      const signature = opensslSign(name, name, ...pssOptions);
      const verified = verifyRawSignature({
        signedAttributes,
        signature,
        certificate: certificates[name] as Buffer,
      });
      expect(verified.signatureAlgorithm).toBe('rsaPssSha256');
    }
  });

  it('RSA-PSS with an rsaEncryption certificate when the request says pss', () => {
    const signedAttributes = attributesFor('rsa');
    const signature = opensslSign('rsa', 'rsa', ...pssOptions);
    const input = { signedAttributes, signature, certificate: certificates.rsa as Buffer };
    expect(verifyRawSignature({ ...input, scheme: 'pss' }).signatureAlgorithm).toBe('rsaPssSha256');
    expect(refusal(() => verifyRawSignature(input)).code).toBe('SIGNATURE_INVALID');
  });

  it('ECDSA P-256 and P-384 with SHA-256, given as DER', () => {
    for (const name of ['ec256', 'ec384']) {
      const signedAttributes = attributesFor(name);
      const signature = opensslSign(name, name);
      const verified = verifyRawSignature({
        signedAttributes,
        signature,
        certificate: certificates[name] as Buffer,
      });
      expect(verified).toEqual({ signatureAlgorithm: 'ecdsaSha256', signature });
    }
  });

  it('ECDSA given as raw r||s (what PKCS#11 CKM_ECDSA returns) comes back as DER', () => {
    for (const [name, length] of [
      ['ec256', 64],
      ['ec384', 96],
    ] as const) {
      const signedAttributes = attributesFor(name);
      const key = createPrivateKey(pki.read(`${name}.key`));
      // Many signatures, so that r or s with a leading zero or high bit are met too.
      for (let i = 0; i < 20; i++) {
        const raw = sign('sha256', signedAttributes, { key, dsaEncoding: 'ieee-p1363' });
        expect(raw).toHaveLength(length);
        const verified = verifyRawSignature({
          signedAttributes,
          signature: raw,
          certificate: certificates[name] as Buffer,
        });
        expect(verified.signature[0]).toBe(0x30);
        fs.writeFileSync(pki.file(`${name}.der.sig`), verified.signature);
        // openssl verifies the DER we made from r||s.
        pki.openssl('x509', '-in', `${name}.pem`, '-pubkey', '-noout', '-out', `${name}.pub`);
        expect(
          pki.opensslVerdict(
            'dgst',
            '-sha256',
            '-verify',
            `${name}.pub`,
            '-signature',
            `${name}.der.sig`,
            `${name}.attrs`,
          ),
        ).toContain('Verified OK');
      }
    }
  });
});

describe('verifyRawSignature: each bad input has its own code', () => {
  const base = (): RawSignatureInput => ({
    signedAttributes: attributesFor('rsa'),
    signature: opensslSign('rsa', 'rsa'),
    certificate: certificates.rsa as Buffer,
  });

  it('a signature made with another key: 422 SIGNATURE_INVALID', () => {
    attributesFor('rsa');
    const foreign = opensslSign('rsa', 'other');
    expect(refusal(() => verifyRawSignature({ ...base(), signature: foreign }))).toEqual({
      status: 422,
      code: 'SIGNATURE_INVALID',
      field: 'signedHash',
    });
  });

  it('a signature over other attributes (another revision digest): 422 SIGNATURE_INVALID', () => {
    const input = base();
    const other = buildSignedAttributes(
      createHash('sha256').update('other').digest(),
      certificates.rsa as Buffer,
    );
    expect(refusal(() => verifyRawSignature({ ...input, signedAttributes: other })).code).toBe(
      'SIGNATURE_INVALID',
    );
  });

  it('an ECDSA signature from another P-256 key, DER or raw, or altered: 422 SIGNATURE_INVALID', () => {
    const signedAttributes = attributesFor('ec256');
    const certificate = certificates.ec256 as Buffer;
    const { privateKey: otherKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
    const altered = Buffer.from(rawEcdsaSignature('ec256', signedAttributes));
    altered[10] = (altered[10] as number) ^ 1;
    for (const signature of [
      sign('sha256', signedAttributes, { key: otherKey, dsaEncoding: 'der' }),
      sign('sha256', signedAttributes, { key: otherKey, dsaEncoding: 'ieee-p1363' }),
      altered,
    ]) {
      expect(
        refusal(() => verifyRawSignature({ signedAttributes, signature, certificate })),
      ).toEqual({
        status: 422,
        code: 'SIGNATURE_INVALID',
        field: 'signedHash',
      });
    }
  });

  it('a P-384 signature given for a P-256 key (too long for either form): 400 SIGNATURE_MALFORMED', () => {
    const signedAttributes = attributesFor('ec256');
    const fromP384 = sign('sha256', signedAttributes, {
      key: createPrivateKey(pki.read('ec384.key')),
      dsaEncoding: 'der',
    });
    expect(
      refusal(() =>
        verifyRawSignature({
          signedAttributes,
          signature: fromP384,
          certificate: certificates.ec256 as Buffer,
        }),
      ).code,
    ).toBe('SIGNATURE_MALFORMED');
  });

  it('garbage or wrong-length signature bytes: 400 SIGNATURE_MALFORMED', () => {
    expect(
      refusal(() => verifyRawSignature({ ...base(), signature: Buffer.from('garbage') })),
    ).toEqual({
      status: 400,
      code: 'SIGNATURE_MALFORMED',
      field: 'signedHash',
    });
    const signedAttributes = attributesFor('ec256');
    for (const signature of [
      Buffer.alloc(0),
      Buffer.alloc(63, 1),
      Buffer.from('3006020101020101ff', 'hex'),
    ]) {
      expect(
        refusal(() =>
          verifyRawSignature({
            signedAttributes,
            signature,
            certificate: certificates.ec256 as Buffer,
          }),
        ).code,
      ).toBe('SIGNATURE_MALFORMED');
    }
  });

  it('a certificate that is not DER (PEM, garbage): 400 CERTIFICATE_MALFORMED', () => {
    for (const certificate of [pki.read('rsa.pem'), Buffer.from('not a certificate')]) {
      expect(refusal(() => verifyRawSignature({ ...base(), certificate }))).toEqual({
        status: 400,
        code: 'CERTIFICATE_MALFORMED',
        field: 'certificateChain',
      });
    }
  });

  it('a key the engine does not sign with (Ed25519, P-521): 422 CERTIFICATE_KEY_UNSUPPORTED', () => {
    for (const name of ['ed25519', 'ec521']) {
      const signedAttributes = attributesFor(name);
      expect(
        refusal(() =>
          verifyRawSignature({
            signedAttributes,
            signature: Buffer.alloc(64),
            certificate: certificates[name] as Buffer,
          }),
        ).code,
      ).toBe('CERTIFICATE_KEY_UNSUPPORTED');
    }
  });

  it('a scheme the key cannot have made: 422 SIGNATURE_SCHEME_MISMATCH', () => {
    const ec = {
      signedAttributes: attributesFor('ec256'),
      signature: opensslSign('ec256', 'ec256'),
      certificate: certificates.ec256 as Buffer,
    };
    expect(refusal(() => verifyRawSignature({ ...ec, scheme: 'pss' })).code).toBe(
      'SIGNATURE_SCHEME_MISMATCH',
    );
    const pss = {
      signedAttributes: attributesFor('pss'),
      signature: opensslSign('pss', 'pss', ...pssOptions),
      certificate: certificates.pss as Buffer,
    };
    expect(refusal(() => verifyRawSignature({ ...pss, scheme: 'pkcs1' })).code).toBe(
      'SIGNATURE_SCHEME_MISMATCH',
    );
  });
});

describe('assembleSignedData: a detached CMS that openssl cms -verify accepts', () => {
  const cases: [string, string[]][] = [
    ['rsa', []],
    ['pss', pssOptions],
    ['ec256', []],
    ['ec384', []],
  ];

  it.each(cases)(
    '%s: verified, with -noverify and with the CA as trust anchor',
    (name, sigopts) => {
      const signedAttributes = attributesFor(name);
      const verified = verifyRawSignature({
        signedAttributes,
        signature: opensslSign(name, name, ...sigopts),
        certificate: certificates[name] as Buffer,
      });
      const cms = assembleSignedData({
        signedAttributes,
        ...verified,
        certificates: [certificates[name] as Buffer, pki.caCertificate()],
      });
      expect(opensslCmsVerify(cms, 'noverify')).toContain('Verification successful');
      expect(opensslCmsVerify(cms, 'ca')).toContain('Verification successful');
      expect(pki.read('verified.bin')).toEqual(content);
    },
  );

  it('openssl -cades notices signing-certificate-v2 naming another certificate (the check is real)', () => {
    // Attributes that name the CA certificate, signed with the P-256 signer's key.
    const signedAttributes = Buffer.from(buildSignedAttributes(digest, pki.caCertificate()));
    fs.writeFileSync(pki.file('ec256.attrs'), signedAttributes);
    const cms = assembleSignedData({
      signedAttributes,
      signature: opensslSign('ec256', 'ec256'),
      signatureAlgorithm: 'ecdsaSha256',
      certificates: [certificates.ec256 as Buffer, pki.caCertificate()],
    });
    expect(opensslCmsVerify(cms, 'noverify')).toContain('Verification successful');
    expect(opensslCmsVerify(cms, 'ca')).not.toContain('Verification successful');
  });

  it('from raw r||s: the DER form goes into the CMS and openssl verifies it', () => {
    const signedAttributes = attributesFor('ec256');
    const raw = rawEcdsaSignature('ec256', signedAttributes);
    const verified = verifyRawSignature({
      signedAttributes,
      signature: raw,
      certificate: certificates.ec256 as Buffer,
    });
    const cms = assembleSignedData({
      signedAttributes,
      ...verified,
      certificates: [certificates.ec256 as Buffer],
    });
    expect(opensslCmsVerify(cms, 'noverify')).toContain('Verification successful');
  });

  it('has the structure PAdES asks for: detached id-data, v1 SignerInfo, signed attributes as signed', () => {
    const signedAttributes = attributesFor('rsa');
    const signature = opensslSign('rsa', 'rsa');
    const cms = assembleSignedData({
      signedAttributes,
      signature,
      signatureAlgorithm: 'rsaPkcs1Sha256',
      certificates: [certificates.rsa as Buffer],
    });
    fs.writeFileSync(pki.file('structure.p7s'), cms);
    const printed = pki
      .openssl('cms', '-cmsout', '-print', '-inform', 'DER', '-in', 'structure.p7s')
      .toString();
    expect(printed).toContain('contentType: pkcs7-signedData');
    expect(printed).toMatch(
      /eContentType: pkcs7-data \(1.2.840.113549.1.7.1\)\s+eContent: <ABSENT>/,
    );
    expect(printed).toMatch(/signerInfos:\s+version: 1\s+d.issuerAndSerialNumber:/);
    expect(printed).toContain('algorithm: rsaEncryption');
    expect(printed).toMatch(/unsignedAttrs:\s+<ABSENT>/);
    const parsed = parseSignedData(cms);
    expect(parsed.signedAttributes).toEqual(signedAttributes);
    expect(parsed.signature).toEqual(signature);
    expect(parsed.signerCertificate).toEqual(certificates.rsa);
  });

  it('carries the timestamp token as the unsigned signature-time-stamp attribute; openssl ts -verify accepts it', () => {
    const signedAttributes = attributesFor('ec256');
    const verified = verifyRawSignature({
      signedAttributes,
      signature: opensslSign('ec256', 'ec256'),
      certificate: certificates.ec256 as Buffer,
    });
    const imprint = createHash('sha256').update(verified.signature).digest('hex');
    const timestampToken = pki.timestamp(imprint);
    const cms = assembleSignedData({
      signedAttributes,
      ...verified,
      certificates: [certificates.ec256 as Buffer, pki.caCertificate()],
      timestampToken,
    });
    expect(opensslCmsVerify(cms, 'ca')).toContain('Verification successful');
    fs.writeFileSync(pki.file('structure.p7s'), cms);
    const printed = pki
      .openssl('cms', '-cmsout', '-print', '-inform', 'DER', '-in', 'structure.p7s')
      .toString();
    expect(printed).toContain('id-smime-aa-timeStampToken');

    const parsed = parseSignedData(Buffer.concat([cms, Buffer.alloc(300)])); // /Contents padding
    expect(parsed.timestampToken).toEqual(timestampToken);
    expect(parsed.signatureAlgorithm).toBe('ecdsaSha256');
    expect(parsed.digestAlgorithmOid).toBe('2.16.840.1.101.3.4.2.1');
    expect(parsed.certificates).toHaveLength(2);
    fs.writeFileSync(pki.file('extracted.tst'), parsed.timestampToken as Buffer);
    const imprintOfParsed = createHash('sha256').update(parsed.signature).digest('hex');
    expect(
      pki.opensslVerdict(
        'ts',
        '-verify',
        '-digest',
        imprintOfParsed,
        '-token_in',
        '-in',
        'extracted.tst',
        '-CAfile',
        'ca.pem',
        '-untrusted',
        'tsa.pem',
      ),
    ).toContain('Verification: OK');
  });

  it('parses back what it assembled, for every algorithm', () => {
    for (const [name, sigopts] of cases) {
      const signedAttributes = attributesFor(name);
      const verified = verifyRawSignature({
        signedAttributes,
        signature: opensslSign(name, name, ...sigopts),
        certificate: certificates[name] as Buffer,
      });
      const parsed = parseSignedData(
        assembleSignedData({
          signedAttributes,
          ...verified,
          certificates: [certificates[name] as Buffer],
        }),
      );
      expect(parsed.signatureAlgorithm).toBe(verified.signatureAlgorithm);
      expect(parsed.signedAttributes).toEqual(signedAttributes);
    }
  });

  it('parses a CMS that openssl made (subject key identifier signer, signing-time attribute)', () => {
    opensslCmsSign('openssl.p7s', '-keyid', '-md', 'sha256');
    const parsed = parseSignedData(pki.read('openssl.p7s'));
    expect('subjectKeyIdentifier' in parsed.signer).toBe(true);
    expect(parsed.signerCertificate).toEqual(certificates.rsa);
    expect(parsed.signatureAlgorithm).toBe('rsaPkcs1Sha256');
    expect(parsed.timestampToken).toBeUndefined();
  });
});

describe('assembleSignedData and parseSignedData: each bad input has its own code', () => {
  const good = () => {
    const signedAttributes = attributesFor('rsa');
    return {
      signedAttributes,
      signature: opensslSign('rsa', 'rsa'),
      signatureAlgorithm: 'rsaPkcs1Sha256' as const,
      certificates: [certificates.rsa as Buffer],
    };
  };

  it('attributes not in DER order, or not a SET: 400 SIGNED_ATTRIBUTES_MALFORMED', () => {
    const input = good();
    const attributes = Buffer.from(input.signedAttributes);
    const set = Buffer.from(attributes);
    // Swap the first two attributes (content-type and message-digest).
    const first = set.subarray(2, 2 + 2 + (set[3] as number));
    const secondStart = 2 + first.length;
    const second = set.subarray(secondStart, secondStart + 2 + (set[secondStart + 1] as number));
    const unsorted = Buffer.concat([
      set.subarray(0, 2),
      second,
      first,
      set.subarray(secondStart + second.length),
    ]);
    const implicit = Buffer.from(attributes);
    implicit[0] = 0xa0;
    for (const signedAttributes of [unsorted, implicit, Buffer.from('garbage')]) {
      expect(refusal(() => assembleSignedData({ ...input, signedAttributes }))).toEqual({
        status: 400,
        code: 'SIGNED_ATTRIBUTES_MALFORMED',
      });
    }
  });

  it('a timestamp token that is not a TimeStampToken: 400 TIMESTAMP_TOKEN_MALFORMED', () => {
    opensslCmsSign('not-a-token.p7s');
    for (const timestampToken of [Buffer.from('garbage'), pki.read('not-a-token.p7s')]) {
      expect(refusal(() => assembleSignedData({ ...good(), timestampToken }))).toEqual({
        status: 400,
        code: 'TIMESTAMP_TOKEN_MALFORMED',
        field: 'timestampToken',
      });
    }
  });

  it('a timestamp for another signature, or for raw r||s instead of its DER: 422 TIMESTAMP_IMPRINT_MISMATCH', () => {
    const input = good();
    const otherSignature = opensslSign('rsa', 'other');
    const foreign = pki.timestamp(createHash('sha256').update(otherSignature).digest('hex'));
    expect(refusal(() => assembleSignedData({ ...input, timestampToken: foreign }))).toEqual({
      status: 422,
      code: 'TIMESTAMP_IMPRINT_MISMATCH',
      field: 'timestampToken',
    });
    const signedAttributes = attributesFor('ec256');
    const raw = rawEcdsaSignature('ec256', signedAttributes);
    const verified = verifyRawSignature({
      signedAttributes,
      signature: raw,
      certificate: certificates.ec256 as Buffer,
    });
    const overRaw = pki.timestamp(createHash('sha256').update(raw).digest('hex'));
    expect(
      refusal(() =>
        assembleSignedData({
          signedAttributes,
          ...verified,
          certificates: [certificates.ec256 as Buffer],
          timestampToken: overRaw,
        }),
      ).code,
    ).toBe('TIMESTAMP_IMPRINT_MISMATCH');
  });

  it('an empty chain or a certificate that is not DER: 400 CERTIFICATE_MALFORMED', () => {
    for (const chain of [[], [certificates.rsa as Buffer, Buffer.from('garbage')]]) {
      expect(refusal(() => assembleSignedData({ ...good(), certificates: chain })).code).toBe(
        'CERTIFICATE_MALFORMED',
      );
    }
  });

  it('bytes that are not a CMS SignedData: 400 SIGNED_DATA_MALFORMED', () => {
    const cms = assembleSignedData(good());
    for (const bad of [
      Buffer.from('garbage'),
      cms.subarray(0, cms.length - 5),
      Buffer.concat([cms, Buffer.from('x')]),
      certificates.rsa as Buffer,
    ]) {
      expect(refusal(() => parseSignedData(bad))).toEqual({
        status: 400,
        code: 'SIGNED_DATA_MALFORMED',
      });
    }
  });
});

describe('readSignedAttributes: what verification reads from any signature', () => {
  it('reads ours: id-data, the document digest, signing-certificate-v2 naming the signer', () => {
    const values = readSignedAttributes(attributesFor('ec256'));
    expect(values.types).toEqual([
      '1.2.840.113549.1.9.3',
      '1.2.840.113549.1.9.4',
      '1.2.840.113549.1.9.16.2.47',
    ]);
    expect(values.contentType).toBe('1.2.840.113549.1.7.1');
    expect(values.messageDigest).toEqual(digest);
    const reference = values.signingCertificateV2;
    expect(reference?.hashAlgorithmOid).toBe('2.16.840.1.101.3.4.2.1');
    expect(reference && signingCertificateMatches(reference, certificates.ec256 as Buffer)).toBe(
      true,
    );
    expect(reference && signingCertificateMatches(reference, certificates.rsa as Buffer)).toBe(
      false,
    );
  });

  it("reads openssl's CAdES attributes (signing-time, signing-certificate-v2) and they name its signer", () => {
    const parsed = parseSignedData(opensslCmsSign('cades.p7s', '-cades', '-md', 'sha256'));
    const values = readSignedAttributes(parsed.signedAttributes as Buffer);
    expect(values.types).toContain('1.2.840.113549.1.9.5'); // signing-time
    expect(values.messageDigest).toEqual(digest);
    const reference = values.signingCertificateV2;
    expect(reference && signingCertificateMatches(reference, certificates.rsa as Buffer)).toBe(
      true,
    );
  });

  it('refuses a repeated attribute or one that is not single-valued: 400 SIGNED_ATTRIBUTES_MALFORMED', () => {
    const attributes = attributesFor('rsa');
    const members = derChildren(attributes, readDerWhole(attributes)).map((m) =>
      derBytes(attributes, m),
    );
    const repeated = derElement(
      0x31,
      members[0] as Uint8Array,
      members[0] as Uint8Array,
      members[1] as Uint8Array,
    );
    expect(refusal(() => readSignedAttributes(repeated))).toEqual({
      status: 400,
      code: 'SIGNED_ATTRIBUTES_MALFORMED',
    });
    expect(refusal(() => readSignedAttributes(Buffer.from('garbage'))).code).toBe(
      'SIGNED_ATTRIBUTES_MALFORMED',
    );
  });
});
