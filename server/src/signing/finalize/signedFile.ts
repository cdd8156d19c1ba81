import crypto from 'node:crypto';
import { constants } from 'node:fs';
import fs from 'node:fs/promises';
import path from 'node:path';
import { digestByteRange, embedSignature, type PreparedSignature } from '../../pdf/signing';
import type { CheckedSignature } from './checkSignature';

export type Placement = Pick<
  PreparedSignature,
  'byteRange' | 'contentsOffset' | 'contentsHexLength' | 'documentDigest'
>;

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
): Promise<string> {
  const target = path.join(tempDir, `signed-${crypto.randomUUID()}.pdf`);
  await fs.copyFile(preparedPath, target, constants.COPYFILE_EXCL);
  try {
    // The bytes must still be the revision whose digest was signed (a damaged store is no PDF).
    const digest = await digestByteRange(target, placement.byteRange);
    if (!digest.equals(placement.documentDigest)) {
      throw new Error(
        `the prepared file ${preparedPath} no longer has the digest it was signed for`,
      );
    }
    await embedSignature(target, placement, checked.cms);
    return target;
  } catch (error) {
    await fs.rm(target, { force: true });
    throw error;
  }
}
