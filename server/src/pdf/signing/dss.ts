import crypto from 'node:crypto';
import zlib from 'node:zlib';
import { PdfReader } from './document';
import { IncrementalUpdate } from './incrementalUpdate';
import { dict, name, PdfDict, PdfNewStream, PdfRef, PdfStream, type PdfValue } from './objects';

/** Validation material for long-term validation (PAdES B-LT), each item DER. */
export interface DssMaterial {
  certificates: Buffer[];
  ocspResponses: Buffer[];
  crls: Buffer[];
}

const sha256 = (item: Buffer) => crypto.createHash('sha256').update(item).digest('hex');

/**
 * The DSS of the file's newest revision (empty lists when it has none); with `upTo`, of the
 * revision that ends at that offset (what a signature or document timestamp ending there covers).
 */
export function readDss(filePath: string, options: { upTo?: number } = {}): DssMaterial {
  return PdfReader.read(filePath, dssOf, options);
}

/** The DSS of the reader's newest revision (empty lists when it has none). */
export function dssOf(reader: PdfReader): DssMaterial {
  const dss = reader.resolveDict(reader.catalog().get('DSS'));
  const streams = (key: string): Buffer[] => {
    const items = dss ? reader.resolveValue(dss.get(key)) : undefined;
    if (!Array.isArray(items)) return [];
    return items.flatMap((item) => {
      const stream = reader.resolve(item);
      return stream instanceof PdfStream ? [reader.streamData(stream)] : [];
    });
  };
  return { certificates: streams('Certs'), ocspResponses: streams('OCSPs'), crls: streams('CRLs') };
}

/** Items not already in the DSS (nor repeated in the input), by SHA-256 of their bytes. */
const unique = (items: Buffer[], existing: Buffer[]) => {
  const seen = new Set<string>(existing.map(sha256));
  return items.filter((item) => {
    const key = sha256(item);
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  });
};

/**
 * The incremental update that adds `material` to the DSS of the file's newest revision
 * (`/Certs`, `/OCSPs`, `/CRLs`: arrays of streams, an existing DSS's entries kept), or undefined
 * when it holds all of it already (what a PDF worker thread runs for `appendDss`).
 */
export function dssUpdateOf(filePath: string, material: DssMaterial): Buffer | undefined {
  return PdfReader.read(filePath, (reader) => dssUpdate(reader, material));
}

/** The update adding `material` to the DSS, or undefined when it holds all of it already. */
function dssUpdate(reader: PdfReader, material: DssMaterial): Buffer | undefined {
  const incremental = new IncrementalUpdate(reader);
  const catalog = reader.catalog();
  if (addToDss(reader, incremental, catalog, material) === 0) return undefined;
  return incremental.serialize(reader.size, reader.source.byteAt(reader.size - 1));
}

/**
 * Adds to `incremental` the items of `material` the DSS does not hold yet (creating the DSS when
 * there is none) and returns how many. `catalog` is the caller's copy of the catalog: when it
 * changes it is put under the catalog's number, so a caller that also edits the catalog in the
 * same update passes the same copy and puts it again after its own edits.
 */
export function addToDss(
  reader: PdfReader,
  incremental: IncrementalUpdate,
  catalog: PdfDict,
  material: DssMaterial,
): number {
  const existingValue = catalog.get('DSS');
  const existing = reader.resolveDict(existingValue);
  const dss = existing ?? dict({ Type: name('DSS') });
  const present = dssOf(reader);
  let added = 0;
  const add = (key: string, items: Buffer[], existingItems: Buffer[]) => {
    const fresh = unique(items, existingItems);
    if (fresh.length === 0) return;
    added += fresh.length;
    const refs: PdfValue[] = fresh.map((item) => {
      const ref = incremental.allocate();
      incremental.put(
        ref,
        new PdfNewStream(dict({ Filter: name('FlateDecode') }), zlib.deflateSync(item)),
      );
      return ref;
    });
    const current = reader.resolveValue(dss.get(key));
    dss.set(key, [...(Array.isArray(current) ? current : []), ...refs]);
  };
  add('Certs', material.certificates, present.certificates);
  add('OCSPs', material.ocspResponses, present.ocspResponses);
  add('CRLs', material.crls, present.crls);
  if (added === 0) return 0;
  if (existingValue instanceof PdfRef && existing instanceof PdfDict) {
    // The DSS object keeps its number; the catalog need not change.
    incremental.put(existingValue, dss);
  } else {
    const dssRef = incremental.allocate();
    incremental.put(dssRef, dss);
    catalog.set('DSS', dssRef);
    incremental.put(reader.catalogRef(), catalog);
  }
  return added;
}
