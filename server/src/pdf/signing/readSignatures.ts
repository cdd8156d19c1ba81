import {
  DiffAnalysis,
  type RevisionChange,
  type RevisionSections,
  type RevisionState,
  type SignedRevisionFinding,
} from './diff';
import { PdfReader } from './document';
import { type DssMaterial, dssOf } from './dss';
import { docMdpPermission, type SignatureField, terminalFields } from './fields';
import {
  decodeTextString,
  isName,
  PdfDict,
  PdfRef,
  PdfString,
  type PdfValue,
  parsePdfDate,
} from './objects';
import type { ByteRange } from './prepare';
import type { XrefEntry, XrefSection } from './xref';

/** One revision of the file: the original, then one per incremental update. */
export interface PdfRevision {
  index: number;
  startOffset: number;
  /** Just after its `%%EOF` (and end-of-line). */
  endOffset: number;
  xref: 'table' | 'hybrid' | 'stream';
  /**
   * What this revision's update changed, judged against the revision before it (filled for the
   * revisions after a signature; empty for the original and for revisions no signature precedes).
   */
  changes: RevisionChange[];
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
  /**
   * What the later revisions did that only the signed revision shows: hidden objects made
   * visible, dangling references filled in. Every one is a disallowed change.
   */
  laterFindings: SignedRevisionFinding[];
  /** Where the signature sits among the file's signatures: the end of its signed bytes. */
  order: number;
}

/**
 * A signature field whose value is a dictionary a verifier cannot read (no usable `/ByteRange`
 * or `/Contents`, or a value that is not a dictionary): an invalid signature, never an absent one.
 */
export interface UnreadableSignatureInfo {
  fieldName: string;
  type: 'signature' | 'timestamp';
  subFilter: string | undefined;
  /** Why it cannot be read. */
  problem: string;
  /** Where it sits among the file's signatures: the end of the revision that wrote it. */
  order: number;
}

export interface PdfSignatureReport {
  fileSize: number;
  revisions: PdfRevision[];
  signatures: PdfSignatureInfo[];
  unreadableSignatures: UnreadableSignatureInfo[];
  /** Bytes after the last revision's `%%EOF`: not part of any revision. */
  trailingBytes: number;
  /** The newest revision's DSS, read in the same pass (validation material, not trust). */
  dss: DssMaterial;
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

const text = (value: PdfValue | undefined) =>
  value instanceof PdfString ? decodeTextString(value) : undefined;

/**
 * Every signature of the PDF with its byte range and CMS, and the file's revisions with what
 * each incremental update after a signature changed (see `diff/`), judged from the revisions
 * themselves, never from what a later update says. Signature fields are looked for in every
 * revision's form, so that a field dropped by a later update is still reported. Reads by
 * seeking: the xref sections, the form, and the objects the analysis needs.
 */
export function readSignatures(path: string): PdfSignatureReport {
  return PdfReader.read(path, (reader) => {
    const { revisions, sections } = buildRevisions(reader);
    const analysis = new DiffAnalysis(reader, sections);
    const signatures: PdfSignatureInfo[] = [];
    const unreadableSignatures: UnreadableSignatureInfo[] = [];
    for (const { field, state } of signatureFields(revisions, analysis)) {
      const value = state.resolve(field.dict.get('V'));
      // No value (or a reference to nothing): an empty field, not a signature.
      if (value === undefined || value === null) continue;
      const written = writtenIn(revisions, sections, field.dict.get('V'), field.ref);
      if (!(value instanceof PdfDict)) {
        unreadableSignatures.push({
          fieldName: field.fullName,
          type: 'signature',
          subFilter: undefined,
          problem: 'The signature value of the field is not a dictionary',
          order: written,
        });
        continue;
      }
      const type = isName(value.get('Type'), 'DocTimeStamp') ? 'timestamp' : 'signature';
      const subFilter = state.resolve(value.get('SubFilter'));
      const range = state.resolve(value.get('ByteRange'));
      const contents = state.resolve(value.get('Contents'));
      const rangeOk =
        Array.isArray(range) &&
        range.length === 4 &&
        range.every((n) => typeof n === 'number' && Number.isInteger(n) && n >= 0);
      if (!rangeOk || !(contents instanceof PdfString)) {
        unreadableSignatures.push({
          fieldName: field.fullName,
          type,
          subFilter: isName(subFilter) ? subFilter.name : undefined,
          problem: rangeOk
            ? 'The signature dictionary has no /Contents string'
            : 'The signature dictionary has no usable /ByteRange (four non-negative integers)',
          order: written,
        });
        continue;
      }
      const byteRange = range as ByteRange;
      const signedRevisionEnd = byteRange[2] + byteRange[3];
      const revision = revisions.find((r) => endsRevision(reader, r, signedRevisionEnd));
      const filter = state.resolve(value.get('Filter'));
      const m = text(state.value(value.get('M')));
      signatures.push({
        fieldName: field.fullName,
        type,
        byteRange,
        contents: derContents(contents.bytes),
        filter: isName(filter) ? filter.name : undefined,
        subFilter: isName(subFilter) ? subFilter.name : undefined,
        signingTime: m === undefined ? undefined : parsePdfDate(m),
        signerName: text(state.value(value.get('Name'))),
        reason: text(state.value(value.get('Reason'))),
        location: text(state.value(value.get('Location'))),
        docMdpPermission: docMdpPermission(reader, value),
        holeIsContents: holeIsContents(reader, byteRange, contents),
        signedRevisionEnd,
        revisionIndex: revision?.index,
        coversWholeFile: signedRevisionEnd === reader.size,
        laterRevisions: revisions.filter((r) => r.startOffset >= signedRevisionEnd),
        laterFindings: revision ? analysis.signedRevisionFindings(revision.index) : [],
        order: signedRevisionEnd,
      });
    }
    signatures.sort((a, b) => a.signedRevisionEnd - b.signedRevisionEnd);
    unreadableSignatures.sort((a, b) => a.order - b.order);
    // Each revision some signature precedes: what its update changed.
    for (const revision of new Set(signatures.flatMap((s) => s.laterRevisions))) {
      if (revision.index > 0) revision.changes = analysis.update(revision.index).changes;
    }
    const lastEnd = revisions[revisions.length - 1]?.endOffset ?? 0;
    return {
      fileSize: reader.size,
      revisions,
      signatures,
      unreadableSignatures,
      trailingBytes: Math.max(0, reader.size - lastEnd),
      dss: dssOf(reader),
    };
  });
}

/**
 * The signature fields of every revision's form, newest first, each field once (by its object;
 * direct fields by name), with the revision it was found in.
 */
function signatureFields(
  revisions: PdfRevision[],
  analysis: DiffAnalysis,
): { field: SignatureField; state: RevisionState }[] {
  const found: { field: SignatureField; state: RevisionState }[] = [];
  const seen = new Set<string>();
  for (let index = revisions.length - 1; index >= 0; index--) {
    const state = analysis.state(index);
    const catalog = state.catalog();
    const form = catalog ? state.dict(catalog.get('AcroForm')) : undefined;
    const top = form ? state.array(form.get('Fields')) : undefined;
    if (!top) continue;
    for (const field of terminalFields(top, (value) => state.value(value))) {
      if (field.fieldType !== 'Sig') continue;
      const key = field.ref ? `ref:${field.ref.key}` : `name:${field.fullName}`;
      if (seen.has(key)) continue;
      seen.add(key);
      found.push({ field, state });
    }
  }
  return found;
}

/** The end of the first revision that has the object holding a signature value in use. */
function writtenIn(
  revisions: PdfRevision[],
  sections: RevisionSections[],
  value: PdfValue | undefined,
  fieldRef: PdfRef | undefined,
): number {
  const holder = value instanceof PdfRef ? value : fieldRef;
  if (holder) {
    for (let index = 0; index < sections.length; index++) {
      const entry = sections[index]!.xref.get(holder.num);
      if (entry && entry.kind !== 'free') return revisions[index]!.endOffset;
    }
  }
  return revisions[revisions.length - 1]?.endOffset ?? 0;
}

/**
 * Whether a signature's byte range, ending at `end`, ends `revision`: at its end, or just before
 * the end-of-line that follows its `%%EOF` (a signer that wrote no EOL after `%%EOF` leaves it
 * to the next update, which our section ends count in the earlier revision).
 */
function endsRevision(reader: PdfReader, revision: PdfRevision, end: number): boolean {
  const gap = revision.endOffset - end;
  if (gap === 0) return true;
  if (gap < 0 || gap > 2) return false;
  return /^(\r\n|\r|\n)$/.test(reader.source.slice(end, revision.endOffset).toString('latin1'));
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

function buildRevisions(reader: PdfReader): {
  revisions: PdfRevision[];
  sections: RevisionSections[];
} {
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
  const sections: RevisionSections[] = [];
  let cumulative = new Map<number, XrefEntry>();
  let startOffset = 0;
  groups.forEach((group, index) => {
    const own = new Map<number, XrefEntry>();
    // Within a group the later section (first-page xref of a linearized file) wins.
    for (const section of group) for (const [num, entry] of section.entries) own.set(num, entry);
    cumulative = new Map(cumulative);
    for (const [num, entry] of own) cumulative.set(num, entry);
    const endOffset = Math.max(...group.map((s) => s.end));
    const main = group[0]!;
    revisions.push({
      index,
      startOffset,
      endOffset,
      xref: main.hybrid ? 'hybrid' : main.type,
      changes: [],
    });
    sections.push({
      own,
      xref: cumulative,
      trailer: main.trailer,
      xrefStreams: new Set(
        group.flatMap((s) => (s.streamObject === undefined ? [] : [s.streamObject])),
      ),
    });
    startOffset = endOffset;
  });
  return { revisions, sections };
}
