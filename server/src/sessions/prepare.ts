import type { AppDeps } from '../context';
import type { SigningMethod } from '../db/schema';
import { ApiError } from '../errors/apiError';
import type { SignatureImage } from '../pdf/signing';
import { runPdfTask } from '../pdf/worker/pool';
import { pageBoxTask } from '../pdf/worker/tasks';
import { abandonPreparation, type Preparation, prepareRevision } from '../signing/finalize';
import { appearanceLines } from './rules';
import type { SigningSubject } from './subject';

export interface RevisionFor {
  subject: SigningSubject;
  method: SigningMethod;
  /** The stored version to sign (the subject's newest). */
  version: { sha256: string; version: number };
  expiresAt: Date;
  image?: SignatureImage;
}

/**
 * Prepares the signer's revision of a version: a visible box (where the subject puts it) saying
 * who signed and when, with the signer's picture for image_signature.
 */
export async function prepareForSigner(
  deps: Pick<AppDeps, 'db' | 'clock' | 'files' | 'config'>,
  input: RevisionFor,
): Promise<Preparation> {
  const { subject } = input;
  const signingTime = deps.clock.now();
  const lastPage = await runPdfTask(pageBoxTask, deps.files.pathOf(input.version.sha256));
  const { page, rect } = subject.signatureBox(lastPage, input.version.version);
  return prepareRevision(deps, {
    tenantId: subject.tenantId,
    sourceSha256: input.version.sha256,
    signingTime,
    signerName: subject.signer.name,
    reason: subject.reason(input.method),
    page,
    appearance: {
      rect,
      lines: appearanceLines(subject.signer.name, signingTime),
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
