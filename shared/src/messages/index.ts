import * as en from './en';
import * as vi from './vi';

/**
 * Every text the product shows people, one catalogue per language, Vietnamese first: the web
 * application's pages, the signing page, e-mails and SMS, PDF texts, the desktop agent's windows
 * and the server's own messages. Code takes its words from here, never inline; a text with a
 * value in it is a function of that value. Each area is its own module (`./vi/<area>`,
 * `./en/<area>`), so a browser bundle imports only the areas it shows; this index, with every
 * area, is for the server. The English files are typed by the Vietnamese ones, so a key missing
 * or extra in either language fails to compile.
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
