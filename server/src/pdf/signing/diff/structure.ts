import {
  decodeTextString,
  isName,
  type PdfDict,
  PdfRef,
  PdfString,
  type PdfValue,
} from '../objects';
import type { RevisionState } from './state';

/** What an object of a revision is, as far as judging a later change of it goes. */
export type Role =
  | { kind: 'catalog' }
  | { kind: 'info' }
  | { kind: 'metadata' }
  | { kind: 'acroForm' }
  | { kind: 'fieldsArray' }
  | { kind: 'dss' }
  | { kind: 'dssArray'; key: string }
  | { kind: 'vri' }
  | { kind: 'vriEntry' }
  | { kind: 'dssItem' }
  | { kind: 'pageTree' }
  | { kind: 'page'; page: number }
  | { kind: 'annotsArray'; page: number }
  | { kind: 'contents'; page: number }
  | { kind: 'resources'; page: number }
  | { kind: 'resource'; page: number; category: string; name: string }
  | { kind: 'annotation'; page: number; subtype: string }
  | { kind: 'field'; field: FieldInfo; widget: boolean; node: boolean }
  | { kind: 'signatureValue'; field: FieldInfo }
  | { kind: 'objectStream' };

export interface FieldInfo {
  name: string;
  /** The field type, inherited from its parents. */
  type: string | undefined;
  /** The field has a value (for a signature field: it is signed). */
  hasValue: boolean;
  /** The terminal field's number, when it is an object of its own. */
  num: number | undefined;
}

/** Upper bounds of the walk, so that a hostile page tree or form cannot make it run long. */
const maxPages = 100_000;
const maxFields = 50_000;
const maxDepth = 64;

/**
 * The roles of a revision's objects: catalog, information dictionary, form (fields and their
 * widgets), DSS (dictionary, arrays, VRI, items), page tree, pages with their contents,
 * resources and annotations. Read from that revision alone, so that what a later update claims
 * an object is never decides how its change is judged.
 */
export class RevisionStructure {
  readonly roles = new Map<number, Role[]>();
  /** Page number (1-based) of each page object. */
  readonly pages = new Map<number, number>();
  /** The top-level fields (`/Fields` items) as references or direct values. */
  readonly topFields: PdfValue[] = [];
  /** Every terminal field, by the number of the field object. */
  readonly fields = new Map<number, FieldInfo>();
  /** The catalog's `/AcroForm` dictionary (direct or not). */
  readonly acroForm: PdfDict | undefined;
  readonly dss: PdfDict | undefined;
  readonly catalog: PdfDict | undefined;

  constructor(readonly state: RevisionState) {
    const catalog = state.catalog();
    this.catalog = catalog;
    const root = state.root();
    if (root) this.add(root, { kind: 'catalog' });
    this.add(state.trailer.get('Info'), { kind: 'info' });
    if (catalog) this.add(catalog.get('Metadata'), { kind: 'metadata' });
    this.acroForm = catalog ? state.dict(catalog.get('AcroForm')) : undefined;
    this.dss = catalog ? state.dict(catalog.get('DSS')) : undefined;
    if (catalog) {
      this.walkForm(catalog);
      this.walkDss(catalog);
      this.walkPages(catalog.get('Pages'));
    }
    for (const entry of state.xref.values()) {
      if (entry.kind === 'compressed')
        this.add(new PdfRef(entry.stream, 0), { kind: 'objectStream' });
    }
  }

  rolesOf(num: number): Role[] {
    return this.roles.get(num) ?? [];
  }

  private readonly roleKeys = new Map<number, Set<string>>();

  /**
   * Gives the object `role`, once per kind of rule: the same font on 200 pages is judged once
   * (and described by its first page), so a shared object costs no more than one.
   */
  private add(value: PdfValue | undefined, role: Role): void {
    if (!(value instanceof PdfRef)) return;
    const r = role as Partial<Record<'key' | 'category' | 'name', string>> & {
      field?: FieldInfo;
      widget?: boolean;
    };
    const key = `${role.kind}|${r.key ?? ''}|${r.category ?? ''}|${r.name ?? ''}|${r.field?.name ?? ''}|${r.widget ?? ''}`;
    const keys = this.roleKeys.get(value.num) ?? new Set<string>();
    if (keys.has(key)) return;
    keys.add(key);
    this.roleKeys.set(value.num, keys);
    this.roles.set(value.num, [...(this.roles.get(value.num) ?? []), role]);
  }

  private walkForm(catalog: PdfDict): void {
    const state = this.state;
    this.add(catalog.get('AcroForm'), { kind: 'acroForm' });
    if (!this.acroForm) return;
    const fields = this.acroForm.get('Fields');
    this.add(fields, { kind: 'fieldsArray' });
    const top = state.array(fields) ?? [];
    this.topFields.push(...top);
    const seen = new Set<number>();
    let count = 0;
    const walk = (
      value: PdfValue,
      parentName: string,
      parentType: string | undefined,
      d: number,
    ) => {
      if (d > maxDepth || ++count > maxFields) return;
      if (value instanceof PdfRef) {
        if (seen.has(value.num)) return;
        seen.add(value.num);
      }
      const field = state.dict(value);
      if (!field) return;
      const t = field.get('T');
      const partial = t instanceof PdfString ? decodeTextString(t) : undefined;
      const name =
        partial === undefined ? parentName : parentName ? `${parentName}.${partial}` : partial;
      const ft = field.get('FT');
      const type = isName(ft) ? ft.name : parentType;
      const kids = state.array(field.get('Kids')) ?? [];
      const fieldKids = kids.filter((kid) => state.dict(kid)?.get('T') !== undefined);
      const widgetKids = kids.filter((kid) => state.dict(kid)?.get('T') === undefined);
      const v = field.get('V');
      const info: FieldInfo = {
        name,
        type,
        hasValue: v !== undefined && v !== null && state.resolve(v) !== undefined,
        num: value instanceof PdfRef ? value.num : undefined,
      };
      if (fieldKids.length > 0) {
        this.add(value, { kind: 'field', field: info, widget: false, node: true });
        for (const kid of fieldKids) walk(kid, name, type, d + 1);
        return;
      }
      const merged = widgetKids.length === 0;
      this.add(value, { kind: 'field', field: info, widget: merged, node: false });
      if (info.num !== undefined) this.fields.set(info.num, info);
      for (const kid of widgetKids)
        this.add(kid, { kind: 'field', field: info, widget: true, node: false });
      if (type === 'Sig') this.add(v, { kind: 'signatureValue', field: info });
    };
    for (const field of top) walk(field, '', undefined, 0);
  }

  private walkDss(catalog: PdfDict): void {
    const state = this.state;
    this.add(catalog.get('DSS'), { kind: 'dss' });
    const dss = this.dss;
    if (!dss) return;
    for (const key of ['Certs', 'OCSPs', 'CRLs']) {
      this.add(dss.get(key), { kind: 'dssArray', key });
      for (const item of state.array(dss.get(key)) ?? []) this.add(item, { kind: 'dssItem' });
    }
    this.add(dss.get('VRI'), { kind: 'vri' });
    const vri = state.dict(dss.get('VRI'));
    if (!vri) return;
    for (const entryValue of vri.entries.values()) {
      this.add(entryValue, { kind: 'vriEntry' });
      const entry = state.dict(entryValue);
      if (!entry) continue;
      for (const key of ['Cert', 'OCSP', 'CRL']) {
        this.add(entry.get(key), { kind: 'dssArray', key });
        for (const item of state.array(entry.get(key)) ?? []) this.add(item, { kind: 'dssItem' });
      }
      this.add(entry.get('TS'), { kind: 'dssItem' });
    }
  }

  private walkPages(pagesValue: PdfValue | undefined): void {
    const state = this.state;
    const seen = new Set<number>();
    let pageNumber = 0;
    const walk = (value: PdfValue, inherited: PdfValue | undefined, d: number) => {
      if (d > maxDepth || pageNumber >= maxPages || !(value instanceof PdfRef)) return;
      if (seen.has(value.num)) return;
      seen.add(value.num);
      const node = state.dict(value);
      if (!node) return;
      const resources = node.get('Resources') ?? inherited;
      const kids = state.array(node.get('Kids'));
      if (isName(node.get('Type'), 'Pages') || (kids && !isName(node.get('Type'), 'Page'))) {
        this.add(value, { kind: 'pageTree' });
        this.add(node.get('Kids'), { kind: 'pageTree' });
        for (const kid of kids ?? []) walk(kid, resources, d + 1);
        return;
      }
      const page = ++pageNumber;
      this.pages.set(value.num, page);
      this.add(value, { kind: 'page', page });
      this.walkPage(node, resources, page);
    };
    if (pagesValue !== undefined) walk(pagesValue, undefined, 0);
  }

  private walkPage(page: PdfDict, resourcesValue: PdfValue | undefined, pageNumber: number): void {
    const state = this.state;
    const contents = page.get('Contents');
    this.add(contents, { kind: 'contents', page: pageNumber });
    for (const item of state.array(contents) ?? [])
      this.add(item, { kind: 'contents', page: pageNumber });
    this.add(resourcesValue, { kind: 'resources', page: pageNumber });
    const resources = state.dict(resourcesValue);
    if (resources) {
      for (const [category, categoryValue] of resources.entries) {
        this.add(categoryValue, { kind: 'resources', page: pageNumber });
        const entries = state.dict(categoryValue);
        if (!entries) continue;
        for (const [name, item] of entries.entries) {
          this.add(item, { kind: 'resource', page: pageNumber, category, name });
        }
      }
    }
    const annots = page.get('Annots');
    this.add(annots, { kind: 'annotsArray', page: pageNumber });
    for (const item of state.array(annots) ?? []) {
      const annotation = state.dict(item);
      const subtype = annotation?.get('Subtype');
      if (isName(subtype, 'Widget')) continue;
      this.add(item, {
        kind: 'annotation',
        page: pageNumber,
        subtype: isName(subtype) ? subtype.name : 'unknown',
      });
    }
  }
}

/** A role in words, for a report: "the content stream of page 1". */
export function describeRole(role: Role): string {
  switch (role.kind) {
    case 'catalog':
      return 'the document catalog';
    case 'info':
      return 'the document information dictionary';
    case 'metadata':
      return 'the document metadata';
    case 'acroForm':
      return 'the form dictionary';
    case 'fieldsArray':
      return 'the list of form fields';
    case 'dss':
      return 'the /DSS dictionary';
    case 'dssArray':
      return `the /DSS /${role.key} list`;
    case 'vri':
      return 'the /DSS /VRI dictionary';
    case 'vriEntry':
      return 'a /DSS /VRI entry';
    case 'dssItem':
      return 'a /DSS entry';
    case 'pageTree':
      return 'the page tree';
    case 'page':
      return `page ${role.page}`;
    case 'annotsArray':
      return `the annotations of page ${role.page}`;
    case 'contents':
      return `the content stream of page ${role.page}`;
    case 'resources':
      return `the resources of page ${role.page}`;
    case 'resource':
      return `the ${resourceNoun(role.category)} /${role.name} of page ${role.page}`;
    case 'annotation':
      return `an annotation (/${role.subtype}) on page ${role.page}`;
    case 'field':
      return `${role.field.type === 'Sig' ? 'signature field' : 'form field'} '${role.field.name}'`;
    case 'signatureValue':
      return `the signature of field '${role.field.name}'`;
    case 'objectStream':
      return 'an object stream holding objects of an earlier revision';
  }
}

function resourceNoun(category: string): string {
  switch (category) {
    case 'Font':
      return 'font';
    case 'XObject':
      return 'XObject';
    case 'ExtGState':
      return 'graphics state';
    case 'ColorSpace':
      return 'colour space';
    case 'Pattern':
      return 'pattern';
    case 'Shading':
      return 'shading';
    default:
      return `/${category} resource`;
  }
}
