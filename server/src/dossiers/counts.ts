import type { AppDeps, Principal } from '../context';
import { dossiersOfStatus } from './queries';
import { DossierStatusSchema } from './schemas';
import { scopeOf } from './scope';

/** A state's count stops here: beyond it a person needs the list, not the number. */
export const dossierCountCap = 1000;

/**
 * How many dossiers of each state the caller may see (the integration API's dossier scope),
 * in the spec's order of states; a count equal to `dossierCountCap` means that many or more.
 */
export async function dossierCounts(deps: Pick<AppDeps, 'db'>, principal: Principal) {
  const scope = await scopeOf(deps.db, principal);
  const counts = [];
  for (const status of DossierStatusSchema.options) {
    const { count } = await dossiersOfStatus(
      deps.db,
      scope,
      status,
      dossierCountCap,
    ).executeTakeFirstOrThrow();
    counts.push({ status, count: Number(count) });
  }
  return counts;
}
