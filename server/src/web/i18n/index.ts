import { formatInstant } from '@esign/shared';
import { messages as en } from './en';
import { messages as vi } from './vi';

/**
 * The web application's texts: one catalogue per language, Vietnamese first. Components take
 * their texts from here, never inline; a text with a value in it is a function of that value.
 */
export const locales = ['vi', 'en'] as const;
export type Locale = (typeof locales)[number];
export type Messages = typeof vi;

const catalogues: Record<Locale, Messages> = { vi, en };

export function messagesOf(locale: Locale): Messages {
  return catalogues[locale];
}

export function isLocale(value: string | undefined): value is Locale {
  return value === 'vi' || value === 'en';
}

/**
 * Dates are written on the server in Vietnam's zone with the zone named, and the page's script
 * rewrites each `<time>` in the viewer's own zone (also named): right without script, exact with.
 */
export const serverTimeZone = 'Asia/Ho_Chi_Minh';

export function formatDateTime(iso: string, locale: Locale, dateOnly = false): string {
  return formatInstant(new Date(iso), { locale, timeZone: serverTimeZone, dateOnly });
}
