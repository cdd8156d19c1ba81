import type { AuditActorKind } from '../db/schema';

/**
 * Whose trail an event belongs to. Each kind has its own table and head column; the chain
 * (hashing, appending, verifying, rendering) is one.
 */
export interface AuditSubject {
  kind: 'contract' | 'dossier';
  /** The subject's row id. */
  id: number;
}

export const contractTrail = (id: number): AuditSubject => ({ kind: 'contract', id });
export const dossierTrail = (id: number): AuditSubject => ({ kind: 'dossier', id });

/** What happened. The session steps are written by the signing sessions. */
export const auditActions = [
  'created',
  'sent',
  'viewed',
  'downloaded',
  'cancelled',
  'expired',
  'session_initiated',
  'otp_sent',
  'otp_failed',
  'signed',
  'rejected',
  'completed',
  'invitation_resent',
] as const;
export type AuditAction = (typeof auditActions)[number];

export interface AuditActor {
  kind: AuditActorKind;
  userId?: number | null;
  /** A contract signer (contract trails only). */
  signerId?: number | null;
  /** Shown in the trail: a person's name (and address), or the service. */
  name: string;
}

/** Where a request came from: the client address (trusted proxies only) and its user agent. */
export interface AuditOrigin {
  clientAddress: string | null;
  userAgent: string | null;
}

export interface AuditEventInput {
  action: AuditAction;
  actor: AuditActor;
  origin?: AuditOrigin | null;
  /** Facts of the event (reason, file type, method, hashes…): plain JSON values. */
  details?: Record<string, unknown>;
}

export const systemActor: AuditActor = { kind: 'system', name: 'system' };
