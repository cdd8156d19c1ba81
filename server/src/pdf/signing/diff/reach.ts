import type { PdfRef } from '../objects';
import type { RevisionState } from './state';
import { referencesIn } from './values';

/** Objects one reachability walk may visit: far beyond a contract, bounded for a hostile file. */
export const maxReachableObjects = 500_000;

export interface Reachability {
  /** Numbers of the objects reachable from the trailer (`/Root`, `/Info`). */
  reachable: Set<number>;
  /** Numbers referred to from reachable objects that the revision does not have (dangling). */
  missing: Set<number>;
  /** False when the budget ran out before the walk ended: nothing can be said then. */
  complete: boolean;
}

/**
 * Which objects a revision reaches from its trailer, reading dictionaries only (a stream's data
 * is never loaded), and which numbers it refers to without having them.
 */
export function reachability(state: RevisionState, budget = maxReachableObjects): Reachability {
  const reachable = new Set<number>();
  const missing = new Set<number>();
  const queue: PdfRef[] = [];
  const push = (refs: PdfRef[]) => {
    for (const ref of refs) {
      if (reachable.has(ref.num) || missing.has(ref.num)) continue;
      if (state.generation(ref.num) !== ref.gen) {
        missing.add(ref.num);
        continue;
      }
      reachable.add(ref.num);
      queue.push(ref);
    }
  };
  push(referencesIn(state.trailer.get('Root') ?? null));
  push(referencesIn(state.trailer.get('Info') ?? null));
  let visited = 0;
  while (queue.length > 0) {
    if (++visited > budget) return { reachable, missing, complete: false };
    const ref = queue.pop()!;
    push(referencesIn(state.get(ref, false)));
  }
  return { reachable, missing, complete: true };
}
