import crypto from 'node:crypto';
import fs from 'node:fs/promises';
import path from 'node:path';
import { type PreparedSignature, type SignedCopy, writeSignedCopy } from '../../pdf/signing';
import type { CheckedSignature } from './checkSignature';

export type Placement = Pick<
  PreparedSignature,
  'byteRange' | 'contentsOffset' | 'contentsHexLength' | 'documentDigest'
>;

/** A signed file in the temp directory, with the SHA-256 and size it was written with. */
export interface SignedFile extends Pick<SignedCopy, 'sha256' | 'size'> {
  path: string;
}

/**
 * A new temp file in `tempDir`: a copy of the prepared file with the CMS in its placeholder,
 * nothing after it (the signature covers the whole file; validation material went into the
 * prepared revision's DSS). The prepared file is left as it is (a refused or failed finalize
 * can be retried on it).
 */
export async function writeSignedFile(
  tempDir: string,
  preparedPath: string,
  placement: Placement,
  checked: Pick<CheckedSignature, 'cms'>,
): Promise<SignedFile> {
  const target = path.join(tempDir, `signed-${crypto.randomUUID()}.pdf`);
  try {
    const copy = await writeSignedCopy(preparedPath, target, placement, checked.cms);
    // The bytes must still be the revision whose digest was signed (a damaged store is no PDF).
    if (!copy.documentDigest.equals(placement.documentDigest)) {
      throw new Error(
        `the prepared file ${preparedPath} no longer has the digest it was signed for`,
      );
    }
    return { path: target, sha256: copy.sha256, size: copy.size };
  } catch (error) {
    await fs.rm(target, { force: true });
    throw error;
  }
}
