import crypto from 'node:crypto';
import { z } from 'zod';
import type { AppDeps } from '../context';
import { EngineError, engineValidationError } from '../pdf/engineError';
import { preparePdfSignature } from '../pdf/signatureUpdates';
import type { PrepareSignatureOptions } from '../pdf/signing';
import type { RevocationDeps } from '../signing/certificates';
import type { FinalizeDeps } from '../signing/finalize/checkSignature';
import { finalizeErrors } from '../signing/finalize/errors';
import { type Preparation, revisionDss } from '../signing/finalize/preparedRevision';
import { contractHashOf, type SignatureSummary } from '../signing/finalize/summary';
import {
  findPreparationRow,
  insertPreparation,
  markPreparationAbandoned,
  type PreparationRow,
  summariesOfSigned,
  validationMaterialOfSigned,
} from './queries';
import { byteRangeOf, materialOf, summaryOf } from './storedColumns';

const sha256Hex = (bytes: Buffer) => crypto.createHash('sha256').update(bytes).digest('hex');

/** What the signatures of stored files need: the engine's inputs, the database and the file store. */
export type SignatureDeps = FinalizeDeps &
  Pick<AppDeps, 'db' | 'files' | 'config' | 'secrets' | 'clock'>;

/** The store, and what asking OCSP responders and CRL servers needs (the DSS material). */
export type PreparationDeps = Pick<AppDeps, 'db' | 'clock' | 'files' | 'config'> & RevocationDeps;

export function preparationOf(row: PreparationRow): Preparation {
  const documentDigest = Buffer.from(row.document_digest, 'hex');
  return {
    id: row.id,
    tenantId: row.tenant_id,
    sourceSha256: row.source_sha256,
    preparedSha256: row.prepared_sha256,
    fieldName: row.field_name,
    byteRange: byteRangeOf(row.byte_range),
    contentsOffset: row.contents_offset,
    contentsHexLength: row.contents_hex_length,
    documentDigest,
    contractHash: contractHashOf(documentDigest),
    signingTime: new Date(row.signing_time),
    createdAt: new Date(row.created_at),
    expiresAt: new Date(row.expires_at),
    state: row.state,
    shownName: row.shown_name,
    certificateSha256: row.certificate_sha256,
    finalizedAt: row.finalized_at === null ? null : new Date(row.finalized_at),
    signedSha256: row.signed_sha256,
    summary: row.signature_summary === null ? null : summaryOf(row.signature_summary),
  };
}

export interface PrepareRevisionInput
  extends Pick<
    PrepareSignatureOptions,
    'signingTime' | 'signerName' | 'reason' | 'location' | 'appearance' | 'page'
  > {
  tenantId: number;
  /** The stored version (FileStore SHA-256) to sign. */
  sourceSha256: string;
  /** After this the preparation can no longer be finalized. */
  expiresAt: Date;
  /**
   * For a service key (seal, cloud_hsm): its certificate chain, signer first. Known before
   * signing, its revocation answers go into this revision's DSS, under the new signature.
   */
  signerChain?: Buffer[];
  /**
   * The certificate (DER) the signature will be made with, when known before (a cloud_hsm key,
   * a usb_token client that sent it): only that certificate may finalize the preparation.
   */
  certificate?: Buffer;
}

const inputSchema = z.object({
  tenantId: z.number().int().positive(),
  sourceSha256: z.string().regex(/^[0-9a-f]{64}$/, 'must be 64 lowercase hex digits'),
  expiresAt: z.date().refine((date) => !Number.isNaN(date.getTime()), 'not a valid date'),
});

/**
 * Prepares one more signature on a stored PDF version: the prepared file (source bytes
 * unchanged, then an incremental update with the field, an empty /Contents and the DSS
 * material of the earlier signatures and of `signerChain`) is streamed into the FileStore and
 * recorded with where its placeholder is and the digest to sign. Returns the preparation with
 * its `contractHash`. The file is never held in memory.
 */
export async function prepareRevision(
  deps: PreparationDeps,
  input: PrepareRevisionInput,
): Promise<Preparation> {
  const parsed = inputSchema.safeParse(input);
  if (!parsed.success) throw engineValidationError(parsed.error);
  const now = deps.clock.now();
  if (input.expiresAt.getTime() <= now.getTime()) {
    throw new EngineError('VALIDATION_ERROR', 'expiresAt must be in the future', {
      field: 'expiresAt',
      detailCode: 'INVALID',
    });
  }
  if (!(await deps.files.exists(input.sourceSha256))) {
    throw finalizeErrors.sourceNotFound(input.sourceSha256);
  }
  await deps.files.init();
  const { tenantId, sourceSha256, expiresAt, signerChain, certificate, ...options } = input;
  const kept = await validationMaterialOfSigned(deps.db, tenantId, sourceSha256);
  const prepared = await deps.files.withLocalFile(sourceSha256, async (sourcePath) => {
    const dss = await revisionDss(deps, sourcePath, kept.map(materialOf), signerChain);
    return preparePdfSignature(sourcePath, {
      ...options,
      ...(dss ? { dss } : {}),
      tempDir: deps.files.tempDir,
    });
  });
  const stored = await deps.files.putHashed(prepared.path, prepared);
  try {
    const row = await insertPreparation(deps.db, {
      tenant_id: tenantId,
      source_sha256: sourceSha256,
      prepared_sha256: stored.sha256,
      field_name: prepared.fieldName,
      byte_range: JSON.stringify(prepared.byteRange),
      contents_offset: prepared.contentsOffset,
      contents_hex_length: prepared.contentsHexLength,
      document_digest: prepared.documentDigest.toString('hex'),
      signing_time: input.signingTime.toISOString(),
      created_at: now.toISOString(),
      expires_at: expiresAt.toISOString(),
      state: 'open',
      shown_name: input.signerName ?? null,
      certificate_sha256: certificate ? sha256Hex(certificate) : null,
    });
    deps.files.keep(stored);
    return preparationOf(row);
  } catch (error) {
    await deps.files.remove(stored);
    throw error;
  }
}

/** The tenant's preparation (404 when another tenant's or none). */
export async function findPreparation(
  deps: Pick<AppDeps, 'db'>,
  id: number,
  tenantId: number,
): Promise<Preparation> {
  const row = await findPreparationRow(deps.db, id, tenantId);
  if (!row) throw finalizeErrors.preparationNotFound(id);
  return preparationOf(row);
}

/** The preparation if it can still be finalized: 409 when finalized or abandoned, 410 expired. */
export async function openPreparation(
  deps: Pick<AppDeps, 'db' | 'clock'>,
  id: number,
  tenantId: number,
): Promise<Preparation> {
  const preparation = await findPreparation(deps, id, tenantId);
  if (preparation.state !== 'open') throw finalizeErrors.preparationNotOpen(preparation.state);
  if (preparation.expiresAt.getTime() <= deps.clock.now().getTime()) {
    throw finalizeErrors.preparationExpired(preparation.expiresAt.toISOString());
  }
  return preparation;
}

/**
 * Gives up an open preparation (its session was cancelled or replaced): it can no longer be
 * finalized. 409 when it is not open.
 */
export async function abandonPreparation(
  deps: Pick<AppDeps, 'db'>,
  id: number,
  tenantId: number,
): Promise<void> {
  const preparation = await findPreparation(deps, id, tenantId);
  if (!(await markPreparationAbandoned(deps.db, preparation.id))) {
    throw finalizeErrors.preparationNotOpen(preparation.state);
  }
}

/**
 * The signature summaries kept for the tenant's signed files, by the signed file's SHA-256:
 * what the service knew when it made each signature (the identity binding among them).
 */
export async function signedSummaries(
  deps: Pick<AppDeps, 'db'>,
  tenantId: number,
  signedSha256s: string[],
): Promise<Map<string, SignatureSummary>> {
  const rows = await summariesOfSigned(deps.db, tenantId, signedSha256s);
  return new Map(rows.map((row) => [row.signed_sha256, summaryOf(row.signature_summary)]));
}
