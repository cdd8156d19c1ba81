import type { Locale, Messages } from '@esign/shared/messages';
import type { Child, FC } from 'hono/jsx';
import { appBase, assetUrl } from './assets';
import { CsrfField } from './components';
import type { Viewer } from './context';

export type NavItem = 'dashboard' | 'dossiers' | 'tasks' | 'contracts' | 'verify';

const navigation: { item: NavItem; path: string }[] = [
  { item: 'dashboard', path: '/dashboard' },
  { item: 'dossiers', path: '/ho-so' },
  { item: 'tasks', path: '/xu-ly-cong-viec' },
  { item: 'contracts', path: '/hop-dong' },
  { item: 'verify', path: '/xac-thuc' },
];

export interface LayoutProps {
  t: Messages;
  locale: Locale;
  title: string;
  viewer: Viewer | null;
  /** The current page's URL path and query, for the language switch to come back to. */
  here: string;
  active?: NavItem;
  /** Scripts of this page besides the common one (names of built files). */
  scripts?: string[];
  /** The origins that may frame this page: where app.js posts its messages to a parent page. */
  embedOrigins?: string[];
  children?: Child;
}

/** The language switch: a link that sets the choice and comes back to the same page. */
function languageLink(here: string, locale: Locale): string {
  const url = new URL(here, 'http://page.invalid');
  url.searchParams.set('lang', locale);
  return `${url.pathname}${url.search}`;
}

/** The frame of every page: header with navigation, language and user, the content, footer. */
export const Layout: FC<LayoutProps> = (props) => {
  const { t, locale, viewer } = props;
  return (
    <html lang={t.common.htmlLang}>
      <head>
        <meta charset="utf-8" />
        <meta name="viewport" content="width=device-width, initial-scale=1" />
        <title>{`${props.title} · ${t.common.productTagline}`}</title>
        {viewer ? <meta name="csrf-token" content={viewer.csrfToken} /> : null}
        <link rel="stylesheet" href={assetUrl('styles.css')} />
        <script src={assetUrl('app.js')} defer />
        {(props.scripts ?? []).map((name) => (
          <script src={assetUrl(name)} defer />
        ))}
      </head>
      <body
        data-locale={locale}
        data-embed-origins={props.embedOrigins?.length ? props.embedOrigins.join(' ') : undefined}
      >
        <a class="skip-link" href="#main">
          {t.common.skipToContent}
        </a>
        <header class="site-header">
          <div class="site-header-inner">
            <a class="brand" href={`${appBase}/dashboard`}>
              <span class="brand-mark" aria-hidden="true">
                eS
              </span>
              <span class="brand-name">{t.common.productTagline}</span>
            </a>
            <div class="header-tools">
              <nav class="language" aria-label={t.common.language.label}>
                {(['vi', 'en'] as const).map((code) => (
                  <a
                    href={languageLink(props.here, code)}
                    lang={code}
                    aria-current={code === locale ? 'true' : undefined}
                  >
                    {code.toUpperCase()}
                    <span class="visually-hidden"> {t.common.language[code]}</span>
                  </a>
                ))}
              </nav>
              {viewer ? (
                <form method="post" action={`${appBase}/dang-xuat`} class="sign-out">
                  <span class="user-name">
                    <span class="visually-hidden">{t.common.signedInAs} </span>
                    {viewer.actor.username}
                  </span>
                  <CsrfField token={viewer.csrfToken} />
                  <button type="submit" class="button button-quiet">
                    {t.common.signOut}
                  </button>
                </form>
              ) : props.here.startsWith(`${appBase}/dang-nhap`) ? null : (
                <a class="button button-quiet" href={`${appBase}/dang-nhap`}>
                  {t.common.signIn.title}
                </a>
              )}
            </div>
          </div>
          {viewer ? (
            <nav class="main-nav" aria-label={t.common.nav.label}>
              <ul>
                {navigation.map(({ item, path }) => (
                  <li>
                    <a
                      href={`${appBase}${path}`}
                      aria-current={props.active === item ? 'page' : undefined}
                    >
                      {t.common.nav[item]}
                    </a>
                  </li>
                ))}
              </ul>
            </nav>
          ) : null}
        </header>
        <main id="main" tabindex={-1}>
          {props.children}
        </main>
        <footer class="site-footer">{t.common.footer}</footer>
      </body>
    </html>
  );
};
