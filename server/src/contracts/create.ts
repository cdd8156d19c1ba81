import crypto from 'node:crypto';
import fs from 'node:fs/promises';
import { appendAuditEvent, genesisHash } from '../audit/chain';
import { contractTrail } from '../audit/subject';
import type { AppDeps } from '../context';
import { inTransaction } from '../db/database';
import { DomainError, validationError } from '../errors/domainError';
import { inspectSignablePdf } from '../pdf/inspection';
import type { StoredFile } from '../storage/fileStore';
import type { ContractCaller } from './access';
import { conversionDirectory, convertDocx } from './document';
import { verifyExistingSignatures } from './existingSignatures';
import { contractTypeByNumber, insertContract, insertFileVersion, insertSigners } from './queries';
import { ContractCreateFields, type ExistingSignature, emailKey } from './schemas';
import { searchKeyOf } from './search';
import { receiveUpload, type UploadedFile } from './upload';

export interface ContractCreated {
  id: string;
  title: string;
  status: 'draft';
  fileUrl: string;
}

/** Where a contract's file downloads (the same credential as the API). */
export function contractFileUrl(
  deps: Pick<AppDeps, 'config'>,
  id: string,
  type: 'original' | 'signed',
): string {
  return `${deps.config.publicUrl}/api/contracts/${id}/download?type=${type}`;
}

function fieldError(field: string, code: string, message: string): DomainError {
  return new DomainError('VALIDATION_ERROR', message, { field, detailCode: code });
}

/**
 * The PDF to keep from an upload: a .pdf as sent, a .docx converted by LibreOffice; either is
 * checked with the signing engine's reader, and the signatures it already carries verified.
 * Returns the path of the PDF (in `workDir` for a conversion) and those signatures.
 */
async function pdfOf(
  deps: AppDeps,
  file: UploadedFile,
  workDir: () => Promise<string>,
  verification: { tenantId: number; acceptInvalid: boolean },
): Promise<{ pdfPath: string; existingSignatures: ExistingSignature[] }> {
  const pdfPath =
    file.kind === 'pdf'
      ? file.tempPath
      : await convertDocx(deps.config.docxConversion, file.tempPath, await workDir());
  const inspection = await inspectSignablePdf(pdfPath, 'file');
  const existingSignatures =
    inspection.signatures > 0 ? await verifyExistingSignatures(deps, pdfPath, verification) : [];
  return { pdfPath, existingSignatures };
}

/** The text parts of the creation form: the schema's fields and the upload switch. */
const creationFields: ReadonlySet<string> = new Set([
  ...Object.keys(ContractCreateFields.shape),
  'acceptInvalidSignatures',
]);

/**
 * POST /api/contracts: streams the upload to a temp file, checks the fields, makes and checks
 * the PDF, stores it, then writes the contract, its signers, version 1 of its file and the
 * `created` event in one transaction. Any failure leaves no row and no stored bytes.
 */
export async function createContract(
  deps: AppDeps,
  caller: ContractCaller,
  request: Request,
): Promise<ContractCreated> {
  const upload = await receiveUpload(request, deps.files.tempDir, creationFields);
  let workDir: string | null = null;
  let stored: StoredFile | null = null;
  try {
    const parsed = ContractCreateFields.safeParse(upload.fields);
    if (!parsed.success) throw validationError(parsed.error);
    const fields = parsed.data;
    if (!upload.file) throw fieldError('file', 'REQUIRED', 'file: is required (.pdf or .docx)');
    if (upload.file.size === 0) throw fieldError('file', 'EMPTY', 'file: is empty');
    const now = deps.clock.now();
    if (new Date(fields.expiredAt) <= now) {
      throw fieldError('expiredAt', 'NOT_IN_FUTURE', 'expiredAt: must be in the future');
    }
    const type = await contractTypeByNumber(deps.db, caller.scope.tenantId, fields.contractTypeId);
    if (!type) {
      throw new DomainError(
        'CONTRACT_TYPE_NOT_FOUND',
        `No contract type ${fields.contractTypeId} in the tenant`,
        { field: 'contractTypeId' },
      );
    }
    const { pdfPath, existingSignatures } = await pdfOf(
      deps,
      upload.file,
      async () => {
        workDir = await conversionDirectory(deps.files.tempDir);
        return workDir;
      },
      { tenantId: caller.scope.tenantId, acceptInvalid: fields.acceptInvalidSignatures },
    );
    stored = await deps.files.putFile(pdfPath);
    const file = upload.file;
    const kept = stored;
    const id = crypto.randomUUID();
    const at = now.toISOString();
    await inTransaction(deps.db, async (trx) => {
      const contract = await insertContract(trx, {
        uuid: id,
        tenant_id: caller.scope.tenantId,
        organization_id: caller.organizationId,
        contract_type_id: type.id,
        title: fields.title,
        search_key: searchKeyOf(fields.title),
        description: fields.description,
        status: 'draft',
        source_name: file.fileName,
        source_kind: file.kind,
        created_by_user_id: caller.actor.id,
        expired_at: fields.expiredAt,
        created_at: at,
        updated_at: at,
        audit_head: genesisHash,
        existing_signatures: JSON.stringify(existingSignatures),
      });
      await insertSigners(
        trx,
        fields.signers.map((signer, position) => ({
          contract_id: contract.id,
          position,
          signing_order: signer.order,
          role: signer.role,
          name: signer.name,
          email: signer.email,
          email_key: emailKey(signer.email),
          phone: signer.phone,
          status: 'waiting' as const,
          placement: signer.placement ? JSON.stringify(signer.placement) : null,
          identity_number: signer.identityNumber,
          tax_code: signer.taxCode,
        })),
      );
      await insertFileVersion(trx, {
        contract_id: contract.id,
        version: 1,
        kind: 'original',
        sha256: kept.sha256,
        size: kept.size,
        mime_type: 'application/pdf',
        signer_id: null,
        created_at: at,
      });
      await appendAuditEvent(trx, deps.clock, contractTrail(contract.id), {
        action: 'created',
        actor: caller.auditActor,
        origin: caller.origin,
        details: {
          fileName: file.fileName,
          sourceKind: file.kind,
          sha256: kept.sha256,
          size: kept.size,
          signers: fields.signers.length,
          ...(existingSignatures.length > 0
            ? {
                existingSignatures: existingSignatures.length,
                invalidExistingSignatures: existingSignatures.filter((s) => !s.isValid).length,
              }
            : {}),
        },
      });
    });
    deps.files.keep(stored);
    stored = null;
    return {
      id,
      title: fields.title,
      status: 'draft',
      fileUrl: contractFileUrl(deps, id, 'original'),
    };
  } catch (error) {
    if (stored) await deps.files.remove(stored);
    throw error;
  } finally {
    if (upload.file) await fs.rm(upload.file.tempPath, { force: true });
    if (workDir) await fs.rm(workDir, { recursive: true, force: true });
  }
}
