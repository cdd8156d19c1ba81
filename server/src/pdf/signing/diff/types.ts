/**
 * What a later incremental update did, as plain data (structured-clonable: no class instances),
 * so that the analysis can run where the file is read (a worker) and be judged elsewhere.
 */

/**
 * What a change is, for the DocMDP whitelist:
 * - `dss`: the /DSS dictionary, its lists and VRI, `/Extensions` (validation material);
 * - `dssItem`: a new /DSS entry, allowed only when its bytes parse as what its list says;
 * - `timestamp`: a document timestamp's field, widget and form entries;
 * - `signature`: a further signature's field, widget, form and page entries;
 * - `metadata`: the information dictionary or the XMP metadata (nothing a page shows);
 * - `form`: the value and appearance of an existing form field;
 * - `annotation`: an annotation added, changed or removed;
 * - `other`: anything else, allowed by no permission.
 */
export type ChangeKind =
  | 'dss'
  | 'dssItem'
  | 'timestamp'
  | 'signature'
  | 'metadata'
  | 'form'
  | 'annotation'
  | 'other';

export type DssItemType = 'certificate' | 'ocsp' | 'crl' | 'timestamp';

export interface DssItem {
  type: DssItemType;
  /** The decoded bytes, when they could be read. */
  data?: Uint8Array;
  /** Why they could not be. */
  problem?: string;
}

export interface RevisionChange {
  /** The object changed, as `7 0 R` (`trailer` for the trailer itself). */
  object: string;
  kind: ChangeKind;
  /** What was done, a phrase after "Revision 3": "changes object 7 (the content stream of page 1)". */
  what: string;
  /** For `dssItem`: the entry to check. */
  dssItem?: DssItem;
}

/** A change found only against a given signed revision (hidden objects, dangling references). */
export interface SignedRevisionFinding {
  revision: number;
  object: string;
  what: string;
}
