import type { FormField, TemplateValue } from './template';

/**
 * Fillable PDF templates: the entry points the service calls. The pdf-lib work lives in
 * ./acroForm and is loaded on the first call, so a start-up that serves no template never pays
 * for pdf-lib and fontkit.
 */

export {
  type FormField,
  type FormFieldKind,
  looksLikePdf,
  TemplatePdfError,
  type TemplatePdfProblem,
  type TemplateValue,
  TemplateValueError,
} from './template';

let acroForm: Promise<typeof import('./acroForm')> | undefined;

function loadAcroForm(): Promise<typeof import('./acroForm')> {
  acroForm ??= import('./acroForm');
  return acroForm;
}

/** The fillable fields of a template, in form order; refuses files that cannot be templates. */
export async function readFormFields(bytes: Uint8Array): Promise<FormField[]> {
  return (await loadAcroForm()).readFormFields(bytes);
}

/**
 * Fills the template's fields with `values` and flattens the form (see ./acroForm). Throws
 * TemplateValueError for a value the form cannot take. Same template and values, same bytes.
 */
export async function fillTemplate(
  template: Uint8Array,
  values: Record<string, TemplateValue>,
): Promise<Uint8Array> {
  return (await loadAcroForm()).fillTemplate(template, values);
}
