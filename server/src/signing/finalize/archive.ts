import fs from 'node:fs/promises';
import { preparePdfSignature } from '../../pdf/signatureUpdates';
import type { DssMaterial } from '../../pdf/signing';
import { requestTimestamp } from '../timestamps/client';
import type { PadesLevel } from '../verification/level';
import { verifyPdfSignatures } from '../verification/verifyPdf';
import type { FinalizeDeps } from './checkSignature';
import { type SignedFile, writeSignedFile } from './signedFile';
import { certificateSummary } from './summary';
import { isEmptyMaterial, materialForArchive } from './validationData';

/** Room for the TimeStampToken: a token with a TSA chain of a few certificates is 2-8 KB. */
const tokenSize = 16 * 1024;

/** What the archive revision added, for the caller's records (the audit trail). */
export interface ArchiveSummary {
  /** The document timestamp's field. */
  fieldName: string;
  genTime: string;
  /** The TSA certificate's subject. */
  tsa: string;
  serialNumber: string;
  /** Every signature of the archived file (document timestamps aside) and its level. */
  levels: Record<string, PadesLevel>;
}

export interface ArchivedFile extends SignedFile {
  summary: ArchiveSummary;
}

/**
 * The archive revision of a finished document (PAdES B-LTA): one incremental update of the file
 * at `sourcePath` with the DSS for every signature in it (each signer's chain and each
 * signature timestamp's TSA chain, with an OCSP or CRL answer for every certificate below the
 * top: from `stored` and the DSS when they hold one, else asked now), and an invisible document
 * timestamp (`/DocTimeStamp`, ETSI.RFC3161) from the configured TSA over the whole file. The
 * levels are then read back by verification, so that what is recorded is what the file proves.
 * Returns a new temp file in the FileStore's temp directory, which the caller stores or removes.
 * A TSA that fails is 502 TIMESTAMP_FAILED (requestTimestamp): nothing is left behind.
 */
export async function archivePdf(
  deps: FinalizeDeps,
  sourcePath: string,
  options: { tenantId: number | null; stored: DssMaterial[] },
): Promise<ArchivedFile> {
  await deps.files.init();
  const anchors = [...(await deps.trust(options.tenantId)).timestampAnchors];
  const dss = await materialForArchive(deps, sourcePath, options.stored, anchors);
  const prepared = await preparePdfSignature(sourcePath, {
    documentTimestamp: true,
    signingTime: deps.clock.now(),
    contentsSize: tokenSize,
    tempDir: deps.files.tempDir,
    ...(isEmptyMaterial(dss) ? {} : { dss }),
  });
  let written: SignedFile | undefined;
  try {
    // RFC 3161 over the byte range, as a document timestamp's imprint is (ETSI EN 319 142-1 5.4).
    const timestamp = await requestTimestamp(deps, prepared.documentDigest, {
      trustAnchors: anchors,
    });
    written = await writeSignedFile(deps.files.tempDir, prepared.path, prepared, {
      cms: timestamp.token,
    });
    const verification = await verifyPdfSignatures(deps, written.path, {
      tenantId: options.tenantId,
    });
    return {
      ...written,
      summary: {
        fieldName: prepared.fieldName,
        genTime: timestamp.genTime.toISOString(),
        tsa: certificateSummary(timestamp.tsaCertificate).subject,
        serialNumber: timestamp.serialNumber,
        levels: Object.fromEntries(
          verification.signatures
            .filter((signature) => signature.subFilter !== 'ETSI.RFC3161')
            .map((signature) => [signature.fieldName, signature.level]),
        ),
      },
    };
  } catch (error) {
    if (written) await fs.rm(written.path, { force: true });
    throw error;
  } finally {
    await fs.rm(prepared.path, { force: true });
  }
}
