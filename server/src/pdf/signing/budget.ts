import { pdfErrors } from './errors';

/**
 * What one read of a PDF may cost (docs/api-behaviour.md, "PDF limits"). Each bound is far
 * above what a real 50 MB PDF needs (Word, LibreOffice, qpdf object-stream and linearized
 * output, a scanner's file) and far below what makes a read take seconds or hundreds of MB.
 */
export interface PdfLimits {
  /** Cross-reference entries of all sections together (ISO 32000 caps object numbers lower). */
  xrefEntries: number;
  /** Cross-reference sections in the `/Prev` chain: one per revision, two for a linearized file. */
  xrefSections: number;
  /** Indirect objects parsed (those inside object streams included). */
  objects: number;
  /** Arrays and dictionaries inside one another. */
  nesting: number;
  /** Decoded bytes of one cross-reference or object stream. */
  structuralStreamBytes: number;
  /** Decoded bytes of any other stream read (DSS certificates, OCSP answers, CRLs, ...). */
  streamBytes: number;
  /** Decoded bytes of every stream of the read together. */
  inflatedBytes: number;
  /** Object streams decoded (one decoded again after leaving the cache counts again). */
  objectStreams: number;
  /** Wall time of the read on its thread, in milliseconds. */
  timeMs: number;
}

const mib = 1024 * 1024;

export const defaultPdfLimits: Readonly<PdfLimits> = Object.freeze({
  xrefEntries: 1_000_000,
  xrefSections: 10_000,
  objects: 2_000_000,
  nesting: 100,
  structuralStreamBytes: 16 * mib,
  streamBytes: 64 * mib,
  inflatedBytes: 256 * mib,
  objectStreams: 50_000,
  timeMs: 10_000,
});

/** ISO 32000-1 Annex C: at most 8,388,607 indirect objects; no object number reaches this. */
export const maxObjectNumber = 8_388_607;

/** How often (in parser steps) the clock is read: often enough to stop within milliseconds. */
const stepsPerClockRead = 1024;

/**
 * The running account of one read against its limits. Every counter throws 422
 * PDF_TOO_COMPLEX, naming the limit, the moment it is passed.
 */
export class PdfBudget {
  private readonly deadline: number;
  private steps = 0;
  private xrefEntries = 0;
  private xrefSections = 0;
  private objects = 0;
  private inflated = 0;
  private objectStreams = 0;

  constructor(readonly limits: Readonly<PdfLimits> = defaultPdfLimits) {
    this.deadline = performance.now() + limits.timeMs;
  }

  /** One unit of parsing work (a token, an xref row): checks the clock now and then. */
  step(): void {
    this.steps += 1;
    if (this.steps % stepsPerClockRead === 0) this.checkTime();
  }

  private checkTime(): void {
    if (performance.now() > this.deadline) {
      throw pdfErrors.tooComplex(`reading it takes longer than ${this.limits.timeMs / 1000} s`);
    }
  }

  xrefSection(): void {
    if (++this.xrefSections > this.limits.xrefSections) {
      throw pdfErrors.tooComplex(
        `more than ${this.limits.xrefSections} cross-reference sections (revisions)`,
      );
    }
  }

  xrefEntriesRead(count: number): void {
    this.xrefEntries += count;
    if (this.xrefEntries > this.limits.xrefEntries) {
      throw pdfErrors.tooComplex(`more than ${this.limits.xrefEntries} cross-reference entries`);
    }
  }

  object(): void {
    if (++this.objects > this.limits.objects) {
      throw pdfErrors.tooComplex(`more than ${this.limits.objects} objects to read`);
    }
    this.step();
  }

  objectStream(): void {
    if (++this.objectStreams > this.limits.objectStreams) {
      throw pdfErrors.tooComplex(`more than ${this.limits.objectStreams} object streams to decode`);
    }
  }

  /** How many bytes the next decoding step may produce: the stream's and the read's room. */
  inflateRoom(structural: boolean): number {
    const perStream = structural ? this.limits.structuralStreamBytes : this.limits.streamBytes;
    return Math.max(0, Math.min(perStream, this.limits.inflatedBytes - this.inflated));
  }

  /** Counts bytes a stream decoded to (within the room `inflateRoom` gave). */
  inflatedBytes(count: number): void {
    this.inflated += count;
  }

  /** The error for a stream that decodes to more than `inflateRoom` allowed. */
  inflateExceeded(structural: boolean): Error {
    const perStream = structural ? this.limits.structuralStreamBytes : this.limits.streamBytes;
    if (this.limits.inflatedBytes - this.inflated < perStream) {
      return pdfErrors.tooComplex(
        `its streams decode to more than ${this.limits.inflatedBytes / mib} MiB in all`,
      );
    }
    return pdfErrors.tooComplex(
      `a ${structural ? 'cross-reference or object stream' : 'stream'} decodes to more than ${perStream / mib} MiB`,
    );
  }
}

let current: Readonly<PdfLimits> = defaultPdfLimits;

/** The limits of the reads on this thread (the defaults unless a worker task set others). */
export function currentPdfLimits(): Readonly<PdfLimits> {
  return current;
}

/** Runs `work` with `limits` in force for the reads it makes on this thread. */
export function withPdfLimits<T>(limits: Partial<PdfLimits> | undefined, work: () => T): T {
  if (!limits) return work();
  const before = current;
  current = { ...defaultPdfLimits, ...limits };
  try {
    return work();
  } finally {
    current = before;
  }
}
