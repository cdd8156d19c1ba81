import type { AppDeps } from '../context';
import type { SigningMethod } from '../db/schema';
import { DomainError } from '../errors/domainError';
import type { SignatureImage } from '../pdf/signing';
import { runPdfTask } from '../pdf/worker/pool';
import { pageBoxTask } from '../pdf/worker/tasks';
import { abandonPreparation, prepareRevision } from '../signatures';
import { certificateIdentity, type ExpectedSigner } from '../signing/certificates/identity';
import type { Preparation } from '../signing/finalize';
import { appearanceLines } from './rules';
import type { SigningSubject } from './subject';

export interface RevisionFor {
  subject: SigningSubject;
  method: SigningMethod;
  /** The stored version to sign (the subject's newest). */
  version: { sha256: string; version: number };
  expiresAt: Date;
  image?: SignatureImage;
  /** The certificate (DER) that will sign, when known: its name is shown, only it may finalize. */
  certificate?: Buffer;
}

/** Who the subject's signature must be of, as a signing certificate is compared with. */
export function expectedSigner(subject: SigningSubject): ExpectedSigner {
  const { email, identityNumber, taxCode } = subject.signer;
  return { email, identityNumber, taxCode };
}

/**
 * The name a signature shows: the certificate's common name when the certificate is known (the
 * signature is the certificate's; the subject's own spelling stays in the audit trail), else the
 * subject's name for the signer.
 */
function shownName(subject: SigningSubject, certificate: Buffer | undefined): string {
  return (certificate && certificateIdentity(certificate).commonName) || subject.signer.name;
}

/**
 * Prepares the signer's revision of a version now (its /M and visible time are this moment): a
 * visible box (where the subject puts it) saying who signed and when, with the signer's
 * picture for image_signature.
 */
export async function prepareForSigner(
  deps: Pick<AppDeps, 'db' | 'clock' | 'files' | 'config' | 'fetcher'>,
  input: RevisionFor,
): Promise<Preparation> {
  const { subject, certificate } = input;
  const signingTime = deps.clock.now();
  const name = shownName(subject, certificate);
  const lastPage = await deps.files.withLocalFile(input.version.sha256, (file) =>
    runPdfTask(pageBoxTask, file),
  );
  const { page, rect } = subject.signatureBox(lastPage, input.version.version);
  return prepareRevision(deps, {
    tenantId: subject.tenantId,
    sourceSha256: input.version.sha256,
    signingTime,
    signerName: name,
    reason: subject.reason(input.method, deps.config.notify.locale),
    page,
    appearance: {
      rect,
      lines: appearanceLines(name, signingTime, deps.config.notify.locale),
      ...(input.image ? { image: input.image } : {}),
    },
    expiresAt: input.expiresAt,
    ...(certificate ? { certificate } : {}),
  });
}

/** Gives up a preparation nobody will finalize; one already closed is left as it is. */
export async function dropPreparation(
  deps: Pick<AppDeps, 'db'>,
  id: number,
  tenantId: number,
): Promise<void> {
  await abandonPreparation(deps, id, tenantId).catch((error: unknown) => {
    if (!(error instanceof DomainError)) throw error;
  });
}
