import type { Locale } from '@esign/shared/messages';
import type { AuditActor, AuditEventInput, AuditOrigin } from '../audit/subject';
import type { AppDeps } from '../context';
import type { Db } from '../db/database';
import type { SigningMethod } from '../db/schema';
import type { PageBox, SignatureRect } from '../pdf/signing';
import type { SignedRevision } from '../signatures';
import type { SessionRow } from './queries';

/**
 * What a signing session signs: a contract for one of its signers, or a dossier task's turn
 * for its user. The session mechanism (initiate, link, OTP, confirm, token, reject) is one; a
 * subject supplies only what differs: the file, who signs, whether it may still be signed,
 * what a signature or a refusal changes, and the audit trail.
 */
export interface SigningSubject {
  kind: 'contract' | 'task';
  tenantId: number;
  /**
   * The person whose signature it is: the visible box, the OTP, a cloud_hsm key, and what a
   * signing certificate is compared with (signing/certificates/identity.ts).
   */
  signer: {
    name: string;
    email: string | null;
    phone: string | null;
    identityNumber: string | null;
    taxCode: string | null;
  };
  /** Who a step by the signing page (or the signer) is, in the audit trail. */
  signerActor: AuditActor;
  /** What the signing page shows of the subject. */
  summary: { id: string; title: string };
  /** The subject's columns of its session row. */
  sessionColumns: Pick<SessionRow, 'contract_id' | 'signer_id' | 'task_id' | 'user_id' | 'file_id'>;
  /** 409 with the subject's code unless it can still be signed now (read through `db`). */
  assertSignable(db: Db, now: Date): Promise<void>;
  /** The stored PDF the next signature goes on: the newest version of the signed file. */
  newestFile(db: Db): Promise<{ sha256: string; version: number }>;
  /** Where the visible box goes on this PDF (its last page given). */
  signatureBox(lastPage: PageBox, version: number): { page: number; rect: SignatureRect };
  /** The signature dictionary's /Reason for `method`, in `locale`. */
  reason(method: SigningMethod, locale: Locale): string;
  /** Appends an event to the subject's audit trail inside the step's transaction. */
  audit(trx: Db, event: AuditEventInput): Promise<void>;
  /** Queues the OTP e-mail for a signer without a phone. */
  mailOtp(trx: Db, deps: SubjectDeps, otp: string): Promise<void>;
  /**
   * Whether the signature being made now is the last the subject needs (read through `db`
   * before the finalize transaction): then the signed file is archived (B-LTA: the DSS for
   * every signature and a document timestamp) and `commitSignature` gets the archive too.
   */
  isLastSignature(db: Db): Promise<boolean>;
  /**
   * The subject's part of the finalize transaction once the session ended signed: the signed
   * file becomes the next version and the turn advances. Throwing rolls everything back.
   */
  commitSignature(trx: Db, deps: SubjectDeps, signed: CommittedSignature): Promise<SubjectSigned>;
  /** The signer declines, inside the step's transaction. */
  reject(
    trx: Db,
    deps: SubjectDeps,
    reason: string,
    by: { actor: AuditActor; origin: AuditOrigin },
  ): Promise<SubjectRejected>;
}

export type SubjectDeps = Pick<AppDeps, 'db' | 'config' | 'clock' | 'secrets'>;

/** The stored signature, with the version it was made on and the session's method. */
export interface CommittedSignature {
  signed: SignedRevision;
  method: SigningMethod;
  /** The version the signature was made on (the newest, checked). */
  source: { sha256: string; version: number };
}

/** Where the subject stands after a signature. */
export type SubjectSigned = { contractStatus: 'signing' | 'completed' } | { task: TaskOutcome };

/** Where the subject stands after a refusal. */
export type SubjectRejected =
  | { contractId: string; contractStatus: 'rejected' }
  | { task: TaskOutcome };

/** A dossier task after its turn was signed or rejected. */
export interface TaskOutcome {
  taskCode: string;
  taskStatus: 'PENDING' | 'APPROVED' | 'REJECTED' | 'EXPIRED';
  documentId: string | null;
  dossierStatus: string;
  signedCount: number;
  requiredCount: number;
  nextTaskCode: string | null;
}
