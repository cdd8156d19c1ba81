import type { Hono } from 'hono';
import type { WebEnv } from '../context';
import { renderPage } from '../render';

/** `/dashboard`: what the signed-in person has to do and what waits on others. */
export function dashboardPages(app: Hono<WebEnv>): void {
  app.get('/dashboard', (c) => {
    const t = c.get('t');
    return renderPage(
      c,
      { title: t.common.nav.dashboard, active: 'dashboard' },
      <section>
        <h1>{t.common.nav.dashboard}</h1>
      </section>,
    );
  });
}
