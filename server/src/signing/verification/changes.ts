import type { ChangedObject, PdfRevision, ReferenceListChange } from '../../pdf/signing';

/**
 * How much a change after a signature does, lowest first: long-term validation material,
 * signing, form filling, annotations, anything else. A DocMDP permission allows up to a level.
 */
const levels = ['none', 'ltv', 'signing', 'form', 'annotations', 'other'] as const;
type ChangeLevel = (typeof levels)[number];

const rank = (level: ChangeLevel) => levels.indexOf(level);
const highest = (all: ChangeLevel[]): ChangeLevel =>
  all.reduce<ChangeLevel>((top, level) => (rank(level) > rank(top) ? level : top), 'none');

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

const subset = (keys: string[] | undefined, allowed: string[]) =>
  (keys ?? []).every((key) => allowed.includes(key));

/** A list that only gained items of the given kinds. */
function onlyAdds(list: ReferenceListChange | undefined, kinds: string[]): boolean {
  return list !== undefined && list.removed === 0 && list.added.every((k) => kinds.includes(k));
}

/** The level of an /Annots or /Fields list change: appended signature widgets, or annotations. */
function listLevel(list: ReferenceListChange | undefined): ChangeLevel {
  if (onlyAdds(list, ['signatureField'])) return 'signing';
  if (list?.added.every((k) => k !== 'other')) return 'annotations';
  return 'other';
}

function levelOf(change: ChangedObject): ChangeLevel {
  // A new object does nothing until an existing one refers to it, and those are judged here.
  if (change.status === 'added') return 'none';
  if (change.status === 'freed') return 'other';
  const keys = change.changedKeys;
  switch (change.kind) {
    case 'xref':
    case 'objectStream':
      return 'none';
    case 'dss':
      return 'ltv';
    case 'catalog':
      if (subset(keys, ['DSS', 'Extensions'])) return 'ltv';
      // A first AcroForm for a new signature field; replacing one could drop fields.
      if (subset(keys, ['DSS', 'Extensions', 'AcroForm']) && change.addedKeys?.includes('AcroForm'))
        return 'signing';
      return 'other';
    case 'acroForm': {
      const fields = keys?.includes('Fields') ? listLevel(change.lists?.Fields) : 'none';
      // New fields other than signatures are never "form filling".
      if (fields === 'annotations' || fields === 'other') return 'other';
      if (subset(keys, ['Fields', 'SigFlags'])) return highest(['signing', fields]);
      if (subset(keys, ['Fields', 'SigFlags', 'DR', 'DA', 'NeedAppearances'])) return 'form';
      return 'other';
    }
    case 'page':
      return subset(keys, ['Annots']) ? listLevel(change.lists?.Annots) : 'other';
    case 'array': {
      const list = change.lists?.['[]'];
      return listLevel(list);
    }
    case 'signatureField':
      // Signing an empty signature field: its value and appearance are set, never replaced.
      if (change.addedKeys?.includes('V') && subset(keys, ['V', 'AP', 'AS', 'F'])) return 'signing';
      return 'other';
    case 'other':
      // A form field's value and appearance (the widget of a filled text field or check box).
      return keys !== undefined && keys.length > 0 && subset(keys, ['V', 'AS', 'AP'])
        ? 'form'
        : 'other';
    default:
      return 'other';
  }
}

export interface ModificationVerdict {
  modifiedAfterSigning: 'none' | 'allowed' | 'disallowed';
  /** Human-readable reasons for a disallowed verdict. */
  problems: string[];
}

/** What the revisions after a signature did, judged against what the signature allows. */
export function judgeLaterRevisions(
  laterRevisions: PdfRevision[],
  docMdpPermission: 1 | 2 | 3 | undefined,
): ModificationVerdict {
  if (laterRevisions.length === 0) return { modifiedAfterSigning: 'none', problems: [] };
  const allowed = allowedLevel(docMdpPermission);
  const problems: string[] = [];
  for (const revision of laterRevisions) {
    if (revision.rootChanged) {
      problems.push(`Revision ${revision.index} replaces the document catalog`);
      continue;
    }
    for (const change of revision.changes) {
      const level = levelOf(change);
      if (rank(level) <= rank(allowed)) continue;
      const keys = change.changedKeys?.length ? ` (${change.changedKeys.join(', ')})` : '';
      problems.push(
        `Revision ${revision.index} ${change.status === 'freed' ? 'deletes' : 'changes'} ${change.kind} object ${change.num}${keys}, which the signature does not allow`,
      );
    }
  }
  return { modifiedAfterSigning: problems.length > 0 ? 'disallowed' : 'allowed', problems };
}
