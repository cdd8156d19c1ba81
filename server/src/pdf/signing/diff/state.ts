import { EngineError } from '../../engineError';
import type { PdfReader } from '../document';
import {
  PdfDict,
  PdfNewStream,
  type PdfObject,
  PdfRef,
  PdfStream,
  type PdfValue,
} from '../objects';
import type { XrefEntry } from '../xref';

const maxCached = 20_000;

/**
 * The document as one revision has it: that revision's cumulative cross-reference map and
 * trailer. Objects are read with this revision's offsets only (an object stream or a `/Length`
 * redefined later does not change what an older revision says). An object that does not parse
 * reads as absent and is remembered as unreadable.
 */
export class RevisionState {
  private readonly cache = new Map<number, PdfObject | undefined>();
  readonly unreadable = new Set<number>();

  constructor(
    readonly reader: PdfReader,
    readonly index: number,
    readonly xref: Map<number, XrefEntry>,
    readonly trailer: PdfDict,
  ) {}

  /** Whether the number is an object of this revision (not free, not unknown). */
  inUse(num: number): boolean {
    const entry = this.xref.get(num);
    return entry !== undefined && entry.kind !== 'free';
  }

  /** The generation an in-use object has (compressed objects have 0). */
  generation(num: number): number | undefined {
    const entry = this.xref.get(num);
    if (entry === undefined || entry.kind === 'free') return undefined;
    return entry.kind === 'offset' ? entry.gen : 0;
  }

  /** The object `ref` names in this revision; undefined when free, missing or unreadable. */
  get(ref: PdfRef, cache = true): PdfObject | undefined {
    if (this.generation(ref.num) !== ref.gen) return undefined;
    if (this.cache.has(ref.num)) return this.cache.get(ref.num);
    let object: PdfObject | undefined;
    try {
      object = this.reader.getObject(ref, this.xref);
    } catch (error) {
      if (!(error instanceof EngineError)) throw error;
      this.unreadable.add(ref.num);
      object = undefined;
    }
    if (cache && this.cache.size < maxCached) this.cache.set(ref.num, object);
    return object;
  }

  /** The object in use under `num`, whatever generation it has. */
  getNum(num: number): PdfObject | undefined {
    const gen = this.generation(num);
    return gen === undefined ? undefined : this.get(new PdfRef(num, gen));
  }

  resolve(value: PdfValue | undefined): PdfObject | undefined {
    return value instanceof PdfRef ? this.get(value) : value;
  }

  /** Like `resolve`, where a stream is not acceptable. */
  value(value: PdfValue | undefined): PdfValue | undefined {
    const object = this.resolve(value);
    return object instanceof PdfStream || object instanceof PdfNewStream ? undefined : object;
  }

  dict(value: PdfValue | undefined): PdfDict | undefined {
    const object = this.resolve(value);
    return object instanceof PdfDict ? object : undefined;
  }

  array(value: PdfValue | undefined): PdfValue[] | undefined {
    const object = this.resolve(value);
    return Array.isArray(object) ? object : undefined;
  }

  /** The dictionary of a dictionary or of a stream. */
  dictOf(object: PdfObject | undefined): PdfDict | undefined {
    if (object instanceof PdfDict) return object;
    if (object instanceof PdfStream) return object.dict;
    return undefined;
  }

  root(): PdfRef | undefined {
    const root = this.trailer.get('Root');
    return root instanceof PdfRef ? root : undefined;
  }

  catalog(): PdfDict | undefined {
    return this.dict(this.trailer.get('Root'));
  }

  /** The trailer's `/Size`: numbers at or above it were never assigned by this revision. */
  size(): number {
    const size = this.trailer.get('Size');
    return typeof size === 'number' ? size : 0;
  }
}

export const refText = (num: number, gen: number) => `${num} ${gen} R`;
