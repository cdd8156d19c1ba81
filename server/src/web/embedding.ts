import type { MiddlewareHandler } from 'hono';
import { embeddingOriginsOf } from '../tenancy/embeddingOrigins';
import type { WebContext, WebEnv } from './context';

/**
 * Embedding the pages in a partner's site (docs/embedding.md): a page may be framed only by the
 * origins its tenant registered (`admin domain add`), `frame-ancestors 'none'` otherwise, and a
 * framed page posts its messages to those origins only (the layout hands them to app.js).
 */

/**
 * Lets the tenant's registered origins frame this answer. The pages of a signed-in viewer get it
 * from `frameForViewer`; a page reached without a session (the signing page behind a link) calls
 * it with the tenant of the contract or dossier it shows.
 */
export async function allowFramingBy(c: WebContext, tenantId: number | null): Promise<void> {
  c.set('frameAncestors', await embeddingOriginsOf(c.get('deps').db, tenantId));
}

/** Every page of a signed-in viewer may be framed by the viewer's tenant's registered origins. */
export function frameForViewer(): MiddlewareHandler<WebEnv> {
  return async (c, next) => {
    const viewer = c.get('viewer');
    if (viewer) await allowFramingBy(c, viewer.actor.tenantId);
    await next();
  };
}
