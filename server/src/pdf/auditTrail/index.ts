import { z } from 'zod';
import { engineValidationError } from '../engineError';
import type { AuditTrailInput, RenderedAuditTrail } from './types';

export type {
  AuditTrailEvent,
  AuditTrailInput,
  AuditTrailLabels,
  RenderedAuditTrail,
} from './types';

/**
 * The audit-trail PDF: a readable table of a document's events, to be sealed by the signature
 * engine. It only draws what the caller gives (the hash-chained log lives elsewhere). The
 * pdf-lib work lives in ./render, loaded on the first call.
 */

const date = z.date().refine((value) => !Number.isNaN(value.getTime()), 'not a valid date');

const inputSchema = z.object({
  title: z.string().min(1).max(300),
  documentName: z.string().min(1).max(1000),
  documentHash: z.string().min(1).max(300),
  events: z
    .array(
      z.object({
        at: date,
        actor: z.string().max(1000),
        action: z.string().max(500),
        details: z.string().max(10_000).optional(),
      }),
    )
    .max(100_000),
  generatedAt: date,
  locale: z.enum(['vi', 'en']).optional(),
});

let render: Promise<typeof import('./render')> | undefined;

/**
 * Draws the audit trail into a new PDF at `outPath` (written whole, then renamed into place):
 * A4 pages with the title, document and hash on each, the events in a table that continues
 * over as many pages as needed, and "Trang n/N" at the foot. Same input, same bytes.
 * Input out of bounds: 400 VALIDATION_ERROR.
 */
export async function renderAuditTrail(
  input: AuditTrailInput,
  outPath: string,
): Promise<RenderedAuditTrail> {
  const parsed = inputSchema.safeParse(input);
  if (!parsed.success) throw engineValidationError(parsed.error);
  render ??= import('./render');
  return (await render).renderAuditTrailPdf(input, outPath);
}
