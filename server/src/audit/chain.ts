import crypto from 'node:crypto';
import { canonicalJson } from '@esign/shared';
import type { Db } from '../db/database';
import { StoredJsonError } from '../db/jsonColumn';
import type { Clock } from '../platform/clock';
import {
  type AuditEventRow,
  auditDetailsOf,
  auditEventsOf,
  auditHeadOf,
  insertAuditEvent,
  lastAuditEvent,
} from './queries';
import type { AuditEventInput, AuditSubject } from './subject';

/**
 * The audit trail of a contract or a dossier: append-only events, each hashing the one before
 * it. An event's hash is SHA-256 over the canonical JSON of its content and the previous hash;
 * the first event's previous hash is `genesisHash`. The subject's `audit_head` repeats the
 * newest hash, so a removed tail is found as surely as an edited event.
 */

export const genesisHash = '0'.repeat(64);

/** The subject's id is hashed under its kind's name: contract events hash as they always did. */
const subjectKey = { contract: 'contractId', dossier: 'dossierId' } as const;

/** The hashed content of an event: every stored column except id, hash and the head. */
function hashOf(kind: AuditSubject['kind'], event: Omit<AuditEventRow, 'id' | 'hash'>): string {
  const content = canonicalJson({
    [subjectKey[kind]]: event.subject_id,
    seq: event.seq,
    action: event.action,
    at: event.at,
    actor: {
      kind: event.actor_kind,
      userId: event.actor_user_id,
      signerId: event.actor_signer_id,
      name: event.actor_name,
    },
    clientAddress: event.client_address,
    userAgent: event.user_agent,
    details: auditDetailsOf(event),
    prevHash: event.prev_hash,
  });
  return crypto.createHash('sha256').update(content, 'utf8').digest('hex');
}

/**
 * Appends one event to the subject's trail, inside the caller's transaction (so the event
 * commits or rolls back with the change it records), at the one clock's time. The write lock
 * of `inTransaction` orders concurrent appends; `(subject, seq)` is unique besides.
 */
export async function appendAuditEvent(
  trx: Db,
  clock: Clock,
  subject: AuditSubject,
  input: AuditEventInput,
): Promise<{ seq: number; hash: string; at: string }> {
  const last = await lastAuditEvent(trx, subject);
  const event = {
    subject_id: subject.id,
    seq: (last?.seq ?? 0) + 1,
    action: input.action,
    at: clock.now().toISOString(),
    actor_kind: input.actor.kind,
    actor_user_id: input.actor.userId ?? null,
    actor_signer_id: input.actor.signerId ?? null,
    actor_name: input.actor.name,
    client_address: input.origin?.clientAddress ?? null,
    user_agent: input.origin?.userAgent ?? null,
    details: canonicalJson(input.details ?? {}),
    prev_hash: last?.hash ?? genesisHash,
  };
  const hash = hashOf(subject.kind, event);
  const { subject_id: _subjectId, ...values } = event;
  await insertAuditEvent(trx, subject, { ...values, hash });
  return { seq: event.seq, hash, at: event.at };
}

export type AuditVerification =
  | { valid: true; events: number; head: string }
  | {
      valid: false;
      events: number;
      /** The first event that does not hold (its seq), or the missing one after the last. */
      brokenAt: number;
      reason: 'content_changed' | 'link_broken' | 'sequence_gap' | 'tail_missing';
    };

/** Whether the event hashes to its `hash`; details that are no JSON object were changed too. */
function holdsItsHash(kind: AuditSubject['kind'], event: AuditEventRow): boolean {
  try {
    return hashOf(kind, event) === event.hash;
  } catch (error) {
    if (error instanceof StoredJsonError) return false;
    throw error;
  }
}

/** Recomputes the subject's chain from the first event; names the first broken link. */
export async function verifyAuditChain(db: Db, subject: AuditSubject): Promise<AuditVerification> {
  const events = await auditEventsOf(db, subject);
  let previous = genesisHash;
  for (const [index, event] of events.entries()) {
    const broken = (reason: 'content_changed' | 'link_broken' | 'sequence_gap') =>
      ({ valid: false, events: events.length, brokenAt: event.seq, reason }) as const;
    if (event.seq !== index + 1) return broken('sequence_gap');
    if (event.prev_hash !== previous) return broken('link_broken');
    if (!holdsItsHash(subject.kind, event)) return broken('content_changed');
    previous = event.hash;
  }
  const head = await auditHeadOf(db, subject);
  if (head !== undefined && head !== previous) {
    return {
      valid: false,
      events: events.length,
      brokenAt: events.length + 1,
      reason: 'tail_missing',
    };
  }
  return { valid: true, events: events.length, head: previous };
}
