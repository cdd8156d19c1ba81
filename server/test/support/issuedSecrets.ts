import fs from 'node:fs';
import path from 'node:path';
import { recordMessageSecrets, recordSecretsOfBody, runLogDir } from '../../../test/support/runLog';
import { recordMailSecrets } from '../notify/support';

/**
 * The places where the server tests receive credentials, noted in the jest run's list of issued
 * secrets (test/support/runLog.ts) so that the run's teardown can look for them in the logs:
 * every JSON answer of an app (signingUrl, pageCredential, ticket, access and refresh tokens,
 * presigned URLs), every mail the SMTP sink receives, every SMS, and the development outboxes.
 */

interface Fetching {
  fetch: (request: Request, ...rest: never[]) => Response | Promise<Response>;
}

/** Makes `app.fetch` (and so `app.request`) note the credentials of every JSON or text answer. */
export function recordAnswers<A extends Fetching>(app: A): A {
  if (runLogDir() === undefined) return app;
  const original = app.fetch;
  const recording = async (request: Request, ...rest: never[]): Promise<Response> => {
    const response = await original(request, ...rest);
    const type = response.headers.get('content-type') ?? '';
    if (/json|text\/(plain|html)/.test(type) && response.body !== null) {
      // The path may hold a token itself: the source names the route, not the token.
      const route = new URL(request.url).pathname.replace(/[A-Za-z0-9_-]{16,}/g, '…');
      const source = `${request.method} ${route}`;
      recordSecretsOfBody(await response.clone().text(), source);
    }
    return response;
  };
  Object.assign(app, { fetch: recording });
  return app;
}

/** What a development DATA_DIR's outboxes hold: SMS lines (outbox/sms) and .eml files (outbox/mail). */
export function recordOutboxSecrets(dataDir: string, source: string): void {
  if (runLogDir() === undefined) return;
  const sms = path.join(dataDir, 'outbox', 'sms', 'messages.jsonl');
  if (fs.existsSync(sms)) {
    for (const line of fs.readFileSync(sms, 'utf8').split('\n')) {
      if (line.trim() === '') continue;
      try {
        recordMessageSecrets((JSON.parse(line) as { text: string }).text, `${source} sms`);
      } catch {}
    }
  }
  const mail = path.join(dataDir, 'outbox', 'mail');
  if (fs.existsSync(mail)) {
    for (const name of fs.readdirSync(mail)) {
      if (name.endsWith('.eml')) {
        recordMailSecrets(fs.readFileSync(path.join(mail, name)), `${source} mail`);
      }
    }
  }
}
