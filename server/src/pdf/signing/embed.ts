import crypto from 'node:crypto';
import fs, { type FileHandle } from 'node:fs/promises';
import { pdfErrors } from './errors';
import { streamChunks } from './fileChunks';
import type { ByteRange, PreparedSignature } from './prepare';

type Placeholder = Pick<PreparedSignature, 'contentsOffset' | 'contentsHexLength'>;

/** The CMS as the placeholder's hex digits, padded with zeros; refused when it does not fit. */
function contentsHex({ contentsHexLength }: Placeholder, cmsDer: Buffer): Buffer {
  if (cmsDer.length * 2 > contentsHexLength) {
    throw pdfErrors.signatureTooLarge(cmsDer.length, contentsHexLength / 2);
  }
  return Buffer.from(cmsDer.toString('hex').toUpperCase().padEnd(contentsHexLength, '0'), 'latin1');
}

/** Refuses a file whose placeholder is not where the preparation says (`<` and `>` around). */
async function checkPlaceholder(file: FileHandle, placeholder: Placeholder): Promise<void> {
  const { contentsOffset, contentsHexLength } = placeholder;
  const edges = Buffer.alloc(1);
  await file.read(edges, 0, 1, contentsOffset - 1);
  const before = edges[0];
  await file.read(edges, 0, 1, contentsOffset + contentsHexLength);
  if (before !== 0x3c || edges[0] !== 0x3e) throw pdfErrors.placeholderNotFound();
}

/**
 * Writes the CMS (DER) as hex into the prepared file's `/Contents` placeholder, in place, padded
 * with zeros. Refuses a CMS larger than the placeholder, and a file whose placeholder is not
 * where `prepared` says (so a wrong pairing of file and preparation never corrupts a file).
 */
export async function embedSignature(
  preparedPath: string,
  prepared: Placeholder,
  cmsDer: Buffer,
): Promise<void> {
  const hex = contentsHex(prepared, cmsDer);
  const file = await fs.open(preparedPath, 'r+');
  try {
    await checkPlaceholder(file, prepared);
    await file.write(hex, 0, hex.length, prepared.contentsOffset);
  } finally {
    await file.close();
  }
}

/** What writeSignedCopy read and wrote. */
export interface SignedCopy {
  /** SHA-256 over the prepared file's byte ranges, as read: the digest that was signed. */
  documentDigest: Buffer;
  /** SHA-256 (hex) and size of the signed file, as written: its FileStore name. */
  sha256: string;
  size: number;
}

/**
 * Writes a new file `targetPath`: the prepared file with the CMS in its placeholder (the checks
 * of embedSignature), the prepared file left as it is. One read of the prepared file feeds the
 * copy, the document digest over its byte ranges and the signed file's SHA-256 (the two share
 * everything before the placeholder, hashed once).
 */
export async function writeSignedCopy(
  preparedPath: string,
  targetPath: string,
  prepared: Pick<PreparedSignature, 'contentsOffset' | 'contentsHexLength' | 'byteRange'>,
  cmsDer: Buffer,
): Promise<SignedCopy> {
  const hex = contentsHex(prepared, cmsDer);
  const { contentsOffset, contentsHexLength, byteRange } = prepared;
  const source = await fs.open(preparedPath, 'r');
  try {
    const { size } = await source.stat();
    const holeStart = contentsOffset - 1;
    const holeEnd = contentsOffset + contentsHexLength + 1;
    // Only a byte range around exactly this hole, up to the end of the file, is a prepared one.
    const expected: ByteRange = [0, holeStart, holeEnd, size - holeEnd];
    if (byteRange.some((value, index) => value !== expected[index])) {
      throw pdfErrors.placeholderNotFound();
    }
    await checkPlaceholder(source, prepared);
    const target = await fs.open(targetPath, 'wx');
    try {
      const signed = crypto.createHash('sha256');
      await streamChunks(source, 0, holeStart, (chunk) => signed.update(chunk), {
        file: target,
        offset: 0,
      });
      const document = signed.copy();
      const filled = Buffer.concat([Buffer.from('<'), hex, Buffer.from('>')]);
      signed.update(filled);
      await target.write(filled, 0, filled.length, holeStart);
      await streamChunks(
        source,
        holeEnd,
        size - holeEnd,
        (chunk) => {
          document.update(chunk);
          signed.update(chunk);
        },
        { file: target, offset: holeEnd },
      );
      return { documentDigest: document.digest(), sha256: signed.digest('hex'), size };
    } finally {
      await target.close();
    }
  } finally {
    await source.close();
  }
}

/**
 * SHA-256 (or the hash named, for signatures made by other tools) over a byte range of a file,
 * streamed (what a signature's message-digest covers). Refuses (422) a range that is not inside
 * the file, in order.
 */
export async function digestByteRange(
  filePath: string,
  byteRange: ByteRange,
  hashName: 'sha1' | 'sha256' | 'sha384' | 'sha512' = 'sha256',
): Promise<Buffer> {
  const file = await fs.open(filePath, 'r');
  try {
    const { size } = await file.stat();
    const [a, b, c, d] = byteRange;
    // A range outside the file would hash fewer bytes than it claims: that is no digest at all.
    if (a < 0 || b < 0 || c < a + b || d < 0 || c + d > size) {
      throw pdfErrors.unreadable('the signature byte range lies outside the file');
    }
    const hash = crypto.createHash(hashName);
    await streamChunks(file, a, b, (chunk) => hash.update(chunk));
    await streamChunks(file, c, d, (chunk) => hash.update(chunk));
    return hash.digest();
  } finally {
    await file.close();
  }
}
