import crypto from 'node:crypto';
import { createReadStream } from 'node:fs';
import fs from 'node:fs/promises';
import { pdfErrors } from './errors';
import type { ByteRange, PreparedSignature } from './prepare';

/**
 * Writes the CMS (DER) as hex into the prepared file's `/Contents` placeholder, in place, padded
 * with zeros. Refuses a CMS larger than the placeholder, and a file whose placeholder is not
 * where `prepared` says (so a wrong pairing of file and preparation never corrupts a file).
 */
export async function embedSignature(
  preparedPath: string,
  prepared: Pick<PreparedSignature, 'contentsOffset' | 'contentsHexLength'>,
  cmsDer: Buffer,
): Promise<void> {
  const { contentsOffset, contentsHexLength } = prepared;
  if (cmsDer.length * 2 > contentsHexLength) {
    throw pdfErrors.signatureTooLarge(cmsDer.length, contentsHexLength / 2);
  }
  const file = await fs.open(preparedPath, 'r+');
  try {
    const edges = Buffer.alloc(1);
    await file.read(edges, 0, 1, contentsOffset - 1);
    const before = edges[0];
    await file.read(edges, 0, 1, contentsOffset + contentsHexLength);
    if (before !== 0x3c || edges[0] !== 0x3e) throw pdfErrors.placeholderNotFound();
    const hex = Buffer.from(
      cmsDer.toString('hex').toUpperCase().padEnd(contentsHexLength, '0'),
      'latin1',
    );
    await file.write(hex, 0, hex.length, contentsOffset);
  } finally {
    await file.close();
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
  const { size } = await fs.stat(filePath);
  const [a, b, c, d] = byteRange;
  // A range outside the file would hash fewer bytes than it claims: that is no digest at all.
  if (a < 0 || b < 0 || c < a + b || d < 0 || c + d > size) {
    throw pdfErrors.unreadable('the signature byte range lies outside the file');
  }
  const hash = crypto.createHash(hashName);
  for (const [start, length] of [
    [byteRange[0], byteRange[1]],
    [byteRange[2], byteRange[3]],
  ] as const) {
    if (length <= 0) continue;
    for await (const chunk of createReadStream(filePath, { start, end: start + length - 1 })) {
      hash.update(chunk as Buffer);
    }
  }
  return hash.digest();
}
