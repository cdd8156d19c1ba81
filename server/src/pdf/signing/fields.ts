import type { PdfReader } from './document';
import { decodeTextString, isName, PdfDict, PdfRef, PdfString, type PdfValue } from './objects';

export interface SignatureField {
  ref: PdfRef | undefined;
  dict: PdfDict;
  /** Fully qualified field name: the parents' `/T` joined with dots. */
  fullName: string;
  /** The field type, inherited from the parents when the field does not say it. */
  fieldType: string | undefined;
}

const maxDepth = 32;
const maxFields = 50_000;

/**
 * Every terminal field under the `/Fields` items `top` (widgets merged with fields included),
 * read through `resolve` (a revision's view of the document). Cycles and deep nesting stop.
 */
export function terminalFields(
  top: PdfValue[],
  resolve: (value: PdfValue | undefined) => PdfValue | undefined,
): SignatureField[] {
  const dictOf = (value: PdfValue | undefined) => {
    const resolved = resolve(value);
    return resolved instanceof PdfDict ? resolved : undefined;
  };
  const result: SignatureField[] = [];
  const seen = new Set<string>();
  let count = 0;
  const walk = (
    value: PdfValue,
    parentName: string,
    parentType: string | undefined,
    depth: number,
  ) => {
    if (depth > maxDepth || ++count > maxFields) return;
    if (value instanceof PdfRef) {
      if (seen.has(value.key)) return;
      seen.add(value.key);
    }
    const field = dictOf(value);
    if (!field) return;
    const t = field.get('T');
    const partial = t instanceof PdfString ? decodeTextString(t) : undefined;
    const fullName =
      partial === undefined ? parentName : parentName ? `${parentName}.${partial}` : partial;
    const ft = field.get('FT');
    const fieldType = isName(ft) ? ft.name : parentType;
    const kids = resolve(field.get('Kids'));
    const fieldKids = Array.isArray(kids)
      ? kids.filter((kid) => dictOf(kid)?.get('T') !== undefined)
      : [];
    if (fieldKids.length > 0) {
      for (const kid of fieldKids) walk(kid, fullName, fieldType, depth + 1);
      return;
    }
    result.push({
      ref: value instanceof PdfRef ? value : undefined,
      dict: field,
      fullName,
      fieldType,
    });
  };
  for (const field of top) walk(field, '', undefined, 0);
  return result;
}

/** Every terminal field of the document's AcroForm (widgets merged with fields included). */
export function acroFormFields(reader: PdfReader): SignatureField[] {
  const acroForm = reader.resolveDict(reader.catalog().get('AcroForm'));
  const top = acroForm ? reader.resolveValue(acroForm.get('Fields')) : undefined;
  return terminalFields(Array.isArray(top) ? top : [], (value) => reader.resolveValue(value));
}

/**
 * The DocMDP permission (1 no change, 2 form filling and signing, 3 also annotations) of a
 * certification signature's `/Reference`, or undefined for an approval signature.
 */
export function docMdpPermission(reader: PdfReader, signature: PdfDict): 1 | 2 | 3 | undefined {
  const references = reader.resolveValue(signature.get('Reference'));
  if (!Array.isArray(references)) return undefined;
  for (const reference of references) {
    const ref = reader.resolveDict(reference);
    if (!ref || !isName(ref.get('TransformMethod'), 'DocMDP')) continue;
    const params = reader.resolveDict(ref.get('TransformParams'));
    const p = params ? reader.resolveValue(params.get('P')) : undefined;
    // /P defaults to 2 when absent.
    return p === 1 || p === 3 ? p : 2;
  }
  return undefined;
}
