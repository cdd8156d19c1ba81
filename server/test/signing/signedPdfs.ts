import { execFileSync } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { buildSignedAttributes } from '@esign/shared/cms';
import {
  type OpensslPki,
  opensslQuery,
  opensslReply,
  opensslTokenOf,
} from '../../../test/support/opensslTsa';
import { appendDss, preparePdfSignature } from '../../src/pdf/signatureUpdates';
import {
  type DssMaterial,
  embedSignature,
  type PrepareSignatureOptions,
} from '../../src/pdf/signing';
import { PdfReader } from '../../src/pdf/signing/document';
import { IncrementalUpdate } from '../../src/pdf/signing/incrementalUpdate';
import { dict, PdfNewStream, type PdfValue } from '../../src/pdf/signing/objects';
import { pageRef } from '../../src/pdf/signing/pages';
import { assembleSignedData, type SignatureAlgorithm } from '../../src/signing/cms';

/**
 * Signed PDFs for tests, made the way the service makes them: preparePdfSignature →
 * buildSignedAttributes → a signature with a test key (Node crypto) → an `openssl ts` timestamp
 * → assembleSignedData → embedSignature → appendDss.
 */

export interface FixtureSigner {
  /** DER of the signer certificate. */
  certificate: Buffer;
  /** DER certificates carried with it (intermediates), signer excluded. */
  chain: Buffer[];
  /** PEM private key file (EC or RSA). */
  keyFile: string;
}

export interface SignPdfOptions {
  signer: FixtureSigner;
  /** Where the prepared file goes until it is moved to the target. */
  tempDir: string;
  signingTime?: Date;
  fieldName?: string;
  prepare?: Partial<PrepareSignatureOptions>;
  /** An `openssl ts` TSA; without it the signature has no timestamp (B-B). */
  tsa?: OpensslPki;
  /** The token timestamps another signature value (same TSA, same length): a swapped token. */
  timestampOtherSignature?: boolean;
  /** Validation material appended as a DSS update after the signature (B-LT). */
  dss?: DssMaterial;
}

const sha256 = (bytes: Uint8Array) => crypto.createHash('sha256').update(bytes).digest();

/** An `openssl ts` token over a SHA-256 digest. */
export function opensslToken(tsa: OpensslPki, digest: Buffer): Buffer {
  return opensslTokenOf(tsa, opensslReply(tsa, opensslQuery(tsa, digest.toString('hex'))));
}

function signWithKey(
  keyFile: string,
  data: Uint8Array,
): { signature: Buffer; algorithm: SignatureAlgorithm } {
  const key = crypto.createPrivateKey(fs.readFileSync(keyFile));
  if (key.asymmetricKeyType === 'ec') {
    return {
      signature: crypto.sign('sha256', data, { key, dsaEncoding: 'der' }),
      algorithm: 'ecdsaSha256',
    };
  }
  return { signature: crypto.sign('sha256', data, key), algorithm: 'rsaPkcs1Sha256' };
}

/**
 * A CMS whose timestamp token is for another signature: assembleSignedData refuses such a
 * token, so a token of the same length for random bytes replaces the right one in place.
 */
function withForeignToken(cms: Buffer, token: Buffer, tsa: OpensslPki): Buffer {
  // A token's length varies by a byte or two (DER integers): enough tries to find an equal one.
  for (let attempt = 0; attempt < 60; attempt++) {
    const other = opensslToken(tsa, crypto.randomBytes(32));
    if (other.length !== token.length) continue;
    const at = cms.indexOf(token);
    return Buffer.concat([cms.subarray(0, at), other, cms.subarray(at + token.length)]);
  }
  throw new Error('no token of the same length for the swap');
}

/** Signs `source` into `target` (a new file); returns the CMS embedded. */
export async function signPdf(
  source: string,
  target: string,
  options: SignPdfOptions,
): Promise<Buffer> {
  const prepared = await preparePdfSignature(source, {
    signingTime: options.signingTime ?? new Date(),
    tempDir: options.tempDir,
    ...(options.fieldName === undefined ? {} : { fieldName: options.fieldName }),
    ...options.prepare,
  });
  try {
    const { signer } = options;
    const signedAttributes = buildSignedAttributes(prepared.documentDigest, signer.certificate);
    const { signature, algorithm } = signWithKey(signer.keyFile, signedAttributes);
    const token = options.tsa ? opensslToken(options.tsa, sha256(signature)) : undefined;
    let cms = assembleSignedData({
      signedAttributes,
      signature,
      signatureAlgorithm: algorithm,
      certificates: [signer.certificate, ...signer.chain],
      ...(token === undefined ? {} : { timestampToken: token }),
    });
    if (options.timestampOtherSignature && token && options.tsa) {
      cms = withForeignToken(cms, token, options.tsa);
    }
    await embedSignature(prepared.path, prepared, cms);
    if (options.dss) await appendDss(prepared.path, options.dss);
    fs.renameSync(prepared.path, target);
    return cms;
  } finally {
    fs.rmSync(prepared.path, { force: true });
  }
}

/**
 * Appends an incremental update that draws new text on page 1 (a new content stream added to
 * the page's /Contents): a change of the document's content, never allowed after a signature.
 */
export function appendContentChange(file: string, text = 'PAID IN FULL'): void {
  const update = PdfReader.read(file, (reader) => {
    const { ref } = pageRef(reader, 0);
    const page = reader.resolveDict(ref)!;
    const incremental = new IncrementalUpdate(reader);
    const stream = incremental.allocate();
    incremental.put(
      stream,
      new PdfNewStream(dict({}), Buffer.from(`BT /F1 24 Tf 100 100 Td (${text}) Tj ET`, 'latin1')),
    );
    const contents = page.get('Contents');
    const existing: PdfValue[] = Array.isArray(contents)
      ? contents
      : contents === undefined
        ? []
        : [contents];
    page.set('Contents', [...existing, stream]);
    incremental.put(ref, page);
    return incremental.serialize(reader.size, reader.source.byteAt(reader.size - 1));
  });
  fs.appendFileSync(file, update);
}

/** An NSS database (for `pdfsig -nssdir`) that trusts `caPem` for signing: `sql:DIR`. */
export function nssTrusting(dir: string, caPem: string): string {
  const nssDir = path.join(dir, 'nss');
  fs.mkdirSync(nssDir, { recursive: true });
  execFileSync('certutil', ['-N', '-d', `sql:${nssDir}`, '--empty-password'], { stdio: 'pipe' });
  execFileSync('certutil', ['-A', '-d', `sql:${nssDir}`, '-n', 'ca', '-t', 'CT,C,C', '-i', caPem], {
    stdio: 'pipe',
  });
  return `sql:${nssDir}`;
}
