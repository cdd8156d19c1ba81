import type { ExpressionBuilder, Insertable, Selectable, Updateable } from 'kysely';
import type { Db } from '../db/database';
import { parseJsonColumn } from '../db/jsonColumn';
import type {
  Database,
  OtpEventKind,
  SigningSessionState,
  SigningSessionsTable,
} from '../db/schema';
import { CertificateInfo } from './schemas';

export type SessionRow = Selectable<SigningSessionsTable>;

/** `signing_sessions.certificate_info` of a signed session (null before). */
export function certificateInfoOf(
  session: Pick<SessionRow, 'certificate_info'>,
): CertificateInfo | null {
  return session.certificate_info === null
    ? null
    : parseJsonColumn(
        CertificateInfo,
        'signing_sessions.certificate_info',
        session.certificate_info,
      );
}

export async function insertSession(
  trx: Db,
  values: Insertable<SigningSessionsTable>,
): Promise<SessionRow> {
  return trx.insertInto('signing_sessions').values(values).returningAll().executeTakeFirstOrThrow();
}

export function sessionByPublicId(db: Db, publicId: string): Promise<SessionRow | undefined> {
  return db
    .selectFrom('signing_sessions')
    .selectAll()
    .where('public_id', '=', publicId)
    .executeTakeFirst();
}

export function sessionById(db: Db, id: number): Promise<SessionRow | undefined> {
  return db.selectFrom('signing_sessions').selectAll().where('id', '=', id).executeTakeFirst();
}

export function sessionByLinkHash(db: Db, hash: string): Promise<SessionRow | undefined> {
  return db
    .selectFrom('signing_sessions')
    .selectAll()
    .where('link_token_hash', '=', hash)
    .executeTakeFirst();
}

/**
 * The signer's open session, if any (at most one, by partial unique indexes): a contract
 * signer's, or a task user's on that task.
 */
export function openSessionOf(
  db: Db,
  of: Pick<SessionRow, 'signer_id' | 'task_id' | 'user_id'>,
): Promise<SessionRow | undefined> {
  return db
    .selectFrom('signing_sessions')
    .selectAll()
    .$if(of.signer_id !== null, (query) => query.where('signer_id', '=', of.signer_id))
    .$if(of.signer_id === null, (query) =>
      query.where('task_id', '=', of.task_id).where('user_id', '=', of.user_id),
    )
    .where('state', '=', 'open')
    .executeTakeFirst();
}

/**
 * Changes a session only while it is in state `from`; false (nothing changed) when another
 * request moved it first, so two steps cannot both end it.
 */
export async function updateSessionIf(
  trx: Db,
  id: number,
  from: SigningSessionState,
  values: Updateable<SigningSessionsTable>,
): Promise<boolean> {
  const result = await trx
    .updateTable('signing_sessions')
    .set(values)
    .where('id', '=', id)
    .where('state', '=', from)
    .executeTakeFirst();
  return Number(result.numUpdatedRows) === 1;
}

/**
 * Moves an open session to a new preparation only if it still holds `fromPreparationId`: of two
 * confirmations that read the same session at once (on one instance or several), one moves it
 * and the other learns that it lost instead of abandoning the winner's preparation.
 */
export async function moveSessionPreparation(
  trx: Db,
  id: number,
  fromPreparationId: number,
  values: { preparation_id: number; source_version: number },
): Promise<boolean> {
  const result = await trx
    .updateTable('signing_sessions')
    .set(values)
    .where('id', '=', id)
    .where('state', '=', 'open')
    .where('preparation_id', '=', fromPreparationId)
    .executeTakeFirst();
  return Number(result.numUpdatedRows) === 1;
}

/**
 * Spends an open session's signing link: one conditional UPDATE, so of two exchanges at once
 * (on one instance or several) exactly one finds the link unused; false for the other.
 */
export async function spendSigningLink(
  trx: Db,
  id: number,
  values: { link_used_at: string; page_token_hash: string },
): Promise<boolean> {
  const result = await trx
    .updateTable('signing_sessions')
    .set(values)
    .where('id', '=', id)
    .where('state', '=', 'open')
    .where('link_used_at', 'is', null)
    .executeTakeFirst();
  return Number(result.numUpdatedRows) === 1;
}

/**
 * Stores a new code for an open session whose last send is still `lastSentAt`: one conditional
 * UPDATE (the row's lock on PostgreSQL), so of two sends at once, on any instances, one stores
 * its code and the other finds the row moved on (false).
 */
export async function storeNewOtp(
  trx: Db,
  id: number,
  lastSentAt: string | null,
  values: { otp_hash: string; otp_expires_at: string; otp_sent_at: string },
): Promise<boolean> {
  const result = await trx
    .updateTable('signing_sessions')
    .set(values)
    .where('id', '=', id)
    .where('state', '=', 'open')
    .where('otp_sent_at', lastSentAt === null ? 'is' : '=', lastSentAt)
    .executeTakeFirst();
  return Number(result.numUpdatedRows) === 1;
}

/**
 * Takes one OTP try before the code is compared: counted as a wrong one, under the row's write
 * lock until the transaction ends, so the tries of one session run one after the other on every
 * instance (a burst of guesses at once cannot all be compared before the fifth locks it).
 * Returns the count after it.
 */
export async function takeOtpTry(trx: Db, id: number): Promise<number> {
  const row = await trx
    .updateTable('signing_sessions')
    .set((eb) => ({ otp_failures: eb('otp_failures', '+', 1) }))
    .where('id', '=', id)
    .returning('otp_failures')
    .executeTakeFirstOrThrow();
  return Number(row.otp_failures);
}

/** Gives back the try `takeOtpTry` took, when its code was right. */
export async function giveBackOtpTry(trx: Db, id: number): Promise<void> {
  await trx
    .updateTable('signing_sessions')
    .set((eb) => ({ otp_failures: eb('otp_failures', '-', 1) }))
    .where('id', '=', id)
    .execute();
}

/** Whether `publicId` names a dossier task's session (its steps take the task signer's credential). */
export async function isTaskSession(db: Db, publicId: string | undefined): Promise<boolean> {
  if (publicId === undefined) return false;
  const row = await db
    .selectFrom('signing_sessions')
    .select('task_id')
    .where('public_id', '=', publicId)
    .executeTakeFirst();
  return row !== undefined && row.task_id !== null;
}

/** Whose one-time codes a limit counts: a contract signer, or a dossier task's signing user. */
export type OtpScope = Pick<SessionRow, 'signer_id' | 'task_id' | 'user_id'>;

function inScope(eb: ExpressionBuilder<Database, 'otp_events'>, scope: OtpScope) {
  return scope.signer_id !== null
    ? eb('signer_id', '=', scope.signer_id)
    : eb.and([eb('task_id', '=', scope.task_id), eb('user_id', '=', scope.user_id)]);
}

/** The times of the scope's events of `kind` after `since` (ISO), oldest first. */
export async function otpEventTimes(
  db: Db,
  scope: OtpScope,
  kind: OtpEventKind,
  since: string,
): Promise<string[]> {
  const rows = await db
    .selectFrom('otp_events')
    .select('at')
    .where((eb) => inScope(eb, scope))
    .where('kind', '=', kind)
    .where('at', '>', since)
    .orderBy('at')
    .orderBy('id')
    .execute();
  return rows.map((row) => row.at);
}

/** Adds one event of the scope and forgets the scope's events of that kind up to `forgetUpTo`. */
export async function addOtpEvent(
  trx: Db,
  scope: OtpScope,
  kind: OtpEventKind,
  at: string,
  forgetUpTo: string,
): Promise<void> {
  await trx
    .insertInto('otp_events')
    .values({
      signer_id: scope.signer_id,
      task_id: scope.task_id,
      user_id: scope.user_id,
      kind,
      at,
    })
    .execute();
  await trx
    .deleteFrom('otp_events')
    .where((eb) => inScope(eb, scope))
    .where('kind', '=', kind)
    .where('at', '<=', forgetUpTo)
    .execute();
}
