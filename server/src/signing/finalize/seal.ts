import fs from 'node:fs/promises';
import { preparePdfSignature } from '../../pdf/signatureUpdates';
import type { PrepareSignatureOptions } from '../../pdf/signing';
import type { SigningKey } from '../keys/signingKey';
import { type CheckDeps, checkSignature, type FinalizeDeps } from './checkSignature';
import { revisionDss } from './preparedRevision';
import { keySigner, type PdfSigner, signerEvidence } from './serverKey';
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

/** What signing a PDF needs: a check's inputs, a timestamp authority and a temp directory. */
export type SignPdfDeps = CheckDeps & Pick<FinalizeDeps, 'timestamps' | 'files'>;

/**
 * Signs a PDF with `signer`: prepare a revision, sign its attributes, timestamp the signature,
 * check it as every finalize does (chain to the trust policy, validity, revocation), embed it.
 * The signer's chain and revocation answers (and those earlier signatures lack) go into the
 * revision's DSS. Returns the path of a new temp file in `files.tempDir` (PAdES B-LT when the
 * answers came, else B-T), which the caller keeps or removes.
 */
export async function signPdf(
  deps: SignPdfDeps,
  signer: PdfSigner,
  sourcePath: string,
  options: SealOptions = {},
): Promise<string> {
  const { tenantId = null, ...prepareOptions } = options;
  await deps.files.init();
  const createdAt = deps.clock.now();
  const dss = await revisionDss(deps, sourcePath, [], signer.chain);
  const prepared = await preparePdfSignature(sourcePath, {
    ...prepareOptions,
    ...(dss ? { dss } : {}),
    signingTime: prepareOptions.signingTime ?? createdAt,
    tempDir: deps.files.tempDir,
  });
  try {
    const evidence = await signerEvidence(deps, signer, prepared.documentDigest, tenantId);
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

/** Seals a PDF with a service key (the audit PDF's seal): `signPdf` with that key. */
export async function sealPdf(
  deps: FinalizeDeps,
  key: SigningKey,
  sourcePath: string,
  options: SealOptions = {},
): Promise<string> {
  return signPdf(deps, keySigner(deps, key), sourcePath, options);
}
