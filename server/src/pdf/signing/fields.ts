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
