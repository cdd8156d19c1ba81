import crypto from 'node:crypto';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { z } from 'zod';
import { engineValidationError } from '../engineError';
import {
  type AppearanceText,
  alphaXObject,
  appearanceStream,
  appearanceText,
  emptyAppearance,
  jpegXObject,
  pngXObject,
  type SignatureImage,
  type SignatureRect,
} from './appearance';
import { PdfReader } from './document';
import { addToDss, type DssMaterial } from './dss';
import { type FontSubset, putFontSubset } from './embeddedFont';
import { pdfErrors } from './errors';
import { acroFormFields, docMdpPermission } from './fields';
import { streamChunks } from './fileChunks';
import { IncrementalUpdate } from './incrementalUpdate';
import {
  dict,
  name,
  type PdfDict,
  PdfRaw,
  PdfRef,
  type PdfValue,
  pdfDate,
  textString,
} from './objects';
import { pageRef } from './pages';

export interface PrepareSignatureOptions {
  /** The signing time written as `/M` (not written for a document timestamp). */
  signingTime: Date;
  /**
   * A document timestamp (PAdES B-LTA) instead of a signature: `/Type /DocTimeStamp`,
   * `/SubFilter /ETSI.RFC3161`, its `/Contents` an RFC 3161 TimeStampToken over the byte range's
   * digest; no `/M`, `/Name`, `/Reason`, `/Location`; never visible.
   */
  documentTimestamp?: boolean;
  /** The field's name; default `Signature<n>` (`DocumentTimestamp<n>`), the first free one. */
  fieldName?: string;
  /** `/Name`, `/Reason`, `/Location` of the signature dictionary (Vietnamese welcome). */
  signerName?: string;
  reason?: string;
  location?: string;
  /** Bytes reserved for the CMS (chain + timestamp + revocation data); default 32 KiB. */
  contentsSize?: number;
  /** 1-based page of the widget; default 1. */
  page?: number;
  /** A visible signature: its box and what it shows; absent, the widget is invisible. */
  appearance?: { rect: SignatureRect; lines?: string[]; image?: SignatureImage };
  /** Where the prepared temp file goes; default the OS temp directory. */
  tempDir?: string;
  /**
   * Validation material (B-LT) written into the DSS of the same revision, so the new signature
   * covers it: revocation answers for the signatures already in the file, and for the signer's
   * own chain when it is known before signing.
   */
  dss?: DssMaterial;
}

export type ByteRange = [number, number, number, number];

export interface PreparedSignature {
  /** The new temp file: the source's bytes unchanged, then one incremental update. */
  path: string;
  fieldName: string;
  byteRange: ByteRange;
  /** Offset of the first hex digit of `/Contents` (just after `<`). */
  contentsOffset: number;
  /** Number of hex digits between `<` and `>` (twice the bytes reserved). */
  contentsHexLength: number;
  /** SHA-256 over the two byte ranges: what the CMS message-digest must be. */
  documentDigest: Buffer;
  /** SHA-256 (hex) and size of the whole prepared file, as written: its FileStore name. */
  sha256: string;
  size: number;
}

export const defaultContentsSize = 32 * 1024;
const maxContentsSize = 1024 * 1024;

/** The options' own rules (the caller's types say the rest). */
const optionsSchema = z.object({
  signingTime: z.date().refine((date) => !Number.isNaN(date.getTime()), 'not a valid date'),
  documentTimestamp: z.boolean().optional(),
  // A partial field name has no period: periods join a field's name to its parents'.
  fieldName: z
    .string()
    .min(1)
    .max(128)
    .regex(/^[^.]+$/, 'must not contain "."')
    .optional(),
  signerName: z.string().max(512).optional(),
  reason: z.string().max(1024).optional(),
  location: z.string().max(512).optional(),
  contentsSize: z.number().int().min(1).max(maxContentsSize).optional(),
  page: z.number().int().min(1).optional(),
  appearance: z
    .object({
      rect: z
        .tuple([z.number(), z.number(), z.number(), z.number()])
        .refine(
          ([x1, y1, x2, y2]) => [x1, y1, x2, y2].every(Number.isFinite) && x2 > x1 && y2 > y1,
          'x2 > x1 and y2 > y1',
        ),
      lines: z.array(z.string().max(256)).max(8).optional(),
      image: z
        .discriminatedUnion('format', [
          z.object({
            format: z.literal('jpeg'),
            jpeg: z.instanceof(Buffer).refine((b) => b[0] === 0xff && b[1] === 0xd8, 'not a JPEG'),
            width: z.number().int().min(1),
            height: z.number().int().min(1),
            colorSpace: z.enum(['DeviceRGB', 'DeviceGray', 'DeviceCMYK']),
          }),
          z.object({
            format: z.literal('png'),
            color: z.instanceof(Buffer),
            alpha: z.instanceof(Buffer).optional(),
            width: z.number().int().min(1),
            height: z.number().int().min(1),
            colorSpace: z.enum(['DeviceRGB', 'DeviceGray']),
          }),
        ])
        .optional(),
    })
    .optional(),
  tempDir: z.string().optional(),
  dss: z
    .object({
      certificates: z.array(z.instanceof(Buffer)),
      ocspResponses: z.array(z.instanceof(Buffer)),
      crls: z.array(z.instanceof(Buffer)),
    })
    .optional(),
});
/** Room for `0 a b c` with offsets up to 10 digits (files under 10 GB). */
const byteRangeWidth = 34;
const byteRangeMarker = `/ByteRange [${'X'.repeat(byteRangeWidth)}]`;

/**
 * DocMDP /P 1 in a certification signature forbids any change, signatures included: look at
 * the catalog's `/Perms /DocMDP` and at every signature's `/Reference` transform.
 */
function assertChangesAllowed(reader: PdfReader): void {
  const signatures: PdfDict[] = [];
  const perms = reader.resolveDict(reader.catalog().get('Perms'));
  const certification = perms ? reader.resolveDict(perms.get('DocMDP')) : undefined;
  if (certification) signatures.push(certification);
  for (const field of acroFormFields(reader)) {
    if (field.fieldType !== 'Sig') continue;
    const value = reader.resolveDict(field.dict.get('V'));
    if (value) signatures.push(value);
  }
  for (const signature of signatures) {
    if (docMdpPermission(reader, signature) === 1) throw pdfErrors.changesNotAllowed();
  }
}

function chooseFieldName(reader: PdfReader, wanted: string | undefined, prefix: string): string {
  // A new top-level field must not reuse any field's name, terminal or parent.
  const taken = new Set(
    acroFormFields(reader).flatMap((field) =>
      field.fullName.split('.').map((_, i, parts) => parts.slice(0, i + 1).join('.')),
    ),
  );
  if (wanted !== undefined) {
    if (taken.has(wanted)) throw pdfErrors.fieldExists(wanted);
    return wanted;
  }
  for (let n = 1; ; n++) if (!taken.has(`${prefix}${n}`)) return `${prefix}${n}`;
}

/** Appends `item` to the array held at `holder[key]`, rewriting whichever object holds it. */
function appendToArray(
  reader: PdfReader,
  update: IncrementalUpdate,
  holder: PdfDict,
  holderRef: PdfRef | undefined,
  key: string,
  item: PdfValue,
): void {
  const current = holder.get(key);
  if (current instanceof PdfRef) {
    const array = reader.resolveValue(current);
    // An array held indirectly is rewritten alone; the holder stays as it was.
    update.put(current, [...(Array.isArray(array) ? array : []), item]);
    return;
  }
  holder.set(key, [...(Array.isArray(current) ? current : []), item]);
  if (holderRef) update.put(holderRef, holder);
}

/** Writes the image (and a PNG's alpha as /SMask) into the update; returns what draws it. */
function putImage(incremental: IncrementalUpdate, image: SignatureImage) {
  const ref = incremental.allocate();
  if (image.format === 'jpeg') {
    incremental.put(ref, jpegXObject(image));
  } else {
    let smaskRef: PdfRef | undefined;
    if (image.alpha) {
      smaskRef = incremental.allocate();
      incremental.put(smaskRef, alphaXObject({ ...image, alpha: image.alpha }));
    }
    incremental.put(ref, pngXObject(image, smaskRef));
  }
  return { ref, width: image.width, height: image.height };
}

/** What a visible signature shows: the lines asked for, else the signer's name and the date. */
function appearanceLines(options: PrepareSignatureOptions): string[] {
  return (
    options.appearance?.lines ?? [
      ...(options.signerName ? [options.signerName] : []),
      options.signingTime.toISOString().replace('T', ' ').slice(0, 19),
    ]
  );
}

/** The appearance text as data a worker thread can be sent (the subset without its encoder). */
export type LaidOutText = Pick<AppearanceText, 'operators' | 'imageArea'> & {
  subset?: Omit<FontSubset, 'encode'>;
};

function withoutEncoder({ encode: _, ...subset }: FontSubset): Omit<FontSubset, 'encode'> {
  return subset;
}

/** The incremental update's bytes, placeholders unfilled (`ByteRange` still the marker). */
function buildUpdate(
  reader: PdfReader,
  options: PrepareSignatureOptions & { contentsSize: number },
  text: LaidOutText | undefined,
): PreparedUpdate {
  assertChangesAllowed(reader);
  const stamp = options.documentTimestamp === true;
  const fieldName = chooseFieldName(
    reader,
    options.fieldName,
    stamp ? 'DocumentTimestamp' : 'Signature',
  );
  const { ref: pageReference } = pageRef(reader, (options.page ?? 1) - 1);
  const page = reader.resolveDict(pageReference);
  if (!page) throw pdfErrors.unreadable('the page is not a dictionary');
  const incremental = new IncrementalUpdate(reader);

  const sigRef = incremental.allocate();
  const widgetRef = incremental.allocate();
  const apRef = incremental.allocate();
  const placeholders = {
    // ByteRange then Contents: the placeholders are found and patched in this order.
    ByteRange: new PdfRaw(byteRangeMarker.slice('/ByteRange '.length)),
    Contents: new PdfRaw(`<${'0'.repeat(options.contentsSize * 2)}>`),
  };
  incremental.put(
    sigRef,
    stamp
      ? dict({
          Type: name('DocTimeStamp'),
          Filter: name('Adobe.PPKLite'),
          SubFilter: name('ETSI.RFC3161'),
          ...placeholders,
        })
      : dict({
          Type: name('Sig'),
          Filter: name('Adobe.PPKLite'),
          SubFilter: name('ETSI.CAdES.detached'),
          ...placeholders,
          M: textString(pdfDate(options.signingTime)),
          Name: options.signerName === undefined ? undefined : textString(options.signerName),
          Reason: options.reason === undefined ? undefined : textString(options.reason),
          Location: options.location === undefined ? undefined : textString(options.location),
        }),
  );
  const visible = stamp ? undefined : options.appearance;
  if (visible && text) {
    const fontRef = text.subset ? putFontSubset(incremental, text.subset) : undefined;
    const image = visible.image && putImage(incremental, visible.image);
    incremental.put(apRef, appearanceStream(visible.rect, text, fontRef, image));
  } else {
    incremental.put(apRef, emptyAppearance());
  }
  incremental.put(
    widgetRef,
    dict({
      Type: name('Annot'),
      Subtype: name('Widget'),
      FT: name('Sig'),
      T: textString(fieldName),
      V: sigRef,
      // Print + Locked: shown when printed, not editable.
      F: 132,
      P: pageReference,
      Rect: visible ? visible.rect : [0, 0, 0, 0],
      AP: dict({ N: apRef }),
    }),
  );

  appendToArray(reader, incremental, page, pageReference, 'Annots', widgetRef);

  const catalogRef = reader.catalogRef();
  const catalog = reader.catalog();
  const acroFormValue = catalog.get('AcroForm');
  const acroForm = reader.resolveDict(acroFormValue);
  if (acroForm && acroFormValue instanceof PdfRef) {
    acroForm.set('SigFlags', 3);
    appendToArray(reader, incremental, acroForm, undefined, 'Fields', widgetRef);
    incremental.put(acroFormValue, acroForm);
  } else if (acroForm) {
    acroForm.set('SigFlags', 3);
    appendToArray(reader, incremental, acroForm, undefined, 'Fields', widgetRef);
    incremental.put(catalogRef, catalog);
  } else {
    const acroFormRef = incremental.allocate();
    incremental.put(acroFormRef, dict({ Fields: [widgetRef], SigFlags: 3 }));
    catalog.set('AcroForm', acroFormRef);
    incremental.put(catalogRef, catalog);
  }
  if (options.dss) addToDss(reader, incremental, catalog, options.dss);
  const update = incremental.serialize(reader.size, reader.source.byteAt(reader.size - 1));
  return { update, fieldName, sourceSize: reader.size };
}

/** What the reading half of a preparation needs besides the source: the options, laid out. */
export interface SignatureLayout {
  options: PrepareSignatureOptions & { contentsSize: number };
  text: LaidOutText | undefined;
}

/**
 * The first half of `preparePdfSignature`: checks the options and lays the visible text out
 * (asynchronous: fontkit loads on first use), so that reading the source is a synchronous step.
 */
export async function layOutSignature(options: PrepareSignatureOptions): Promise<SignatureLayout> {
  const parsed = optionsSchema.safeParse(options);
  if (!parsed.success) throw engineValidationError(parsed.error);
  const contentsSize = options.contentsSize ?? defaultContentsSize;
  const visible = options.documentTimestamp ? undefined : options.appearance;
  const text =
    visible &&
    (await appearanceText(visible.rect, appearanceLines(options), visible.image !== undefined));
  const laidOut = text && {
    operators: text.operators,
    imageArea: text.imageArea,
    ...(text.subset ? { subset: withoutEncoder(text.subset) } : {}),
  };
  return { options: { ...options, contentsSize }, text: laidOut };
}

/** The update a preparation appends to `source` (what a PDF worker thread runs). */
export function prepareUpdate(
  source: string,
  options: SignatureLayout['options'],
  text: LaidOutText | undefined,
): PreparedUpdate {
  return PdfReader.read(source, (reader) => buildUpdate(reader, options, text));
}

export interface PreparedUpdate {
  update: Buffer;
  fieldName: string;
  sourceSize: number;
}

/**
 * The last half of `preparePdfSignature`: copies the source unchanged (streamed) to a new temp
 * file, appends `prepared.update` with its `/ByteRange` filled in, and hashes as it goes.
 */
export async function writePreparedFile(
  source: string,
  options: SignatureLayout['options'],
  { update, fieldName, sourceSize }: PreparedUpdate,
): Promise<PreparedSignature> {
  const { contentsSize } = options;
  // Locate and fill the placeholders in the update, now that every offset is known.
  const markerAt = update.indexOf(byteRangeMarker, 0, 'latin1');
  const contentsAt = update.indexOf('/Contents <', markerAt, 'latin1') + '/Contents <'.length;
  const contentsHexLength = contentsSize * 2;
  const contentsOffset = sourceSize + contentsAt;
  const afterContents = contentsOffset + contentsHexLength + 1;
  const byteRange: ByteRange = [
    0,
    contentsOffset - 1,
    afterContents,
    sourceSize + update.length - afterContents,
  ];
  const rangeText = byteRange.join(' ').padEnd(byteRangeWidth, ' ');
  update.write(rangeText, markerAt + '/ByteRange ['.length, 'latin1');

  const target = path.join(options.tempDir ?? os.tmpdir(), `prepared-${crypto.randomUUID()}.pdf`);
  // One read of the source feeds the copy and one hash; at the hole the hash is forked into the
  // document digest (which skips the hole) and the file's own SHA-256 (which does not).
  const prefix = crypto.createHash('sha256');
  try {
    const input = await fs.open(source, 'r');
    try {
      const output = await fs.open(target, 'wx');
      try {
        await streamChunks(input, 0, sourceSize, (chunk) => prefix.update(chunk), {
          file: output,
          offset: 0,
        });
        await output.write(update, 0, update.length, sourceSize);
      } finally {
        await output.close();
      }
    } finally {
      await input.close();
    }
  } catch (error) {
    await fs.rm(target, { force: true });
    throw error;
  }
  prefix.update(update.subarray(0, contentsAt - 1));
  const documentHash = prefix.copy();
  documentHash.update(update.subarray(contentsAt + contentsHexLength + 1));
  prefix.update(update.subarray(contentsAt - 1));
  return {
    path: target,
    fieldName,
    byteRange,
    contentsOffset,
    contentsHexLength,
    documentDigest: documentHash.digest(),
    sha256: prefix.digest('hex'),
    size: sourceSize + update.length,
  };
}
