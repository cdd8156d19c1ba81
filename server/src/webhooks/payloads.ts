import type { FileKind, StepKind } from '../db/schema';

/**
 * The `data` of every event, built from plain facts the workflow already holds, with the field
 * names and rules of document 1 ("Event kinds" and the data tables). Builders never read the
 * database, so the workflow calls them inside its transaction and hands the result to
 * `enqueueEvent`.
 */

/** One file of a dossier as the workflow knows it, with its presigned URL already made. */
export interface WebhookFileFacts {
  /** The file's uuid: `ecmNodeUuid`, the `fileUuid` of the download endpoint. */
  fileUuid: string;
  /** MAIN files are signed; ATTACHMENT files are not. */
  kind: FileKind;
  /** Title of the file. */
  name: string;
  mimeType: string;
  /** Size of the newest version, bytes. */
  sizeBytes: number;
  ecmClassCode: string | null;
  /** Presigned URL of the newest version (files/presign.ts `presignFileUrl`). */
  url: string;
  /** When `url` stops working, ISO 8601. */
  expiresAt: string;
  /** Whether a signature produced a version of the file (version 1 is the file as sent). */
  signed: boolean;
}

/** One signing turn of the dossier. Only outside signers (guest steps) reach the payload. */
export interface WebhookSignerFacts {
  /** Kind of the turn's step: `guest` and `phone_guest` are outside signers. */
  stepKind: StepKind;
  stepName: string;
  stepCode: string;
  email: string | null;
  phone: string | null;
  identityNumber: string | null;
  taxCode: string | null;
  /** PENDING for a turn that never acted (after a rejection). */
  status: 'SIGNED' | 'REJECTED' | 'PENDING';
  signedAt: string | null;
}

/** What `document.completed` and `document.rejected` share. */
export interface DossierEventFacts {
  /** The caller's code; null or empty for dossiers created in the web app. */
  documentId: string | null;
  documentUuid: string;
  documentTitle: string;
  transactionId: string | null;
  /** Signed steps of the dossier, as the lookup endpoint counts them. */
  signedCount: number;
  /** The caller's metadata as stored; `tenantCode` is set (or overwritten) from `tenantCode`. */
  metadata: Record<string, unknown>;
  tenantCode: string;
  /** Main files first, then attachments, in dossier order. */
  files: WebhookFileFacts[];
  /** Every turn, in signing order; internal and role-based turns are dropped here. */
  signers: WebhookSignerFacts[];
}

export interface WebhookFile {
  type: 'signed_document' | 'input_document';
  url: string;
  expiresAt: string;
  name: string;
  mimeType: string;
  sizeBytes: number;
  ecmNodeUuid: string;
  ecmClassCode: string | null;
}

export interface WebhookSigner {
  stepName: string;
  stepCode: string;
  email: string | null;
  phone?: string;
  identityNumber?: string;
  taxCode?: string;
  status: 'SIGNED' | 'REJECTED' | 'PENDING';
  signedAt: string | null;
}

export interface DocumentEventData {
  documentId: string;
  documentUuid: string;
  documentTitle: string;
  transactionId: string | null;
  status: 'COMPLETED' | 'REJECTED';
  completedAt: string | null;
  files: WebhookFile[];
  signedCount: number;
  totalSigners: number;
  signers: WebhookSigner[];
  metadata: Record<string, unknown>;
}

export interface DocumentRejectedData extends DocumentEventData {
  status: 'REJECTED';
  rejectedAt: string;
  reason: string;
  rejectedBy: RejectedBy;
}

export interface RejectedBy {
  fullName: string | null;
  email: string | null;
  phone: string | null;
  identityNumber: string | null;
}

const outsideKinds: ReadonlySet<StepKind> = new Set(['guest', 'phone_guest']);

function webhookSigner(signer: WebhookSignerFacts): WebhookSigner {
  const item: WebhookSigner = {
    stepName: signer.stepName,
    stepCode: signer.stepCode,
    email: signer.email,
    status: signer.status,
    // "signers[].signedAt is null for the rejecting signer" (and for those who never acted).
    signedAt: signer.status === 'SIGNED' ? signer.signedAt : null,
  };
  // "identityNumber or taxCode (only the ones that apply)"; phone for signers invited by phone.
  if (signer.identityNumber) item.identityNumber = signer.identityNumber;
  if (signer.taxCode) item.taxCode = signer.taxCode;
  if (signer.phone) item.phone = signer.phone;
  return item;
}

function dossierData(
  facts: DossierEventFacts,
  status: 'COMPLETED' | 'REJECTED',
  completedAt: string | null,
): DocumentEventData {
  const signers = facts.signers.filter((s) => outsideKinds.has(s.stepKind)).map(webhookSigner);
  return {
    documentId: facts.documentId ?? '',
    documentUuid: facts.documentUuid,
    documentTitle: facts.documentTitle,
    transactionId: facts.transactionId,
    status,
    completedAt,
    files: facts.files.map((file) => ({
      // A completed dossier's signed main files are the result; a rejected one has none, and a
      // dossier completed by approvals alone keeps its main files as sent.
      type:
        status === 'COMPLETED' && file.kind === 'MAIN' && file.signed
          ? 'signed_document'
          : 'input_document',
      url: file.url,
      expiresAt: file.expiresAt,
      name: file.name,
      mimeType: file.mimeType,
      sizeBytes: file.sizeBytes,
      ecmNodeUuid: file.fileUuid,
      ecmClassCode: file.ecmClassCode,
    })),
    signedCount: facts.signedCount,
    totalSigners: signers.length,
    signers,
    metadata: { ...facts.metadata, tenantCode: facts.tenantCode },
  };
}

/** `document.completed`: every signer has signed; main files are `signed_document`. */
export function documentCompletedData(
  facts: DossierEventFacts & { completedAt: string },
): DocumentEventData {
  return dossierData(facts, 'COMPLETED', facts.completedAt);
}

/**
 * `document.rejected`: the same fields with `status` REJECTED, `completedAt` null, every file an
 * `input_document`, and `rejectedAt`, `reason`, `rejectedBy`.
 */
export function documentRejectedData(
  facts: DossierEventFacts & { rejectedAt: string; reason: string; rejectedBy: RejectedBy },
): DocumentRejectedData {
  return {
    ...dossierData(facts, 'REJECTED', null),
    status: 'REJECTED',
    rejectedAt: facts.rejectedAt,
    reason: facts.reason,
    rejectedBy: {
      fullName: facts.rejectedBy.fullName,
      email: facts.rejectedBy.email,
      phone: facts.rejectedBy.phone,
      identityNumber: facts.rejectedBy.identityNumber,
    },
  };
}

/** The four delegated e-mail events. */
export const notificationEvents = [
  'notification.task_assigned_internal',
  'notification.task_assigned_external',
  'notification.task_rejected',
  'notification.process_finished',
] as const;

export type NotificationEvent = (typeof notificationEvents)[number];

/** `credentials` of an outside recipient: no account (null), an account, or a new password. */
export type RecipientCredentials = { userName: string; password: string | null } | null;

export interface NotificationRecipient {
  type: 'internal' | 'external';
  name: string;
  /** null for a recipient invited by phone number. */
  email: string | null;
  phone: string | null;
  /** Outside recipients only; internal recipients always get null. */
  credentials?: RecipientCredentials;
}

export interface NotificationStep {
  stepCode: string;
  stepName: string;
  /** From 1. */
  order: number;
}

/** The `data` of the `notification.*` events, field for field (document 1). */
export interface NotificationData {
  transactionId: string | null;
  documentId: string | null;
  documentUuid: string | null;
  documentTitle: string | null;
  totalSteps: number;
  /** The step concerned; null for `process_finished`. */
  step: NotificationStep | null;
  recipients: Required<NotificationRecipient>[];
  /** null for `process_finished`. */
  signUrl: string | null;
  expireAt: string | null;
  prevActorName: string | null;
  completeDate: string | null;
  /** The rejection reason; null except in `task_rejected`. */
  note: string | null;
  /** The caller's metadata. */
  metadata: Record<string, unknown>;
}

/** What the workflow knows; `notificationData` applies the spec's rules to it. */
export type NotificationFacts = Omit<NotificationData, 'recipients'> & {
  recipients: NotificationRecipient[];
};

/**
 * `notification.*` data. The spec's rules are applied here, whatever the facts say: internal
 * recipients carry `credentials` null; `process_finished` has `step` and `signUrl` null; `note`
 * exists only in `task_rejected`. The password of a new outside account travels in plain text
 * (as the spec says), so never log this object.
 */
export function notificationData(
  kind: NotificationEvent,
  facts: NotificationFacts,
): NotificationData {
  const finished = kind === 'notification.process_finished';
  return {
    transactionId: facts.transactionId,
    documentId: facts.documentId,
    documentUuid: facts.documentUuid,
    documentTitle: facts.documentTitle,
    totalSteps: facts.totalSteps,
    step: finished || facts.step === null ? null : { ...facts.step },
    recipients: facts.recipients.map((recipient) => ({
      type: recipient.type,
      name: recipient.name,
      email: recipient.email,
      phone: recipient.phone,
      credentials:
        recipient.type === 'internal' || !recipient.credentials
          ? null
          : { userName: recipient.credentials.userName, password: recipient.credentials.password },
    })),
    signUrl: finished ? null : facts.signUrl,
    expireAt: facts.expireAt,
    prevActorName: facts.prevActorName,
    completeDate: facts.completeDate,
    note: kind === 'notification.task_rejected' ? facts.note : null,
    metadata: facts.metadata,
  };
}

/** `webhook.test` data. */
export interface WebhookTestData {
  message: string;
  subscriptionId: string;
  triggeredBy: string;
  metadata: Record<string, unknown>;
}

export function webhookTestData(facts: WebhookTestData): WebhookTestData {
  return {
    message: facts.message,
    subscriptionId: facts.subscriptionId,
    triggeredBy: facts.triggeredBy,
    metadata: facts.metadata,
  };
}
