import fs from 'node:fs/promises';
import { type PrepareSignatureOptions, preparePdfSignature } from '../../pdf/signing';
import { sealKey } from '../keys/signingKeys';
import { checkSignature, type FinalizeDeps } from './checkSignature';
import { serverKeyEvidence } from './finalize';
import { writeSignedFile } from './signedFile';

export interface SealOptions
  extends Partial<
    Pick<
      PrepareSignatureOptions,
      'signingTime' | 'signerName' | 'reason' | 'location' | 'appearance' | 'page'
    >
  > {
  /** The tenant whose trust anchors apply besides the global ones; default none. */
  tenantId?: number | null;
}

/**
 * Seals a PDF with the service seal (the audit PDF): prepare, sign with the seal key, timestamp,
 * the same checks and embedding as every finalize, no preparation row. Returns the path of a
 * new temp file in the FileStore's temp directory (B-T, B-LT when revocation data came), which
 * the caller stores or removes.
 */
export async function sealPdf(
  deps: FinalizeDeps,
  sourcePath: string,
  options: SealOptions = {},
): Promise<string> {
  const { tenantId = null, ...prepareOptions } = options;
  await deps.files.init();
  const createdAt = deps.clock.now();
  const prepared = await preparePdfSignature(sourcePath, {
    ...prepareOptions,
    signingTime: prepareOptions.signingTime ?? createdAt,
    tempDir: deps.files.tempDir,
  });
  try {
    const evidence = await serverKeyEvidence(
      deps,
      await sealKey(deps),
      prepared.documentDigest,
      tenantId,
    );
    const checked = await checkSignature(
      deps,
      {
        fieldName: prepared.fieldName,
        documentDigest: prepared.documentDigest,
        notBefore: createdAt,
        tenantId,
      },
      evidence,
    );
    return await writeSignedFile(deps.files.tempDir, prepared.path, prepared, checked);
  } finally {
    await fs.rm(prepared.path, { force: true });
  }
}
