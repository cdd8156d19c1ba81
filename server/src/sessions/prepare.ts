import type { AppDeps } from '../context';
import type { ContractFileVersionRow, ContractRow, ContractSignerRow } from '../contracts/queries';
import type { SigningMethod } from '../db/schema';
import { ApiError } from '../errors/apiError';
import { pageBox, type SignatureImage } from '../pdf/signing';
import { abandonPreparation, type Preparation, prepareRevision } from '../signing/finalize';
import { appearanceLines, signatureBox } from './rules';

/** Shown in the signature dictionary's /Reason, per method. */
const reasons: Record<SigningMethod, string> = {
  usb_token: 'Ký hợp đồng bằng USB token',
  cloud_hsm: 'Ký hợp đồng bằng chữ ký số từ xa',
  otp_sms: 'Ký hợp đồng, xác nhận bằng OTP',
  image_signature: 'Ký hợp đồng bằng chữ ký hình ảnh',
};

export interface RevisionFor {
  contract: ContractRow;
  signers: readonly ContractSignerRow[];
  signer: ContractSignerRow;
  method: SigningMethod;
  /** The contract file version to sign (the newest). */
  version: ContractFileVersionRow;
  expiresAt: Date;
  image?: SignatureImage;
}

/**
 * Prepares the signer's revision of a contract version: a visible box (the signer's placement,
 * else the default box on the last page) saying who signed and when, with the signer's picture
 * for image_signature.
 */
export async function prepareForSigner(
  deps: Pick<AppDeps, 'db' | 'clock' | 'files' | 'config'>,
  input: RevisionFor,
): Promise<Preparation> {
  const signingTime = deps.clock.now();
  const lastPage = pageBox(deps.files.pathOf(input.version.sha256));
  const { page, rect } = signatureBox(input.signers, input.signer, lastPage);
  return prepareRevision(deps, {
    tenantId: input.contract.tenant_id,
    sourceSha256: input.version.sha256,
    signingTime,
    signerName: input.signer.name,
    reason: reasons[input.method],
    page,
    appearance: {
      rect,
      lines: appearanceLines(input.signer.name, signingTime),
      ...(input.image ? { image: input.image } : {}),
    },
    expiresAt: input.expiresAt,
  });
}

/** Gives up a preparation nobody will finalize; one already closed is left as it is. */
export async function dropPreparation(
  deps: Pick<AppDeps, 'db'>,
  id: number,
  tenantId: number,
): Promise<void> {
  await abandonPreparation(deps, id, tenantId).catch((error: unknown) => {
    if (!(error instanceof ApiError)) throw error;
  });
}
