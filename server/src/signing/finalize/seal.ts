import fs from 'node:fs/promises';
import { preparePdfSignature } from '../../pdf/signatureUpdates';
import type { PrepareSignatureOptions } from '../../pdf/signing';
import { certifiedKey, type SigningKey } from '../keys/signingKey';
import { checkSignature, type FinalizeDeps } from './checkSignature';
import { revisionDss } from './preparedRevision';
import { serverKeyEvidence } from './serverKey';
import { writeSignedFile } from './signedFile';
import { emptyMaterial } from './validationData';

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
 * Seals a PDF with `key`, the service seal (the audit PDF): prepare, sign with it, timestamp,
 * the same checks and embedding as every finalize, no preparation row. The seal's chain and
 * revocation answers (and those the earlier signatures lack) go into the prepared revision's
 * DSS. Returns the path of a new temp file in the FileStore's temp directory (B-LT when the
 * seal's answer came, else B-T), which the caller stores or removes.
 */
export async function sealPdf(
  deps: FinalizeDeps,
  key: SigningKey,
  sourcePath: string,
  options: SealOptions = {},
): Promise<string> {
  const { tenantId = null, ...prepareOptions } = options;
  await deps.files.init();
  const createdAt = deps.clock.now();
  const dss = await revisionDss(deps, sourcePath, [], certifiedKey(key).chain);
  const prepared = await preparePdfSignature(sourcePath, {
    ...prepareOptions,
    ...(dss ? { dss } : {}),
    signingTime: prepareOptions.signingTime ?? createdAt,
    tempDir: deps.files.tempDir,
  });
  try {
    const evidence = await serverKeyEvidence(deps, key, prepared.documentDigest, tenantId);
    const checked = await checkSignature(
      deps,
      {
        fieldName: prepared.fieldName,
        preparedDss: dss ?? emptyMaterial(),
        documentDigest: prepared.documentDigest,
        notBefore: createdAt,
        tenantId,
      },
      evidence,
    );
    return (await writeSignedFile(deps.files.tempDir, prepared.path, prepared, checked)).path;
  } finally {
    await fs.rm(prepared.path, { force: true });
  }
}
