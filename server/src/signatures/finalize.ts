import { type Db, inTransaction } from '../db/database';
import { runPdfTask } from '../pdf/worker/pool';
import { readDssTask } from '../pdf/worker/tasks';
import { type ArchiveSummary, archivePdf } from '../signing/finalize/archive';
import {
  checkSignature,
  explainedRevisions,
  type SignatureEvidence,
} from '../signing/finalize/checkSignature';
import { finalizeErrors, type MistakenDigest } from '../signing/finalize/errors';
import type { Preparation } from '../signing/finalize/preparedRevision';
import { serverKeyEvidence } from '../signing/finalize/serverKey';
import { writeSignedFile } from '../signing/finalize/signedFile';
import {
  checkPreparedCertificate,
  checkSigner,
  type SignerExpectations,
} from '../signing/finalize/signerChecks';
import type { SignatureSummary } from '../signing/finalize/summary';
import { decodeTokenInput, type TokenSignatureInput } from '../signing/finalize/tokenInput';
import type { SigningKey } from '../signing/keys/signingKey';
import type { StoredFile } from '../storage/fileStore';
import { openPreparation, type SignatureDeps } from './preparations';
import { findPreparationRow, markPreparationFinalized, otherDocumentDigests } from './queries';
import { materialText } from './storedColumns';

/** The signed file as stored, handed to the caller's part of the transaction. */
export interface SignedRevision {
  preparationId: number;
  /** FileStore SHA-256 of the file the revision was prepared from. */
  sourceSha256: string;
  /** FileStore SHA-256 of the signed file. */
  sha256: string;
  size: number;
  summary: SignatureSummary;
  /**
   * When the caller said this signature finishes the document: the archive revision made on
   * the signed file (DSS for every signature and a document timestamp, B-LTA), stored; the
   * caller records it as the version after the signed one.
   */
  archived?: { sha256: string; size: number; summary: ArchiveSummary };
}

export interface FinalizeOptions<T> extends SignerExpectations {
  tenantId: number;
  /** A timestamp before this (less a minute) is refused; default the preparation's creation. */
  notBefore?: Date;
  /**
   * The caller's part of the one transaction that makes the signature count (a new
   * file_versions row, the session's state, ...). Throwing rolls everything back.
   */
  commit: (trx: Db, signed: SignedRevision) => Promise<T>;
  /**
   * Whether this signature is the last the document needs, asked once the signature checked
   * out: then the archive revision (archivePdf) is made before the transaction, so that the
   * document is finished with its final file at once. A TSA that fails then refuses the
   * signature (502 TIMESTAMP_FAILED), nothing written, as a failing signature timestamp does.
   * A guess the transaction proves wrong leaves an unnamed file for the store sweep.
   */
  finishes?: () => Promise<boolean>;
}

export interface FinalizeResult<T> extends SignedRevision {
  /** What `commit` returned. */
  committed: T;
}

/**
 * Finalizes a preparation with a signature made elsewhere (a USB token, a partner's HSM):
 * strict base64, then every check of checkSignature, then the signed file (CMS embedded,
 * nothing appended) into the FileStore and, in one transaction, the preparation finalized with
 * the validation material obtained (for the next revision's DSS) and the caller's `commit`. A refusal (4xx) changes nothing: the preparation stays open for a retry.
 */
export async function finalizeWithToken<T>(
  deps: SignatureDeps,
  preparationId: number,
  input: TokenSignatureInput,
  options: FinalizeOptions<T>,
): Promise<FinalizeResult<T>> {
  const evidence = decodeTokenInput(input);
  const preparation = await openPreparation(deps, preparationId, options.tenantId);
  return finalizePreparation(deps, preparation, evidence, options);
}

/**
 * Signs a preparation with one of the service's keys (the seal, a cloud_hsm signer key): the
 * shared attribute builder, the key store, a timestamp from the TSA (502 TIMESTAMP_FAILED when
 * it fails: never a local time), then the same finalize as a token signature.
 */
export async function signWithServerKey<T>(
  deps: SignatureDeps,
  preparationId: number,
  key: SigningKey,
  options: FinalizeOptions<T>,
): Promise<FinalizeResult<T>> {
  const preparation = await openPreparation(deps, preparationId, options.tenantId);
  const evidence = await serverKeyEvidence(deps, key, preparation.documentDigest, options.tenantId);
  return finalizePreparation(deps, preparation, evidence, options);
}

/**
 * What a client may have signed instead of the preparation's digest: another preparation of
 * the same document (the newest first), the whole prepared file, the unprepared file.
 */
async function mistakenDigests(
  deps: SignatureDeps,
  preparation: Preparation,
): Promise<MistakenDigest[]> {
  const others = await otherDocumentDigests(
    deps.db,
    {
      id: preparation.id,
      tenant_id: preparation.tenantId,
      source_sha256: preparation.sourceSha256,
    },
    explainedRevisions,
  );
  return [
    ...others.map((hex) => ({ digest: Buffer.from(hex, 'hex'), of: 'OTHER_PREPARATION' as const })),
    { digest: Buffer.from(preparation.preparedSha256, 'hex'), of: 'WHOLE_FILE' },
    { digest: Buffer.from(preparation.sourceSha256, 'hex'), of: 'UNPREPARED_FILE' },
  ];
}

async function finalizePreparation<T>(
  deps: SignatureDeps,
  preparation: Preparation,
  evidence: SignatureEvidence,
  options: FinalizeOptions<T>,
): Promise<FinalizeResult<T>> {
  const notBefore =
    options.notBefore && options.notBefore > preparation.createdAt
      ? options.notBefore
      : preparation.createdAt;
  if (evidence.chain[0]) checkPreparedCertificate(preparation, evidence.chain[0]);
  const { checked, signedFile } = await deps.files.withLocalFile(
    preparation.preparedSha256,
    async (preparedPath) => {
      const checked = await checkSignature(
        deps,
        {
          fieldName: preparation.fieldName,
          preparedDss: await runPdfTask(readDssTask, preparedPath),
          documentDigest: preparation.documentDigest,
          notBefore,
          tenantId: preparation.tenantId,
          mistakenDigests: () => mistakenDigests(deps, preparation),
        },
        evidence,
      );
      const identity = checkSigner(
        preparation,
        evidence.chain[0]!,
        new Date(checked.summary.timestamp.genTime),
        options,
      );
      if (identity) checked.summary.identity = identity;
      const written = await writeSignedFile(deps.files.tempDir, preparedPath, preparation, checked);
      return { checked, signedFile: written };
    },
  );
  const stored = await deps.files.putHashed(signedFile.path, signedFile);
  let archive: StoredFile | undefined;
  try {
    const signed: SignedRevision = {
      preparationId: preparation.id,
      sourceSha256: preparation.sourceSha256,
      sha256: stored.sha256,
      size: stored.size,
      summary: { ...checked.summary, signedSha256: stored.sha256 },
    };
    if (await options.finishes?.()) {
      const archived = await deps.files.withLocalFile(stored.sha256, (file) =>
        archivePdf(deps, file, {
          tenantId: preparation.tenantId,
          stored: checked.dss ? [checked.dss] : [],
        }),
      );
      archive = await deps.files.putHashed(archived.path, archived);
      signed.archived = { sha256: archive.sha256, size: archive.size, summary: archived.summary };
    }
    const committed = await inTransaction(deps.db, async (trx) => {
      const finalized = await markPreparationFinalized(trx, preparation.id, {
        finalizedAt: deps.clock.now().toISOString(),
        signedSha256: stored.sha256,
        summary: JSON.stringify(signed.summary),
        validationMaterial: checked.dss ? materialText(checked.dss) : null,
      });
      if (!finalized) {
        // Another finalize of the same preparation committed first.
        const now = await findPreparationRow(trx, preparation.id, preparation.tenantId);
        throw finalizeErrors.preparationNotOpen(now?.state ?? 'gone');
      }
      return options.commit(trx, signed);
    });
    deps.files.keep(stored);
    if (archive) deps.files.keep(archive);
    return { ...signed, committed };
  } catch (error) {
    await deps.files.remove(stored);
    if (archive) await deps.files.remove(archive);
    throw error;
  }
}
