import { PdfReader } from './document';
import {
  decodeTextString,
  isName,
  PdfDict,
  type PdfObject,
  PdfRef,
  PdfStream,
  PdfString,
  type PdfValue,
} from './objects';
import { pageRef } from './pages';
import { readSignatures } from './readSignatures';

/** What makes a PDF more than a document: code a reader may run, files it carries. */
export type ActiveContentKind = 'javascript' | 'launch' | 'embeddedFile' | 'richMedia' | 'xfa';

export interface ActiveContent {
  kind: ActiveContentKind;
  /** The object that holds it. */
  object: number;
  /** An embedded file's name, an action's type. */
  detail?: string;
}

const describe: Record<ActiveContentKind, string> = {
  javascript: 'JavaScript',
  launch: 'a launch action (/Launch)',
  embeddedFile: 'an embedded file',
  richMedia: 'rich media (Flash, 3D)',
  xfa: 'an XFA form (scripted forms that replace the pages)',
};

/** One line per finding, for the refusal's message. */
export function describeActiveContent(found: ActiveContent): string {
  const what = describe[found.kind];
  return found.detail
    ? `${what} "${found.detail}" (object ${found.object})`
    : `${what} (object ${found.object})`;
}

const text = (value: PdfValue | undefined) =>
  value instanceof PdfString ? decodeTextString(value).slice(0, 80) : undefined;

/** What one dictionary is or holds, among the active content kinds. */
function judge(dict: PdfDict, num: number, found: ActiveContent[]): void {
  const action = dict.get('S');
  if (dict.get('JS') !== undefined || isName(action, 'JavaScript')) {
    found.push({ kind: 'javascript', object: num });
  }
  if (isName(action, 'Launch')) found.push({ kind: 'launch', object: num });
  const subtype = dict.get('Subtype');
  if (
    isName(action, 'RichMediaExecute') ||
    isName(subtype, 'RichMedia') ||
    isName(subtype, '3D') ||
    dict.get('OnInstantiate') !== undefined
  ) {
    found.push({ kind: 'richMedia', object: num });
  }
  // Only a name dictionary has /JavaScript: the tree of document-level scripts.
  if (dict.get('JavaScript') !== undefined) {
    found.push({ kind: 'javascript', object: num, detail: '/Names /JavaScript' });
  }
  if (dict.get('EF') !== undefined || isName(dict.get('Type'), 'EmbeddedFile')) {
    const name = text(dict.get('UF')) ?? text(dict.get('F'));
    found.push({ kind: 'embeddedFile', object: num, ...(name ? { detail: name } : {}) });
  }
  if (dict.get('XFA') !== undefined && dict.get('Fields') !== undefined) {
    found.push({ kind: 'xfa', object: num });
  }
}

/**
 * Every piece of active content in the document as its newest revision defines it: each object
 * of the cross-reference table (those in object streams too) is parsed, and every dictionary in
 * it (nested ones, stream dictionaries) judged. Stream data is not decoded.
 */
export function findActiveContent(reader: PdfReader): ActiveContent[] {
  const found: ActiveContent[] = [];
  for (const [num, entry] of reader.xref) {
    if (entry.kind === 'free' || num === 0) continue;
    // Strict: an object in use that does not parse is an unreadable file, not one skipped
    // (another reader may parse it, and run what it holds).
    const object = reader.getObject(new PdfRef(num, entry.kind === 'offset' ? entry.gen : 0));
    const pending: (PdfObject | undefined)[] = [object];
    while (pending.length > 0) {
      const value = pending.pop();
      if (value instanceof PdfStream) pending.push(value.dict);
      else if (Array.isArray(value)) for (const item of value) pending.push(item);
      else if (value instanceof PdfDict) {
        judge(value, num, found);
        for (const item of value.entries.values()) pending.push(item);
      }
    }
    reader.budget.step();
  }
  return found;
}

export interface PdfInspection {
  /** Signature fields holding a signature (document timestamps included). */
  signatures: number;
  activeContent: ActiveContent[];
}

/**
 * The upload check: the file reads as the signing engine reads it (cross-references, revisions,
 * signature fields, a first page to sign on), and what active content it holds.
 */
export function inspectPdf(path: string): PdfInspection {
  const { signatures } = readSignatures(path);
  const activeContent = PdfReader.read(path, (reader) => {
    pageRef(reader, 0);
    return findActiveContent(reader);
  });
  return { signatures: signatures.length, activeContent };
}
