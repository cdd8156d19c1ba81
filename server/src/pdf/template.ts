/**
 * Fillable PDF templates (AcroForm): what values and fields are, and why a file or a value is
 * refused. No pdf-lib here, so the errors can be checked without loading it.
 */

/** A value of `templateData`: what JSON offers besides objects and arrays. */
export type TemplateValue = string | number | boolean | null;

export type FormFieldKind = 'text' | 'checkbox' | 'radio' | 'dropdown' | 'optionList';

export interface FormField {
  name: string;
  kind: FormFieldKind;
}

/** Why a file cannot serve as a template. */
export type TemplatePdfProblem = 'NOT_PDF' | 'ENCRYPTED' | 'NO_FORM_FIELDS';

export class TemplatePdfError extends Error {
  override readonly name = 'TemplatePdfError';
  constructor(
    readonly problem: TemplatePdfProblem,
    message: string,
  ) {
    super(message);
  }
}

/**
 * A `templateData` entry the form cannot take: `UNKNOWN_FIELD` when `key` names no fillable
 * field, `INVALID_VALUE` when the field cannot show the value.
 */
export class TemplateValueError extends Error {
  override readonly name = 'TemplateValueError';
  constructor(
    readonly key: string,
    readonly reason: 'UNKNOWN_FIELD' | 'INVALID_VALUE',
    message: string,
  ) {
    super(message);
  }
}

/** The first bytes of every PDF file. */
export function looksLikePdf(bytes: Uint8Array): boolean {
  return Buffer.from(bytes.subarray(0, 5)).toString('latin1') === '%PDF-';
}
