import fontkit from '@pdf-lib/fontkit';
import {
  concatTransformationMatrix,
  drawObject,
  PDFArray,
  PDFCheckBox,
  PDFDict,
  PDFDocument,
  PDFDropdown,
  type PDFField,
  type PDFFont,
  PDFName,
  PDFNumber,
  PDFOptionList,
  PDFRadioGroup,
  PDFRef,
  PDFStream,
  PDFTextField,
  popGraphicsState,
  pushGraphicsState,
} from 'pdf-lib';
import { dejaVuSansBytes, subsetTag } from './fonts/dejaVuSans';
import {
  type FormField,
  type FormFieldKind,
  looksLikePdf,
  TemplatePdfError,
  type TemplateValue,
  TemplateValueError,
} from './template';

/**
 * The pdf-lib side of fillable PDF templates (AcroForm): reading the fields, filling them. Text is
 * drawn with DejaVu Sans, embedded as a subset, so Vietnamese prints as typed; the filled form is
 * then flattened: every field's appearance becomes page content and no field remains. Loaded on
 * first use through ./fillTemplate: pdf-lib and fontkit cost about half a second at start.
 */

async function loadPdf(bytes: Uint8Array): Promise<PDFDocument> {
  if (!looksLikePdf(bytes)) {
    throw new TemplatePdfError('NOT_PDF', 'The file is not a PDF (it does not start with %PDF-)');
  }
  let doc: PDFDocument;
  try {
    doc = await PDFDocument.load(bytes, { updateMetadata: false, ignoreEncryption: true });
    if (doc.getPageCount() === 0) throw new Error('it has no page');
  } catch {
    throw new TemplatePdfError('NOT_PDF', 'The file starts like a PDF but cannot be read as one');
  }
  if (doc.isEncrypted) {
    throw new TemplatePdfError('ENCRYPTED', 'The PDF is encrypted; save it without a password');
  }
  // XFA (a second, XML form some editors add) is not filled; the AcroForm is what we fill.
  doc.catalog.getAcroForm()?.dict.delete(PDFName.of('XFA'));
  return doc;
}

function kindOf(field: PDFField): FormFieldKind | undefined {
  if (field instanceof PDFTextField) return 'text';
  if (field instanceof PDFCheckBox) return 'checkbox';
  if (field instanceof PDFRadioGroup) return 'radio';
  if (field instanceof PDFDropdown) return 'dropdown';
  if (field instanceof PDFOptionList) return 'optionList';
  // Push buttons and signature fields take no value.
  return undefined;
}

function fillable(doc: PDFDocument): Map<string, { field: PDFField; kind: FormFieldKind }> {
  const fields = new Map<string, { field: PDFField; kind: FormFieldKind }>();
  for (const field of doc.getForm().getFields()) {
    const kind = kindOf(field);
    if (kind !== undefined) fields.set(field.getName(), { field, kind });
  }
  return fields;
}

/** The fillable fields of a template, in form order; refuses files that cannot be templates. */
export async function readFormFields(bytes: Uint8Array): Promise<FormField[]> {
  const fields = [...fillable(await loadPdf(bytes)).entries()].map(([name, { kind }]) => ({
    name,
    kind,
  }));
  if (fields.length === 0) {
    throw new TemplatePdfError(
      'NO_FORM_FIELDS',
      'The PDF has no fillable form field (AcroForm text, check box, radio, list or dropdown)',
    );
  }
  return fields;
}

function invalid(key: string, message: string): TemplateValueError {
  return new TemplateValueError(key, 'INVALID_VALUE', message);
}

/** The text a text-like field shows: NFC, line breaks only where the field has several lines. */
function textOf(
  key: string,
  value: string | number | boolean,
  multiline: boolean,
  font: Set<number>,
) {
  let text = String(value).normalize('NFC');
  if (!multiline) text = text.replace(/\r\n|\r|\n/g, ' ');
  else text = text.replace(/\r\n|\r/g, '\n');
  for (const character of text) {
    const codePoint = character.codePointAt(0)!;
    if (codePoint === 0x0a || codePoint === 0x09 || font.has(codePoint)) continue;
    const hex = codePoint.toString(16).toUpperCase().padStart(4, '0');
    throw invalid(
      key,
      `The character U+${hex} cannot be printed with the template font (DejaVu Sans)`,
    );
  }
  return text;
}

function choose(key: string, options: string[], text: string): string {
  if (options.includes(text)) return text;
  throw invalid(key, `"${text}" is not an option of this field; options: ${options.join(', ')}`);
}

function setValue(
  key: string,
  field: PDFField,
  kind: FormFieldKind,
  value: string | number | boolean,
  charset: Set<number>,
): void {
  if (kind === 'checkbox') {
    if (typeof value !== 'boolean') {
      throw invalid(key, 'This field is a check box: send true or false');
    }
    const box = field as PDFCheckBox;
    if (value) box.check();
    else box.uncheck();
    return;
  }
  if (typeof value === 'boolean' && kind !== 'text') {
    throw invalid(key, 'This field is a choice: send one of its options as text');
  }
  if (kind === 'text') {
    const textField = field as PDFTextField;
    const text = textOf(key, value, textField.isMultiline(), charset);
    const maxLength = textField.getMaxLength();
    if (maxLength !== undefined && text.length > maxLength) {
      throw invalid(key, `At most ${maxLength} characters fit in this field`);
    }
    textField.setText(text);
    return;
  }
  const text = textOf(key, value, false, charset);
  if (kind === 'radio') {
    const radio = field as PDFRadioGroup;
    radio.select(choose(key, radio.getOptions(), text));
  } else if (kind === 'dropdown') {
    const dropdown = field as PDFDropdown;
    dropdown.select(dropdown.isEditable() ? text : choose(key, dropdown.getOptions(), text));
  } else {
    const list = field as PDFOptionList;
    list.select(choose(key, list.getOptions(), text));
  }
}

/**
 * Fills the template's fields with `values` (keys are field names; null leaves a field as it
 * is), renders every text, list and dropdown field with the embedded DejaVu Sans and flattens
 * the form. Throws TemplateValueError for a key that names no fillable field or a value the
 * field cannot take. Deterministic: the same template and values give the same bytes.
 */
export async function fillTemplate(
  template: Uint8Array,
  values: Record<string, TemplateValue>,
): Promise<Uint8Array> {
  const doc = await loadPdf(template);
  doc.registerFontkit(fontkit);
  const font = await doc.embedFont(await dejaVuSansBytes(), {
    subset: true,
    customName: `${subsetTag(template, JSON.stringify(values))}+DejaVuSans`,
  });
  const charset = new Set(font.getCharacterSet());
  const fields = fillable(doc);
  for (const [key, value] of Object.entries(values)) {
    const target = fields.get(key);
    if (target === undefined) {
      throw new TemplateValueError(
        key,
        'UNKNOWN_FIELD',
        `The template has no fillable field "${key}"; fields: ${[...fields.keys()].join(', ')}`,
      );
    }
    if (value !== null) setValue(key, target.field, target.kind, value, charset);
  }
  for (const { field, kind } of fields.values()) renderAppearance(field, kind, font);
  flattenForm(doc);
  return doc.save({ useObjectStreams: false, updateFieldAppearances: false });
}

/** New appearances: text in DejaVu Sans for every field showing text, boxes only when changed. */
function renderAppearance(field: PDFField, kind: FormFieldKind, font: PDFFont): void {
  if (kind === 'text') (field as PDFTextField).updateAppearances(font);
  else if (kind === 'dropdown') (field as PDFDropdown).updateAppearances(font);
  else if (kind === 'optionList') (field as PDFOptionList).updateAppearances(font);
  else if (field.needsAppearancesUpdate()) field.defaultUpdateAppearances(font);
}

const hiddenFlags = 2 | 32; // Hidden, NoView

/** The widget's normal appearance stream (the one of its current state for boxes). */
function normalAppearance(doc: PDFDocument, widget: PDFDict): PDFRef | undefined {
  const appearances = widget.lookupMaybe(PDFName.of('AP'), PDFDict);
  let normal = appearances?.get(PDFName.of('N'));
  const resolved = normal instanceof PDFRef ? doc.context.lookup(normal) : normal;
  if (resolved instanceof PDFDict && !(resolved instanceof PDFStream)) {
    const state = widget.get(PDFName.of('AS'));
    normal = state instanceof PDFName ? resolved.get(state) : undefined;
  }
  if (normal instanceof PDFRef) {
    return doc.context.lookup(normal) instanceof PDFStream ? normal : undefined;
  }
  return normal instanceof PDFStream ? doc.context.register(normal) : undefined;
}

function numbers(array: PDFArray | undefined, count: number): number[] | undefined {
  if (array === undefined || array.size() !== count) return undefined;
  const result = array.asArray().map((item) => (item instanceof PDFNumber ? item.asNumber() : NaN));
  return result.some(Number.isNaN) ? undefined : result;
}

/**
 * The matrix that places an appearance (BBox transformed by its Matrix) onto the widget's
 * rectangle, as PDF 32000-1 §12.5.5 describes.
 */
function placement(doc: PDFDocument, widget: PDFDict, appearance: PDFRef): number[] | undefined {
  const stream = doc.context.lookup(appearance, PDFStream);
  const rect = numbers(widget.lookupMaybe(PDFName.of('Rect'), PDFArray), 4);
  const bbox = numbers(stream.dict.lookupMaybe(PDFName.of('BBox'), PDFArray), 4);
  if (rect === undefined || bbox === undefined) return undefined;
  const [a, b, c, d, e, f] = numbers(
    stream.dict.lookupMaybe(PDFName.of('Matrix'), PDFArray),
    6,
  ) ?? [1, 0, 0, 1, 0, 0];
  const corners = [
    [bbox[0]!, bbox[1]!],
    [bbox[2]!, bbox[1]!],
    [bbox[0]!, bbox[3]!],
    [bbox[2]!, bbox[3]!],
  ].map(([x, y]) => [a! * x! + c! * y! + e!, b! * x! + d! * y! + f!]);
  const xs = corners.map(([x]) => x!);
  const ys = corners.map(([, y]) => y!);
  const [left, bottom] = [Math.min(...xs), Math.min(...ys)];
  const [width, height] = [Math.max(...xs) - left, Math.max(...ys) - bottom];
  if (width <= 0 || height <= 0) return undefined;
  const [rx, ry] = [Math.min(rect[0]!, rect[2]!), Math.min(rect[1]!, rect[3]!)];
  const sx = Math.abs(rect[2]! - rect[0]!) / width;
  const sy = Math.abs(rect[3]! - rect[1]!) / height;
  return [sx, 0, 0, sy, rx - sx * left, ry - sy * bottom];
}

/**
 * Draws every visible widget's appearance into its page's content and removes all widgets and
 * the AcroForm itself, so no field (and no leftover font of the form) remains.
 */
function flattenForm(doc: PDFDocument): void {
  for (const page of doc.getPages()) {
    const annots = page.node.Annots();
    if (annots === undefined) continue;
    const kept: PDFArray = doc.context.obj([]);
    const operators = [];
    for (const entry of annots.asArray()) {
      const annot = doc.context.lookup(entry);
      if (
        !(annot instanceof PDFDict) ||
        annot.get(PDFName.of('Subtype')) !== PDFName.of('Widget')
      ) {
        kept.push(entry);
        continue;
      }
      const flags = annot.lookupMaybe(PDFName.of('F'), PDFNumber)?.asNumber() ?? 0;
      if (flags & hiddenFlags) continue;
      const appearance = normalAppearance(doc, annot);
      const matrix = appearance && placement(doc, annot, appearance);
      if (appearance === undefined || matrix === undefined) continue;
      const name = page.node.newXObject('FlatWidget', appearance);
      operators.push(
        pushGraphicsState(),
        concatTransformationMatrix(...(matrix as [number, number, number, number, number, number])),
        drawObject(name),
        popGraphicsState(),
      );
    }
    // normalize() wraps the existing content in q/Q, so the widgets are drawn in page space.
    page.node.normalize();
    if (operators.length > 0) {
      page.node.addContentStream(doc.context.register(doc.context.contentStream(operators)));
    }
    if (kept.size() > 0) page.node.set(PDFName.of('Annots'), kept);
    else page.node.delete(PDFName.of('Annots'));
  }
  doc.catalog.delete(PDFName.of('AcroForm'));
}
