import {
  decodeTextString,
  isName,
  PdfDict,
  type PdfObject,
  PdfRef,
  PdfStream,
  PdfString,
  type PdfValue,
  serialize,
} from '../objects';
import type { XrefEntry } from '../xref';
import { type RevisionState, refText } from './state';
import { describeRole, type FieldInfo, RevisionStructure, type Role } from './structure';
import type { ChangeKind, DssItemType, RevisionChange } from './types';
import { referencesIn, sameObject } from './values';

/** What one incremental update did, judged against the revision before it. */
export interface UpdateAnalysis {
  changes: RevisionChange[];
  /** Numbers the update gives to new objects (not in use before it). */
  added: number[];
  /** References the update's objects gained: `from` the object that holds it. */
  newReferences: { from: number; to: PdfRef }[];
}

/** DSS entries are certificates, OCSP answers and CRLs: a few MB at most. */
const maxDssItem = 16 * 1024 * 1024;

/** Worst first: which kind wins when one object is changed in several ways. */
const severity: ChangeKind[] = [
  'other',
  'annotation',
  'form',
  'signature',
  'timestamp',
  'metadata',
  'dss',
  'dssItem',
];

const itemTypes: Record<string, DssItemType> = {
  Certs: 'certificate',
  Cert: 'certificate',
  OCSPs: 'ocsp',
  OCSP: 'ocsp',
  CRLs: 'crl',
  CRL: 'crl',
};

interface NewField {
  ok: boolean;
  name: string;
  timestamp: boolean;
  widgets: Set<number>;
  /** Why it is not an allowed further signature. */
  problem?: string;
}

interface Note {
  kind: ChangeKind;
  /** A key or a phrase, joined into the change's description. */
  detail: string;
  phrase: 'keys' | 'full';
}

const text = (value: PdfValue | undefined) =>
  value instanceof PdfString ? decodeTextString(value) : undefined;

const refKey = (value: PdfValue) => (value instanceof PdfRef ? value.key : undefined);

/**
 * Classifies every object one incremental update writes, by the role the object has in the
 * revision before the update (never by what the update says it is), and checks that each
 * allowed change is exactly what it claims: a further signature, a DSS update, form filling,
 * an annotation. Objects rewritten with the same value are no change.
 */
export function classifyUpdate(
  before: RevisionState,
  after: RevisionState,
  own: Map<number, XrefEntry>,
  xrefStreams: Set<number>,
): UpdateAnalysis {
  return new UpdateJudge(before, after, own, xrefStreams).run();
}

class UpdateJudge {
  private readonly structure: RevisionStructure;
  private readonly added = new Set<number>();
  private readonly notes = new Map<number | 'trailer', Note[]>();
  private readonly extra: RevisionChange[] = [];
  private readonly newReferences: { from: number; to: PdfRef }[] = [];
  private readonly newFields = new Map<string, NewField>();
  private readonly newWidgets = new Map<number, NewField>();
  /** Objects of the new DSS (dictionary, lists, VRI): the only ones that may refer to its entries. */
  private readonly dssStructure = new Set<number>();
  private readonly dssItems = new Map<number, DssItemType>();

  constructor(
    private readonly before: RevisionState,
    private readonly after: RevisionState,
    private readonly own: Map<number, XrefEntry>,
    private readonly xrefStreams: Set<number>,
  ) {
    this.structure = new RevisionStructure(before);
  }

  run(): UpdateAnalysis {
    const { before, after } = this;
    this.judgeTrailer();
    const modified: number[] = [];
    for (const [num, entry] of this.own) {
      if (num === 0) continue;
      const wasInUse = before.inUse(num);
      if (entry.kind === 'free') {
        if (wasInUse && !after.inUse(num)) this.note(num, 'other', `frees object ${num}`, 'full');
        continue;
      }
      if (!wasInUse) this.added.add(num);
      else modified.push(num);
    }
    this.collectNewFields();
    for (const num of modified) this.judgeModified(num);
    for (const num of this.added) {
      if (this.xrefStreams.has(num)) continue;
      for (const to of referencesIn(after.getNum(num))) this.newReferences.push({ from: num, to });
    }
    for (const { from, to } of this.newReferences) {
      if (this.dssItems.has(to.num) && !this.dssStructure.has(from)) {
        this.note(from, 'other', `makes object ${from} refer to the /DSS entry ${to.num}`, 'full');
      }
    }
    return {
      changes: [...this.changes(), ...this.extra],
      added: [...this.added],
      newReferences: this.newReferences,
    };
  }

  // --- bookkeeping ---

  private note(num: number | 'trailer', kind: ChangeKind, detail: string, phrase: Note['phrase']) {
    const notes = this.notes.get(num) ?? [];
    if (!notes.some((n) => n.kind === kind && n.detail === detail))
      notes.push({ kind, detail, phrase });
    this.notes.set(num, notes);
  }

  private describe(num: number): string {
    if (this.added.has(num)) return 'an object this update adds';
    const [role] = this.structure.rolesOf(num);
    return role ? describeRole(role) : 'an object of an earlier revision';
  }

  /** One change per object: its worst kind, described by that kind's notes. */
  private changes(): RevisionChange[] {
    const result: RevisionChange[] = [];
    for (const [num, notes] of this.notes) {
      const kind = severity.find((k) => notes.some((n) => n.kind === k))!;
      const worst = notes.filter((n) => n.kind === kind);
      const object =
        num === 'trailer'
          ? 'trailer'
          : refText(num, this.after.generation(num) ?? this.before.generation(num) ?? 0);
      const full = worst.filter((n) => n.phrase === 'full').map((n) => n.detail);
      const keys = worst.filter((n) => n.phrase === 'keys').map((n) => n.detail);
      const parts = [...full];
      if (keys.length > 0 && num !== 'trailer') {
        parts.push(`changes object ${num} (${this.describe(num)}: ${keys.join(', ')})`);
      }
      result.push({ object, kind, what: parts.join('; ') });
    }
    return result.sort((a, b) => parseInt(a.object, 10) - parseInt(b.object, 10));
  }

  private changedKeys(old: PdfDict, current: PdfDict): string[] {
    const keys = new Set([...old.entries.keys(), ...current.entries.keys()]);
    return [...keys].filter(
      (key) => !sameObject(old.get(key) ?? null, current.get(key) ?? null, this.before, this.after),
    );
  }

  private isNew(value: PdfValue | undefined): boolean {
    return value instanceof PdfRef && this.added.has(value.num);
  }

  private hasRole(value: PdfValue | undefined, kind: Role['kind']): boolean {
    return (
      value instanceof PdfRef &&
      this.structure.rolesOf(value.num).some((role) => role.kind === kind)
    );
  }

  /** The kind of the further signatures this update adds: document timestamps only, or not. */
  private signatureKind(): ChangeKind {
    const fields = [...this.newFields.values()].filter((f) => f.ok);
    return fields.length > 0 && fields.every((f) => f.timestamp) ? 'timestamp' : 'signature';
  }

  // --- the trailer ---

  private judgeTrailer(): void {
    const rootBefore = this.before.root();
    const rootAfter = this.after.root();
    if (rootBefore?.key !== rootAfter?.key) {
      this.note(
        'trailer',
        'other',
        `replaces the document catalog (object ${rootBefore?.num ?? '?'}) with object ${rootAfter?.num ?? '?'}`,
        'full',
      );
    }
    const infoBefore = this.before.trailer.get('Info');
    const infoAfter = this.after.trailer.get('Info');
    if (!sameObject(infoBefore ?? null, infoAfter ?? null, this.before, this.after)) {
      this.note('trailer', 'metadata', 'replaces the document information dictionary', 'full');
    }
  }

  // --- modified objects ---

  private judgeModified(num: number): void {
    const { before, after } = this;
    const old = before.getNum(num);
    const current = after.getNum(num);
    if (after.unreadable.has(num)) {
      this.note(num, 'other', `writes object ${num}, which cannot be read`, 'full');
      return;
    }
    if (sameObject(old, current, before, after)) return;
    const oldRefs = new Set(referencesIn(old).map((ref) => ref.key));
    for (const to of referencesIn(current)) {
      if (!oldRefs.has(to.key)) this.newReferences.push({ from: num, to });
    }
    const roles = this.structure.rolesOf(num);
    if (roles.length === 0) {
      this.note(num, 'other', `changes object ${num} (an object of an earlier revision)`, 'full');
      return;
    }
    for (const role of roles) this.judgeRole(num, role, old, current);
  }

  private judgeRole(
    num: number,
    role: Role,
    old: PdfObject | undefined,
    current: PdfObject | undefined,
  ) {
    const other = () =>
      this.note(num, 'other', `changes object ${num} (${describeRole(role)})`, 'full');
    const dicts = old instanceof PdfDict && current instanceof PdfDict;
    const arrays = Array.isArray(old) && Array.isArray(current);
    switch (role.kind) {
      case 'catalog':
        if (dicts) this.judgeCatalog(num, old, current);
        else other();
        return;
      case 'info':
      case 'metadata':
        this.note(num, 'metadata', `changes object ${num} (${describeRole(role)})`, 'full');
        return;
      case 'acroForm':
        if (dicts) this.judgeAcroForm(num, old, current);
        else other();
        return;
      case 'fieldsArray':
        if (arrays) this.judgeFieldList(num, old, current);
        else other();
        return;
      case 'dss':
        if (dicts) this.judgeDss(num, old, current);
        else other();
        return;
      case 'dssArray':
        if (arrays) this.judgeItems(num, role.key, old, current);
        else other();
        return;
      case 'vri':
        if (dicts) this.judgeVri(num, old, current);
        else other();
        return;
      case 'vriEntry':
        if (dicts) this.judgeVriEntry(num, old, current);
        else other();
        return;
      case 'page':
        if (dicts) this.judgePage(num, role.page, old, current);
        else other();
        return;
      case 'annotsArray':
        if (arrays) this.judgeAnnots(num, role.page, old, current);
        else other();
        return;
      case 'field':
        if (dicts) this.judgeField(num, role, old, current);
        else other();
        return;
      case 'annotation':
        this.note(num, 'annotation', `changes ${describeRole(role)}`, 'full');
        return;
      default:
        other();
    }
  }

  private judgeCatalog(num: number, old: PdfDict, current: PdfDict): void {
    for (const key of this.changedKeys(old, current)) {
      const value = current.get(key);
      switch (key) {
        case 'DSS':
          this.judgeNewDss(num, value, old.get('DSS'));
          break;
        case 'Extensions':
          this.note(num, 'dss', '/Extensions', 'keys');
          break;
        case 'Metadata':
          if (this.isNew(value) || value === undefined)
            this.note(num, 'metadata', `/${key}`, 'keys');
          else this.note(num, 'other', `/${key}`, 'keys');
          break;
        case 'AcroForm':
          this.judgeCatalogForm(num, old.get('AcroForm'), value);
          break;
        default:
          this.note(num, 'other', `/${key}`, 'keys');
      }
    }
  }

  private judgeCatalogForm(
    num: number,
    oldValue: PdfValue | undefined,
    value: PdfValue | undefined,
  ) {
    if (value instanceof PdfRef && !this.isNew(value) && !this.hasRole(value, 'acroForm')) {
      this.note(num, 'other', `/AcroForm (object ${value.num}, which existed before)`, 'keys');
      return;
    }
    const form = this.after.dict(value);
    if (!form) {
      this.note(num, 'other', '/AcroForm', 'keys');
      return;
    }
    const holder = value instanceof PdfRef ? value.num : num;
    const oldForm = this.before.dict(oldValue);
    if (oldForm) {
      // A form moved into a new object, or a direct form edited: judged key by key.
      if (value instanceof PdfRef) this.judgeAcroForm(holder, oldForm, form);
      else this.judgeAcroForm(num, oldForm, form);
      return;
    }
    // The first form: only what a further signature needs.
    for (const key of form.entries.keys()) {
      if (key === 'Fields') this.judgeFieldList(holder, [], this.after.array(form.get(key)) ?? []);
      else if (!['SigFlags', 'DA', 'DR'].includes(key))
        this.note(holder, 'other', `/${key}`, 'keys');
    }
    this.note(num, this.signatureKind(), '/AcroForm', 'keys');
  }

  private judgeAcroForm(num: number, old: PdfDict, current: PdfDict): void {
    for (const key of this.changedKeys(old, current)) {
      switch (key) {
        case 'Fields': {
          const value = current.get('Fields');
          if (
            value instanceof PdfRef &&
            !this.isNew(value) &&
            !this.hasRole(value, 'fieldsArray')
          ) {
            this.note(num, 'other', `/${key}`, 'keys');
            break;
          }
          this.judgeFieldList(
            num,
            this.before.array(old.get('Fields')) ?? [],
            this.after.array(value) ?? [],
          );
          break;
        }
        case 'SigFlags':
          this.note(num, this.signatureKind(), `/${key}`, 'keys');
          break;
        case 'DR':
        case 'DA':
        case 'NeedAppearances':
          this.note(num, 'form', `/${key}`, 'keys');
          break;
        default:
          this.note(num, 'other', `/${key}`, 'keys');
      }
    }
  }

  // --- form fields ---

  /** The top-level fields the update's form lists that the form before did not. */
  private collectNewFields(): void {
    const catalog = this.after.catalog();
    const form = catalog ? this.after.dict(catalog.get('AcroForm')) : undefined;
    const top = form ? (this.after.array(form.get('Fields')) ?? []) : [];
    const { added } = listDifference(this.structure.topFields, top);
    for (const item of added) this.newField(item);
  }

  private newField(item: PdfValue): NewField {
    const key = refKey(item) ?? `direct:${this.newFields.size}`;
    const known = this.newFields.get(key);
    if (known) return known;
    const field = this.validateNewField(item);
    this.newFields.set(key, field);
    for (const widget of field.widgets) this.newWidgets.set(widget, field);
    return field;
  }

  private validateNewField(item: PdfValue): NewField {
    const { after } = this;
    const result: NewField = { ok: false, name: '', timestamp: false, widgets: new Set() };
    const fail = (problem: string) => ({ ...result, problem });
    if (item instanceof PdfRef && !this.added.has(item.num)) {
      return fail(
        `lists object ${item.num}, which existed before (${this.describe(item.num)}), as a new form field`,
      );
    }
    const field = after.dict(item);
    if (!field) return fail('adds a form field that is not a dictionary');
    result.name = text(field.get('T')) ?? '';
    const kids = after.array(field.get('Kids'));
    if (kids) {
      for (const kid of kids) {
        if (kid instanceof PdfRef && this.added.has(kid.num)) result.widgets.add(kid.num);
        else return fail(`adds form field '${result.name}' whose widgets existed before`);
      }
    } else if (item instanceof PdfRef) {
      result.widgets.add(item.num);
    }
    if (!isName(field.get('FT'), 'Sig')) {
      const ft = field.get('FT');
      return fail(`adds form field '${result.name}'${isName(ft) ? ` (/${ft.name})` : ''}`);
    }
    const value = field.get('V');
    const signature = after.dict(value);
    if (value === undefined || value === null || after.resolve(value) === undefined) {
      return fail(
        `adds an unsigned signature field '${result.name}'${this.visibility(field, kids)}`,
      );
    }
    if (value instanceof PdfRef && !this.added.has(value.num)) {
      return fail(
        `adds signature field '${result.name}' whose signature is object ${value.num} of an earlier revision`,
      );
    }
    const problem = signatureProblem(signature, after);
    if (problem) return fail(`adds signature field '${result.name}' ${problem}`);
    result.timestamp = isName(signature!.get('Type'), 'DocTimeStamp');
    result.ok = true;
    return result;
  }

  /** " with a visible appearance on page 1" when a widget of the field shows something. */
  private visibility(field: PdfDict, kids: PdfValue[] | undefined): string {
    const widgets = kids ? kids.map((kid) => this.after.dict(kid)) : [field];
    for (const widget of widgets) {
      if (!widget) continue;
      const rect = this.after.array(widget.get('Rect'));
      const numbers = (rect ?? []).map((n) => (typeof n === 'number' ? n : 0));
      const area =
        numbers.length === 4
          ? Math.abs((numbers[2]! - numbers[0]!) * (numbers[3]! - numbers[1]!))
          : 0;
      const appearance = this.after.dict(widget.get('AP'));
      const flags = widget.get('F');
      const hidden = typeof flags === 'number' && (flags & 0b100010) !== 0;
      if (area > 0 && appearance?.get('N') !== undefined && !hidden) {
        const p = widget.get('P');
        const page = p instanceof PdfRef ? this.structure.pages.get(p.num) : undefined;
        return ` with a visible appearance${page ? ` on page ${page}` : ''}`;
      }
    }
    return '';
  }

  private judgeFieldList(num: number, old: PdfValue[], current: PdfValue[]): void {
    const { added, removed } = listDifference(old, current);
    for (const item of added) {
      const field = this.newField(item);
      if (field.ok) this.note(num, field.timestamp ? 'timestamp' : 'signature', '/Fields', 'keys');
      else if (item instanceof PdfRef && this.added.has(item.num))
        this.note(item.num, 'other', field.problem!, 'full');
      else this.note(num, 'other', field.problem!, 'full');
    }
    for (const item of removed) {
      const name = item instanceof PdfRef ? this.structure.fields.get(item.num)?.name : undefined;
      this.note(
        num,
        'other',
        `removes form field${name ? ` '${name}'` : ''} from the form`,
        'full',
      );
    }
  }

  private judgeField(
    num: number,
    role: Extract<Role, { kind: 'field' }>,
    old: PdfDict,
    current: PdfDict,
  ): void {
    const { field } = role;
    const keys = this.changedKeys(old, current);
    const only = (allowed: string[]) => keys.every((key) => allowed.includes(key));
    const label = `${field.type === 'Sig' ? 'signature field' : 'form field'} '${field.name}'`;
    if (role.node) {
      this.note(num, 'other', keys.map((k) => `/${k}`).join(', '), 'keys');
      return;
    }
    if (field.type === 'Sig') {
      if (field.hasValue) {
        this.note(
          num,
          'other',
          `changes object ${num} (${label}, signed before: ${keys.map((k) => `/${k}`).join(', ')})`,
          'full',
        );
        return;
      }
      const signed = this.filledSignature(field);
      const allowed = role.widget ? ['AP', 'AS', 'F', ...(num === field.num ? ['V'] : [])] : ['V'];
      if (signed && only(allowed)) {
        this.note(num, signed, `signs the empty ${label}`, 'full');
      } else {
        this.note(
          num,
          'other',
          `changes object ${num} (${label}: ${keys.map((k) => `/${k}`).join(', ')})`,
          'full',
        );
      }
      return;
    }
    const allowed = role.widget ? ['AP', 'AS', ...(num === field.num ? ['V'] : [])] : ['V'];
    if (only(allowed)) this.note(num, 'form', `changes the value of ${label}`, 'full');
    else
      this.note(
        num,
        'other',
        `changes object ${num} (${label}: ${keys.map((k) => `/${k}`).join(', ')})`,
        'full',
      );
  }

  /** An empty signature field of the revision before, signed by this update: its kind. */
  private filledSignature(field: FieldInfo): ChangeKind | undefined {
    if (field.num === undefined) return undefined;
    const current = this.after.dict(this.after.getNum(field.num) as PdfValue | undefined);
    const value = current?.get('V');
    if (value instanceof PdfRef && !this.added.has(value.num)) return undefined;
    const signature = this.after.dict(value);
    if (signatureProblem(signature, this.after)) return undefined;
    return isName(signature!.get('Type'), 'DocTimeStamp') ? 'timestamp' : 'signature';
  }

  // --- pages and annotations ---

  private judgePage(num: number, page: number, old: PdfDict, current: PdfDict): void {
    for (const key of this.changedKeys(old, current)) {
      if (key !== 'Annots') {
        this.note(num, 'other', `/${key}`, 'keys');
        continue;
      }
      const value = current.get('Annots');
      if (value instanceof PdfRef && !this.isNew(value) && !this.hasRole(value, 'annotsArray')) {
        this.note(num, 'other', `/${key}`, 'keys');
        continue;
      }
      this.judgeAnnots(
        num,
        page,
        this.before.array(old.get('Annots')) ?? [],
        this.after.array(value) ?? [],
      );
    }
  }

  private judgeAnnots(num: number, page: number, old: PdfValue[], current: PdfValue[]): void {
    const { added, removed } = listDifference(old, current);
    for (const item of added) {
      if (!(item instanceof PdfRef) || !this.added.has(item.num)) {
        const which =
          item instanceof PdfRef ? `object ${item.num}, which existed before,` : 'a direct value';
        this.note(num, 'other', `adds ${which} to the annotations of page ${page}`, 'full');
        continue;
      }
      const annotation = this.after.dict(item);
      if (!isName(annotation?.get('Subtype'), 'Widget')) {
        const subtype = annotation?.get('Subtype');
        this.note(
          item.num,
          'annotation',
          `adds an annotation${isName(subtype) ? ` (/${subtype.name})` : ''} on page ${page}`,
          'full',
        );
        continue;
      }
      const field = this.newWidgets.get(item.num);
      if (field?.ok) {
        this.note(num, field.timestamp ? 'timestamp' : 'signature', '/Annots', 'keys');
      } else if (field) {
        // The field itself is reported; the page only shows it.
        this.note(num, 'other', `/Annots (the widget of field '${field.name}')`, 'keys');
      } else {
        this.note(item.num, 'other', this.strayWidget(item, annotation!, page), 'full');
      }
    }
    for (const item of removed) {
      const isAnnotation = this.hasRole(item, 'annotation');
      this.note(
        num,
        isAnnotation ? 'annotation' : 'other',
        `removes ${isAnnotation ? 'an annotation' : 'a widget'} from page ${page}`,
        'full',
      );
    }
  }

  /** A new widget whose field is not a new field of the form. */
  private strayWidget(ref: PdfRef, widget: PdfDict, page: number): string {
    const parent = this.after.dict(widget.get('Parent'));
    const field = widget.get('FT') !== undefined || !parent ? widget : parent;
    const name = text(field.get('T')) ?? text(widget.get('T')) ?? '';
    if (isName(field.get('FT'), 'Sig')) {
      const signed = !signatureProblem(this.after.dict(field.get('V')), this.after);
      return `adds ${signed ? 'a' : 'an unsigned'} signature field '${name}' outside the form${this.visibility(widget, undefined) || ` on page ${page}`}`;
    }
    return `adds the widget ${ref.num} of a form field '${name}' outside the form on page ${page}`;
  }

  // --- the DSS ---

  private judgeNewDss(holder: number, value: PdfValue | undefined, oldValue: PdfValue | undefined) {
    if (value === undefined || value === null) {
      this.note(holder, 'dss', '/DSS', 'keys');
      return;
    }
    if (value instanceof PdfRef && !this.isNew(value) && !this.hasRole(value, 'dss')) {
      this.note(
        holder,
        'other',
        `makes object ${value.num}, which existed before (${this.describe(value.num)}), the /DSS`,
        'full',
      );
      return;
    }
    const dss = this.after.dict(value);
    if (!dss) {
      this.note(holder, 'other', '/DSS', 'keys');
      return;
    }
    const dssNum = value instanceof PdfRef ? value.num : holder;
    this.dssStructure.add(dssNum);
    this.judgeDss(dssNum, this.before.dict(oldValue) ?? new PdfDict(), dss);
    this.note(holder, 'dss', '/DSS', 'keys');
  }

  private judgeDss(num: number, old: PdfDict, current: PdfDict): void {
    this.dssStructure.add(num);
    for (const key of this.changedKeys(old, current)) {
      if (key === 'Type') this.note(num, 'dss', `/${key}`, 'keys');
      else if (key === 'VRI') this.judgeNewVri(num, current.get(key), old.get(key));
      else if (itemTypes[key] && ['Certs', 'OCSPs', 'CRLs'].includes(key))
        this.judgeList(num, key, old.get(key), current.get(key));
      else this.note(num, 'other', `/${key}`, 'keys');
    }
  }

  /** A list of DSS entries as a key of the DSS or a VRI entry holds it (direct or not). */
  private judgeList(
    holder: number,
    key: string,
    oldValue: PdfValue | undefined,
    value: PdfValue | undefined,
  ) {
    if (value === undefined || value === null) return;
    if (value instanceof PdfRef && !this.isNew(value)) {
      if (!this.hasRole(value, 'dssArray')) {
        this.note(holder, 'other', `/${key} (object ${value.num}, which existed before)`, 'keys');
      }
      // An existing list is judged where it changed itself.
      return;
    }
    const items = this.after.array(value);
    if (!items) {
      this.note(holder, 'other', `/${key}`, 'keys');
      return;
    }
    if (value instanceof PdfRef) this.dssStructure.add(value.num);
    this.judgeItems(
      value instanceof PdfRef ? value.num : holder,
      key,
      this.before.array(oldValue) ?? [],
      items,
    );
  }

  private judgeItems(num: number, key: string, old: PdfValue[], current: PdfValue[]): void {
    this.dssStructure.add(num);
    const type = itemTypes[key];
    if (!type) {
      this.note(num, 'other', `/${key}`, 'keys');
      return;
    }
    const { added } = listDifference(old, current);
    for (const item of added) this.judgeItem(num, item, type);
    this.note(num, 'dss', `/${key}`, 'keys');
  }

  private judgeItem(holder: number, item: PdfValue, type: DssItemType): void {
    if (!(item instanceof PdfRef)) {
      this.note(holder, 'other', 'a direct value in the /DSS', 'keys');
      return;
    }
    if (this.hasRole(item, 'dssItem') && !this.added.has(item.num)) return;
    if (!this.added.has(item.num)) {
      this.note(
        item.num,
        'other',
        `adds to /DSS object ${item.num}, which existed before (${this.describe(item.num)})`,
        'full',
      );
      return;
    }
    if (this.dssItems.get(item.num) === type) return;
    this.dssItems.set(item.num, type);
    const stream = this.after.get(item);
    const object = refText(item.num, item.gen);
    if (!(stream instanceof PdfStream)) {
      this.extra.push({
        object,
        kind: 'dssItem',
        what: `adds to /DSS object ${item.num}`,
        dssItem: { type, problem: 'is not a stream' },
      });
      return;
    }
    let data: Buffer | undefined;
    let problem: string | undefined;
    if (stream.dataLength > maxDssItem) problem = 'is too large';
    else {
      try {
        data = this.after.reader.streamData(stream);
        if (data.length > maxDssItem) problem = 'is too large';
      } catch {
        problem = 'cannot be decoded';
      }
    }
    this.extra.push({
      object,
      kind: 'dssItem',
      what: `adds to /DSS object ${item.num}`,
      dssItem: problem ? { type, problem } : { type, data: data! },
    });
  }

  private judgeNewVri(
    holder: number,
    value: PdfValue | undefined,
    oldValue: PdfValue | undefined,
  ): void {
    if (value === undefined || value === null) return;
    if (value instanceof PdfRef && !this.isNew(value)) {
      if (!this.hasRole(value, 'vri')) {
        this.note(holder, 'other', `/VRI (object ${value.num}, which existed before)`, 'keys');
      }
      return;
    }
    const vri = this.after.dict(value);
    if (!vri) {
      this.note(holder, 'other', '/VRI', 'keys');
      return;
    }
    const num = value instanceof PdfRef ? value.num : holder;
    this.judgeVri(num, this.before.dict(oldValue) ?? new PdfDict(), vri);
  }

  private judgeVri(num: number, old: PdfDict, current: PdfDict): void {
    this.dssStructure.add(num);
    for (const key of this.changedKeys(old, current)) {
      const value = current.get(key);
      if (key === 'Type' || value === undefined || value === null) continue;
      if (value instanceof PdfRef && !this.isNew(value)) {
        if (!this.hasRole(value, 'vriEntry')) {
          this.note(
            value.num,
            'other',
            `adds to /DSS object ${value.num}, which existed before (${this.describe(value.num)})`,
            'full',
          );
        }
        continue;
      }
      const entry = this.after.dict(value);
      if (!entry) {
        this.note(num, 'other', `a /VRI entry that is not a dictionary`, 'keys');
        continue;
      }
      const entryNum = value instanceof PdfRef ? value.num : num;
      this.judgeVriEntry(entryNum, this.before.dict(old.get(key)) ?? new PdfDict(), entry);
    }
    this.note(num, 'dss', '/VRI', 'keys');
  }

  private judgeVriEntry(num: number, old: PdfDict, current: PdfDict): void {
    this.dssStructure.add(num);
    for (const key of this.changedKeys(old, current)) {
      const value = current.get(key);
      if (key === 'Type' || key === 'TU') continue;
      if (key === 'TS') {
        if (value !== undefined && value !== null) this.judgeItem(num, value, 'timestamp');
      } else if (itemTypes[key] && ['Cert', 'OCSP', 'CRL'].includes(key)) {
        this.judgeList(num, key, old.get(key), value);
      } else {
        this.note(num, 'other', `/${key} in a /VRI entry`, 'keys');
      }
    }
    this.note(num, 'dss', '/VRI', 'keys');
  }
}

/** Why a value is not a signature dictionary a verifier can read, or undefined when it is. */
function signatureProblem(
  signature: PdfDict | undefined,
  state: RevisionState,
): string | undefined {
  if (!signature) return 'whose signature is not a dictionary';
  const range = state.resolve(signature.get('ByteRange'));
  const contents = state.resolve(signature.get('Contents'));
  const rangeOk =
    Array.isArray(range) &&
    range.length === 4 &&
    range.every((n) => typeof n === 'number' && Number.isInteger(n) && n >= 0);
  if (!rangeOk || !(contents instanceof PdfString)) {
    return 'whose signature has no usable /ByteRange or /Contents';
  }
  return undefined;
}

/** What a list gained and lost (as multisets of references; direct values by position). */
function listDifference(
  old: PdfValue[],
  current: PdfValue[],
): { added: PdfValue[]; removed: PdfValue[] } {
  const remaining = new Map<string, PdfValue[]>();
  const keyOf = (item: PdfValue) => refKey(item) ?? `direct:${serialize(item)}`;
  for (const item of old) remaining.set(keyOf(item), [...(remaining.get(keyOf(item)) ?? []), item]);
  const added: PdfValue[] = [];
  for (const item of current) {
    const left = remaining.get(keyOf(item));
    if (left && left.length > 0) left.pop();
    else added.push(item);
  }
  const removed = [...remaining.values()].flat();
  return { added, removed };
}
