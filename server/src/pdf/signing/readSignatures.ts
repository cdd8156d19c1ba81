import { PdfReader, type XrefEntry, type XrefSection } from './document';
import {
  decodeTextString,
  isName,
  PdfDict,
  type PdfObject,
  PdfRef,
  PdfStream,
  PdfString,
  type PdfValue,
  parsePdfDate,
  serialize,
} from './objects';
import type { ByteRange } from './prepare';

/** What an object changed by an incremental update is, as far as "allowed changes" go. */
export type ChangedObjectKind =
  | 'signature'
  | 'signatureField'
  | 'acroForm'
  | 'catalog'
  | 'page'
  | 'dss'
  | 'xref'
  | 'objectStream'
  | 'xobject'
  | 'font'
  | 'array'
  | 'other';

/** How a list of references (an /Annots or /Fields array) changed. */
export interface ReferenceListChange {
  /** What each newly listed object is. */
  added: ('signatureField' | 'annotation' | 'other')[];
  /** How many entries the list no longer holds. */
  removed: number;
}

export interface ChangedObject {
  num: number;
  gen: number;
  status: 'added' | 'modified' | 'freed';
  kind: ChangedObjectKind;
  /** For a modified dictionary: the keys added, removed or changed. */
  changedKeys?: string[];
  /** For a modified dictionary: the keys it did not have before. */
  addedKeys?: string[];
  /**
   * For a modified array (key `[]`) and a modified dictionary's changed array entries (by key):
   * what the list gained and lost, so that "a signature widget was appended" can be told from
   * other edits.
   */
  lists?: Record<string, ReferenceListChange>;
}

/** One revision of the file: the original, then one per incremental update. */
export interface PdfRevision {
  index: number;
  startOffset: number;
  /** Just after its `%%EOF` (and end-of-line). */
  endOffset: number;
  xref: 'table' | 'hybrid' | 'stream';
  /** The update points the trailer at another document catalog (a different document). */
  rootChanged: boolean;
  /** Objects this revision's update writes (empty for the original). */
  changes: ChangedObject[];
}

export interface PdfSignatureInfo {
  fieldName: string;
  /** `signature` for `/Type /Sig`, `timestamp` for a document timestamp (`/DocTimeStamp`). */
  type: 'signature' | 'timestamp';
  byteRange: ByteRange;
  /** The CMS as DER (the placeholder's zero padding removed). */
  contents: Buffer;
  filter: string | undefined;
  subFilter: string | undefined;
  /** `/M`. */
  signingTime: Date | undefined;
  signerName: string | undefined;
  reason: string | undefined;
  location: string | undefined;
  /** DocMDP level of a certification signature (1 no change, 2 forms and signing, 3 annotations). */
  docMdpPermission: 1 | 2 | 3 | undefined;
  /**
   * The hole between the two ranges is exactly this signature's `/Contents` string (`<hex>`):
   * nothing else of the file is left unsigned.
   */
  holeIsContents: boolean;
  /** Where the signed bytes end: `byteRange[2] + byteRange[3]`. */
  signedRevisionEnd: number;
  /** The revision that ends exactly there, if any (else the byte range is not a revision). */
  revisionIndex: number | undefined;
  coversWholeFile: boolean;
  /** The revisions appended after the signed one. */
  laterRevisions: PdfRevision[];
}

export interface PdfSignatureReport {
  fileSize: number;
  revisions: PdfRevision[];
  signatures: PdfSignatureInfo[];
  /** Bytes after the last revision's `%%EOF`: not part of any revision. */
  trailingBytes: number;
}

/** The DER's own length when `bytes` starts with a DER SEQUENCE, else zeros stripped. */
function derContents(bytes: Buffer): Buffer {
  if (bytes[0] === 0x30 && bytes.length >= 2) {
    const first = bytes[1]!;
    let length = first;
    let header = 2;
    if (first & 0x80) {
      const octets = first & 0x7f;
      length = 0;
      for (let i = 0; i < octets; i++) length = length * 256 + (bytes[2 + i] ?? 0);
      header = 2 + octets;
    }
    if (header + length <= bytes.length) return Buffer.from(bytes.subarray(0, header + length));
  }
  let end = bytes.length;
  while (end > 0 && bytes[end - 1] === 0) end--;
  return Buffer.from(bytes.subarray(0, end));
}

const text = (value: PdfObject | undefined) =>
  value instanceof PdfString ? decodeTextString(value) : undefined;

function changedKeys(before: PdfDict, after: PdfDict): string[] {
  const keys = new Set([...before.entries.keys(), ...after.entries.keys()]);
  return [...keys].filter((key) => {
    const a = before.get(key);
    const b = after.get(key);
    return a === undefined || b === undefined || serialize(a) !== serialize(b);
  });
}

/**
 * Every signature of the PDF with its byte range and CMS, and the file's revisions with what
 * each incremental update changed, so that verification can tell "only signature fields and
 * DSS changed after a signature" from other changes. Reads by seeking: the xref sections, the
 * signature fields and the changed objects only.
 */
export function readSignatures(path: string): PdfSignatureReport {
  return PdfReader.read(path, (reader) => {
    const revisions = buildRevisions(reader);
    const signatures: PdfSignatureInfo[] = [];
    for (const field of reader.fields()) {
      if (field.fieldType !== 'Sig') continue;
      const value = reader.resolveDict(field.dict.get('V'));
      if (!value) continue;
      const range = reader.resolveValue(value.get('ByteRange'));
      const contents = reader.resolveValue(value.get('Contents'));
      if (!Array.isArray(range) || range.length !== 4 || !range.every((n) => typeof n === 'number'))
        continue;
      if (!(contents instanceof PdfString)) continue;
      const byteRange = range as ByteRange;
      const signedRevisionEnd = byteRange[2] + byteRange[3];
      const revision = revisions.find((r) => r.endOffset === signedRevisionEnd);
      const filter = reader.resolveValue(value.get('Filter'));
      const subFilter = reader.resolveValue(value.get('SubFilter'));
      const m = text(reader.resolveValue(value.get('M')));
      signatures.push({
        fieldName: field.fullName,
        type: isName(value.get('Type'), 'DocTimeStamp') ? 'timestamp' : 'signature',
        byteRange,
        contents: derContents(contents.bytes),
        filter: isName(filter) ? filter.name : undefined,
        subFilter: isName(subFilter) ? subFilter.name : undefined,
        signingTime: m === undefined ? undefined : parsePdfDate(m),
        signerName: text(reader.resolveValue(value.get('Name'))),
        reason: text(reader.resolveValue(value.get('Reason'))),
        location: text(reader.resolveValue(value.get('Location'))),
        docMdpPermission: reader.docMdpPermission(value),
        holeIsContents: holeIsContents(reader, byteRange, contents),
        signedRevisionEnd,
        revisionIndex: revision?.index,
        coversWholeFile: signedRevisionEnd === reader.size,
        laterRevisions: revisions.filter((r) => r.startOffset >= signedRevisionEnd),
      });
    }
    signatures.sort((a, b) => a.signedRevisionEnd - b.signedRevisionEnd);
    const lastEnd = revisions[revisions.length - 1]?.endOffset ?? 0;
    return {
      fileSize: reader.size,
      revisions,
      signatures,
      trailingBytes: Math.max(0, reader.size - lastEnd),
    };
  });
}

const maxHole = 4 * 1024 * 1024;

function holeIsContents(reader: PdfReader, byteRange: ByteRange, contents: PdfString): boolean {
  const [a, b, c, d] = byteRange;
  if (a !== 0 || b < 1 || c <= b || d < 0 || c + d > reader.size || c - b > maxHole) return false;
  const hole = reader.source.slice(b, c).toString('latin1');
  return (
    /^<[0-9a-fA-F]*>$/.test(hole) && Buffer.from(hole.slice(1, -1), 'hex').equals(contents.bytes)
  );
}

function buildRevisions(reader: PdfReader): PdfRevision[] {
  // Oldest first. A linearized file's first-page section is newer in the chain but sits before
  // the main one: it belongs to the same (original) revision.
  const groups: XrefSection[][] = [];
  for (const section of [...reader.sections].reverse()) {
    const last = groups[groups.length - 1];
    const lastEnd = last ? Math.max(...last.map((s) => s.end)) : -1;
    if (last && section.end <= lastEnd) last.push(section);
    else groups.push([section]);
  }
  const revisions: PdfRevision[] = [];
  let cumulative = new Map<number, XrefEntry>();
  let startOffset = 0;
  groups.forEach((group, index) => {
    const previous = cumulative;
    const own = new Map<number, XrefEntry>();
    // Within a group the later section (first-page xref of a linearized file) wins.
    for (const section of group) for (const [num, entry] of section.entries) own.set(num, entry);
    cumulative = new Map(previous);
    for (const [num, entry] of own) cumulative.set(num, entry);
    const endOffset = Math.max(...group.map((s) => s.end));
    const main = group[0]!;
    const changes =
      index === 0
        ? []
        : describeChanges(
            reader,
            own,
            previous,
            cumulative,
            group.map((s) => s.streamObject),
          );
    const previousRoot = groups[index - 1]?.[0]?.trailer.get('Root');
    const root = main.trailer.get('Root');
    revisions.push({
      index,
      startOffset,
      endOffset,
      xref: main.hybrid ? 'hybrid' : main.type,
      rootChanged:
        index > 0 &&
        (root === undefined ||
          previousRoot === undefined ||
          serialize(root) !== serialize(previousRoot)),
      changes,
    });
    startOffset = endOffset;
  });
  return revisions;
}

function describeChanges(
  reader: PdfReader,
  own: Map<number, XrefEntry>,
  before: Map<number, XrefEntry>,
  after: Map<number, XrefEntry>,
  xrefStreams: (number | undefined)[],
): ChangedObject[] {
  const catalogValue = reader.trailer.get('Root');
  const catalog =
    catalogValue instanceof PdfRef ? reader.getObject(catalogValue, after) : undefined;
  const dssRefs = new Set<number>();
  let acroFormNum: number | undefined;
  if (catalog instanceof PdfDict) {
    const dssValue = catalog.get('DSS');
    if (dssValue instanceof PdfRef) dssRefs.add(dssValue.num);
    const dss = dssValue instanceof PdfRef ? reader.getObject(dssValue, after) : dssValue;
    if (dss instanceof PdfDict) {
      for (const key of ['Certs', 'OCSPs', 'CRLs']) {
        const items = dss.get(key);
        if (Array.isArray(items))
          for (const item of items) if (item instanceof PdfRef) dssRefs.add(item.num);
      }
      const vri = dss.get('VRI');
      if (vri instanceof PdfRef) dssRefs.add(vri.num);
    }
    const acroForm = catalog.get('AcroForm');
    if (acroForm instanceof PdfRef) acroFormNum = acroForm.num;
  }
  const fontParts = fontPartsOf(reader, own, after);
  const changes: ChangedObject[] = [];
  for (const [num, entry] of own) {
    if (num === 0) continue;
    const previous = before.get(num);
    const gen = entry.kind === 'offset' ? entry.gen : 0;
    if (entry.kind === 'free') {
      if (previous && previous.kind !== 'free')
        changes.push({ num, gen, status: 'freed', kind: 'other' });
      continue;
    }
    const status = previous && previous.kind !== 'free' ? 'modified' : 'added';
    const ref = new PdfRef(num, gen);
    if (xrefStreams.includes(num)) {
      changes.push({ num, gen, status, kind: 'xref' });
      continue;
    }
    const object = reader.getObject(ref, after);
    const kind = fontParts.has(num) ? 'font' : classify(object, num, dssRefs, acroFormNum);
    const change: ChangedObject = { num, gen, status, kind };
    if (status === 'modified') {
      const old = reader.getObject(ref, before);
      const lists: Record<string, ReferenceListChange> = {};
      const itemKind = (value: PdfValue) => listItemKind(reader, value, after);
      if (object instanceof PdfDict && old instanceof PdfDict) {
        change.changedKeys = changedKeys(old, object);
        change.addedKeys = change.changedKeys.filter((key) => old.get(key) === undefined);
        for (const key of change.changedKeys) {
          const list = listChange(old.get(key), object.get(key), itemKind);
          if (list) lists[key] = list;
        }
      } else if (Array.isArray(object) && Array.isArray(old)) {
        lists['[]'] = listChange(old, object, itemKind)!;
      }
      if (Object.keys(lists).length > 0) change.lists = lists;
    }
    changes.push(change);
  }
  return changes.sort((a, b) => a.num - b.num);
}

/**
 * The objects an embedded font is made of besides its font dictionaries (descendant fonts'
 * arrays, descriptors, font files, ToUnicode CMaps), found from the fonts this revision writes:
 * a visible signature's appearance font is such a set.
 */
function fontPartsOf(
  reader: PdfReader,
  own: Map<number, XrefEntry>,
  after: Map<number, XrefEntry>,
): Set<number> {
  const parts = new Set<number>();
  const lookup = (value: PdfObject | undefined): PdfObject | undefined => {
    if (!(value instanceof PdfRef)) return value;
    if (own.has(value.num)) parts.add(value.num);
    return reader.getObject(value, after);
  };
  const visitDescriptor = (value: PdfObject | undefined) => {
    const descriptor = lookup(value);
    if (!(descriptor instanceof PdfDict)) return;
    for (const key of ['FontFile', 'FontFile2', 'FontFile3']) lookup(descriptor.get(key));
  };
  for (const [num, entry] of own) {
    if (entry.kind === 'free') continue;
    const font = reader.getObject(new PdfRef(num, entry.kind === 'offset' ? entry.gen : 0), after);
    if (!(font instanceof PdfDict) || !isName(font.get('Type'), 'Font')) continue;
    lookup(font.get('ToUnicode'));
    visitDescriptor(font.get('FontDescriptor'));
    const descendants = lookup(font.get('DescendantFonts'));
    if (!Array.isArray(descendants)) continue;
    for (const descendant of descendants) {
      const cidFont = lookup(descendant);
      if (cidFont instanceof PdfDict) visitDescriptor(cidFont.get('FontDescriptor'));
    }
  }
  return parts;
}

/** A field or annotation listed in an /Annots or /Fields array, as the allowed-changes rules see it. */
function listItemKind(
  reader: PdfReader,
  value: PdfValue,
  xref: Map<number, XrefEntry>,
): ReferenceListChange['added'][number] {
  const object = value instanceof PdfRef ? reader.getObject(value, xref) : value;
  if (!(object instanceof PdfDict)) return 'other';
  const parentRef = object.get('Parent');
  const parent = parentRef instanceof PdfRef ? reader.getObject(parentRef, xref) : undefined;
  if (
    isName(object.get('FT'), 'Sig') ||
    (parent instanceof PdfDict && isName(parent.get('FT'), 'Sig'))
  )
    return 'signatureField';
  if (isName(object.get('Type'), 'Annot') || isName(object.get('Subtype'))) return 'annotation';
  return 'other';
}

/**
 * What an array gained and lost between two versions (a direct array, or one absent before);
 * undefined when either version is not an array.
 */
function listChange(
  before: PdfValue | undefined,
  after: PdfValue | undefined,
  kindOf: (value: PdfValue) => ReferenceListChange['added'][number],
): ReferenceListChange | undefined {
  if (!Array.isArray(after) || (before !== undefined && !Array.isArray(before))) return undefined;
  const remaining = new Map<string, number>();
  for (const item of before ?? []) {
    const key = serialize(item);
    remaining.set(key, (remaining.get(key) ?? 0) + 1);
  }
  const added: ReferenceListChange['added'] = [];
  for (const item of after) {
    const key = serialize(item);
    const count = remaining.get(key) ?? 0;
    if (count > 0) remaining.set(key, count - 1);
    else added.push(kindOf(item));
  }
  const removed = [...remaining.values()].reduce((sum, count) => sum + count, 0);
  return { added, removed };
}

function classify(
  object: PdfObject | undefined,
  num: number,
  dssRefs: Set<number>,
  acroFormNum: number | undefined,
): ChangedObjectKind {
  if (dssRefs.has(num)) return 'dss';
  if (num === acroFormNum) return 'acroForm';
  if (object instanceof PdfStream) {
    const type = object.dict.get('Type');
    if (isName(type, 'ObjStm')) return 'objectStream';
    if (isName(type, 'XRef')) return 'xref';
    if (isName(type, 'XObject') || isName(object.dict.get('Subtype'), 'Form')) return 'xobject';
    return 'other';
  }
  if (Array.isArray(object)) return 'array';
  if (!(object instanceof PdfDict)) return 'other';
  const type = object.get('Type');
  if (isName(type, 'Sig') || isName(type, 'DocTimeStamp')) return 'signature';
  if (isName(object.get('FT'), 'Sig')) return 'signatureField';
  if (isName(type, 'Catalog')) return 'catalog';
  if (isName(type, 'Page')) return 'page';
  if (isName(type, 'DSS')) return 'dss';
  if (isName(type, 'Font')) return 'font';
  return 'other';
}
