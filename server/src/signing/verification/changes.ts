import type { ChangeKind, PdfSignatureInfo, RevisionChange } from '../../pdf/signing';
import { dssItemProblem } from './dssItems';

/**
 * How much a change after a signature does, lowest first: long-term validation material and
 * document timestamps, signing, form filling, annotations, anything else. A DocMDP permission
 * allows up to a level.
 */
const levels = ['none', 'ltv', 'signing', 'form', 'annotations', 'other'] as const;
type ChangeLevel = (typeof levels)[number];

const rank = (level: ChangeLevel) => levels.indexOf(level);

const kindLevels: Record<Exclude<ChangeKind, 'dssItem'>, ChangeLevel> = {
  dss: 'ltv',
  timestamp: 'ltv',
  metadata: 'ltv',
  signature: 'signing',
  form: 'form',
  annotation: 'annotations',
  other: 'other',
};

/**
 * The most a signature lets later revisions do (ISO 32000-2 12.8.2.2, PAdES part 4 for DSS and
 * document timestamps, which every level allows): P1 only validation material, P2 form filling
 * and signing, P3 also annotations. Without a certification signature: signing only.
 */
export function allowedLevel(docMdpPermission: 1 | 2 | 3 | undefined): ChangeLevel {
  switch (docMdpPermission) {
    case 1:
      return 'ltv';
    case 2:
      return 'form';
    case 3:
      return 'annotations';
    default:
      return 'signing';
  }
}

/** One change a signature does not allow: the revision, the object, what was done. */
export interface DisallowedChange {
  revision: number;
  /** `7 0 R` (or `trailer`). */
  object: string;
  /** "changes object 7 (the content stream of page 1)". */
  what: string;
}

export interface ModificationVerdict {
  modifiedAfterSigning: 'none' | 'allowed' | 'disallowed';
  /** One line per disallowed change: "Revision 3 changes object 7 (the content stream of page 1)". */
  problems: string[];
  changes: DisallowedChange[];
}

/** A change's level; a /DSS entry is validation material only when its bytes are what it claims. */
function levelOf(change: RevisionChange): { level: ChangeLevel; what: string } {
  if (change.kind !== 'dssItem') return { level: kindLevels[change.kind], what: change.what };
  const problem = change.dssItem ? dssItemProblem(change.dssItem) : 'which cannot be read';
  return problem
    ? { level: 'other', what: `${change.what}, ${problem}` }
    : { level: 'ltv', what: change.what };
}

/**
 * What the revisions after a signature did, judged against what the signature allows: each
 * revision's changes (classified from the revision before it, see pdf/signing/diff) and what
 * only the signed revision shows (hidden objects, dangling references), which nothing allows.
 */
export function judgeLaterRevisions(
  signature: Pick<PdfSignatureInfo, 'laterRevisions' | 'laterFindings'>,
  docMdpPermission: 1 | 2 | 3 | undefined,
): ModificationVerdict {
  if (signature.laterRevisions.length === 0) {
    return { modifiedAfterSigning: 'none', problems: [], changes: [] };
  }
  const allowed = allowedLevel(docMdpPermission);
  const changes: DisallowedChange[] = [];
  for (const revision of signature.laterRevisions) {
    for (const change of revision.changes) {
      const { level, what } = levelOf(change);
      if (rank(level) > rank(allowed))
        changes.push({ revision: revision.index, object: change.object, what });
    }
  }
  for (const finding of signature.laterFindings) changes.push({ ...finding });
  changes.sort((a, b) => a.revision - b.revision);
  return {
    modifiedAfterSigning: changes.length > 0 ? 'disallowed' : 'allowed',
    problems: changes.map((change) => `Revision ${change.revision} ${change.what}`),
    changes,
  };
}
