import type { AppDeps } from '../context';
import { contractById, signersOf } from '../contracts/queries';
import { contractSubject } from './contractSubject';
import type { SessionRow } from './queries';
import type { SigningSubject } from './subject';
import { taskSubjectOfSession } from './taskSubject';

/** The subject a session signs: its contract and signer, or its dossier task and user. */
export async function subjectOfSession(
  deps: Pick<AppDeps, 'db' | 'clock'>,
  session: SessionRow,
): Promise<SigningSubject> {
  const { contract_id, signer_id, task_id, user_id, file_id } = session;
  if (contract_id !== null && signer_id !== null) {
    const contract = (await contractById(deps.db, contract_id))!;
    const signers = await signersOf(deps.db, contract.id);
    return contractSubject(deps, contract, signers, signers.find((s) => s.id === signer_id)!);
  }
  return taskSubjectOfSession(deps, { task_id: task_id!, user_id: user_id!, file_id: file_id! });
}
