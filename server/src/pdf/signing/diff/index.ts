import type { PdfReader } from '../document';
import type { PdfDict } from '../objects';
import type { XrefEntry } from '../xref';
import { classifyUpdate, type UpdateAnalysis } from './classify';
import { maxReachableObjects, reachability } from './reach';
import { RevisionState, refText } from './state';
import type { SignedRevisionFinding } from './types';

export { RevisionState } from './state';
export type {
  ChangeKind,
  DssItem,
  DssItemType,
  RevisionChange,
  SignedRevisionFinding,
} from './types';

/** One revision as the cross-reference chain gives it. */
export interface RevisionSections {
  /** Entries its own sections write. */
  own: Map<number, XrefEntry>;
  /** Every entry in force at its end (its own over the earlier ones). */
  xref: Map<number, XrefEntry>;
  trailer: PdfDict;
  /** Numbers of its own xref streams (structure, not content). */
  xrefStreams: Set<number>;
}

/**
 * The modification analysis of a file, revision by revision, computed when asked for: each
 * update judged against the revision before it, and what a signed revision alone can tell
 * (objects it held unreferenced, references it made to objects it did not have).
 */
export class DiffAnalysis {
  private readonly states = new Map<number, RevisionState>();
  private readonly updates = new Map<number, UpdateAnalysis>();
  private readonly findings = new Map<number, SignedRevisionFinding[]>();

  constructor(
    private readonly reader: PdfReader,
    private readonly revisions: RevisionSections[],
  ) {}

  state(index: number): RevisionState {
    let state = this.states.get(index);
    if (!state) {
      const revision = this.revisions[index]!;
      state = new RevisionState(this.reader, index, revision.xref, revision.trailer);
      this.states.set(index, state);
    }
    return state;
  }

  /** What update `index` (1 and later) changed against revision `index - 1`. */
  update(index: number): UpdateAnalysis {
    let update = this.updates.get(index);
    if (!update) {
      const revision = this.revisions[index]!;
      update = classifyUpdate(
        this.state(index - 1),
        this.state(index),
        revision.own,
        revision.xrefStreams,
      );
      this.updates.set(index, update);
    }
    return update;
  }

  /**
   * What the updates after signed revision `signed` did that only that revision can show: a
   * reference to an object that was in use there but reachable from nothing (a hidden object
   * made visible), and a new object under a number the signed revision already referred to.
   */
  signedRevisionFindings(signed: number): SignedRevisionFinding[] {
    const known = this.findings.get(signed);
    if (known) return known;
    const found: SignedRevisionFinding[] = [];
    this.findings.set(signed, found);
    if (signed + 1 >= this.revisions.length) return found;
    const state = this.state(signed);
    const reach = reachability(state);
    if (!reach.complete) {
      found.push({
        revision: signed + 1,
        object: 'trailer',
        what: `cannot be analysed: the signed revision has more than ${maxReachableObjects} objects`,
      });
      return found;
    }
    const addedSince = new Set<number>();
    const reported = new Set<number>();
    for (let index = signed + 1; index < this.revisions.length; index++) {
      const update = this.update(index);
      for (const { from, to } of update.newReferences) {
        const hidden =
          state.generation(to.num) === to.gen &&
          !reach.reachable.has(to.num) &&
          !addedSince.has(to.num);
        if (!hidden || reported.has(to.num)) continue;
        reported.add(to.num);
        found.push({
          revision: index,
          object: refText(to.num, to.gen),
          what: `references object ${to.num}, which existed unreferenced in the signed revision (hidden object), from object ${from}`,
        });
      }
      for (const num of update.added) {
        if (reach.missing.has(num) && !reported.has(num)) {
          reported.add(num);
          found.push({
            revision: index,
            object: refText(num, this.state(index).generation(num) ?? 0),
            what: `adds object ${num}, which the signed revision referred to without having it (a dangling reference filled in)`,
          });
        }
        addedSince.add(num);
      }
    }
    return found;
  }
}
