import { formatInstant } from '@esign/shared';
import type { Locale } from '@esign/shared/messages';

/**
 * Dates are written on the server in Vietnam's zone with the zone named, and the page's script
 * rewrites each `<time>` in the viewer's own zone (also named): right without script, exact with.
 */
export const serverTimeZone = 'Asia/Ho_Chi_Minh';

export function formatDateTime(iso: string, locale: Locale, dateOnly = false): string {
  return formatInstant(new Date(iso), { locale, timeZone: serverTimeZone, dateOnly });
}
