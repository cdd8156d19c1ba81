import { agentConnectSources } from '@esign/shared/agentEndpoint';
import type { Hono } from 'hono';
import { z } from 'zod';
import { originOf } from '../../audit/origin';
import { enforceRateLimit, type RateLimiter } from '../../auth/rateLimit';
import { signingMethods } from '../../contracts/schemas';
import type { SigningMethod } from '../../db/schema';
import { DomainError, errors, validationError } from '../../errors/domainError';
import { fileResponse } from '../../files/download';
import { certificateInfoOf, type SessionRow } from '../../sessions/queries';
import { maxImageBytes, otpResendMs } from '../../sessions/rules';
import type {
  HeldCredential,
  LinkOver,
  PageVerification,
  SignerTurn,
  SigningPageView,
  StartedPageSession,
} from '../../sessions/signingPage';
import { asAppContext, type WebContext, type WebEnv } from '../context';
import { allowFramingBy } from '../embedding';
import { renderPage } from '../render';
import { requireViewer } from '../session/middleware';
import { heldCredentialOf, keepCredential } from './signing/pageCookie';
import {
  type HeldSessionData,
  LinkOverPage,
  type SessionOutcome,
  SigningActions,
  SigningDocument,
  SigningFacts,
  SigningHead,
  type SigningPageData,
  TurnNotice,
  VerificationResult,
} from './signing/view';

/**
 * `/ky-so/…`: the one signing page, reached four ways, each a path of its own:
 *
 * - `/ky-so/phien/{token}`: the single-use `signingUrl` of a session (no sign-in). Opening it
 *   uses nothing; the page's script exchanges the link for the session's page credential (POST
 *   to the same path), which the page's cookie keeps, so a reload goes on with the session.
 * - `/ky-so/{invitation token}` (43 characters): a contract signer's e-mailed invitation (no
 *   sign-in); the method the signer picks opens their session.
 * - `/ky-so/{taskId}` (or the task's code): a signed-in user's dossier task turn.
 * - `/ky-so/hop-dong/{contractId}`: a signed-in user's contract turn, when their e-mail is one of
 *   the contract's signers.
 *
 * Each path also serves its file (`…/tai-lieu`) and, once signed, the signed file
 * (`…/ban-da-ky`) to whoever may open the page. The steps run on the API (`/api/signing/…`)
 * with the page credential, as any signing page's do.
 */

/** The signing stack loads with the first signing page, not with the server. */
const pageModule = () => import('../../sessions/signingPage');

const linkPath = '/ky-so/phien/:token{[A-Za-z0-9_-]{16,128}}';
const invitationPath = '/ky-so/:token{[A-Za-z0-9_-]{43}}';
/** A task's numeric id, or its code (a UUID). */
const taskPath =
  '/ky-so/:task{(?:[0-9]{1,12}|[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12})}';
const contractPath = '/ky-so/hop-dong/:contract{[A-Za-z0-9_-]{1,64}}';

/** What a page's path opens, for this request. */
interface ResolvedPage {
  view: SigningPageView;
  /** The session this browser holds for the page (its cookie), if any. */
  session: SessionRow | undefined;
  held: HeldCredential | undefined;
  /** How the page's script gets a session: exchanging the link, or starting one per method. */
  entry: 'exchange' | 'start' | null;
  /** The file may be shown (a link that still opens the subject, or a held session). */
  documentVisible: boolean;
  /** The method a session link was made for; null where the signer picks. */
  fixedMethod: SigningMethod | null;
}

type Resolution = ResolvedPage | { over: LinkOver | 'invalid' };

/** How one way in finds its page and opens its sessions. */
interface Entry {
  path: string;
  signedIn: boolean;
  /** `record`: the page itself is opened (not its file), which the invitation records. */
  resolve(c: WebContext, record: boolean): Promise<Resolution>;
  start(c: WebContext, method: SigningMethod | undefined): Promise<StartedPageSession>;
}

const StartBody = z.object({ signingMethod: z.enum(signingMethods).optional() }).strict();

function methodRequired(method: SigningMethod | undefined): SigningMethod {
  if (method === undefined) {
    throw errors.validation(
      'signingMethod',
      `signingMethod: is required, one of ${signingMethods.join(', ')}`,
      'REQUIRED',
    );
  }
  return method;
}

const entries: Entry[] = [
  {
    path: linkPath,
    signedIn: false,
    resolve: async (c) => {
      const { linkPage } = await pageModule();
      const held = heldCredentialOf(c);
      const page = await linkPage(c.get('deps'), c.req.param('token') ?? '', held);
      if (page.state === 'invalid') return { over: 'invalid' };
      if (page.state === 'over') return { over: page.reason };
      return {
        view: page.view,
        session: page.held ? page.session : undefined,
        held: page.held ? held : undefined,
        entry: page.held ? null : 'exchange',
        documentVisible: true,
        fixedMethod: page.session.method,
      };
    },
    start: async (c) => {
      const { exchangeSigningLink } = await import('../../sessions/initiate');
      return exchangeSigningLink(
        c.get('deps'),
        c.req.param('token') ?? '',
        originOf(asAppContext(c)),
      );
    },
  },
  {
    path: invitationPath,
    signedIn: false,
    resolve: async (c, record) => {
      const { invitationPage } = await pageModule();
      const held = heldCredentialOf(c);
      const page = await invitationPage(
        c.get('deps'),
        c.req.param('token') ?? '',
        held,
        record ? originOf(asAppContext(c)) : null,
      );
      if (page.state === 'invalid') return { over: 'invalid' };
      return {
        view: page.view,
        session: page.session,
        held: page.session ? held : undefined,
        entry: page.usable ? 'start' : null,
        documentVisible: page.usable || page.session !== undefined,
        fixedMethod: null,
      };
    },
    start: async (c, method) => {
      const { startInvitationSession } = await import('../../sessions/invitation');
      return startInvitationSession(
        c.get('deps'),
        { token: c.req.param('token') ?? '', signingMethod: methodRequired(method) },
        originOf(asAppContext(c)),
      );
    },
  },
  {
    path: taskPath,
    signedIn: true,
    resolve: (c) => signedInPage(c, taskView),
    start: async (c, method) => {
      const view = await taskView(c);
      if (view.subject.kind !== 'task') throw new Error('a task page shows a task');
      const { startTaskPageSession } = await pageModule();
      return startTaskPageSession(
        c.get('deps'),
        c.get('viewer')!.actor.id,
        { taskCode: view.subject.taskCode, signingMethod: methodRequired(method) },
        originOf(asAppContext(c)),
      );
    },
  },
  {
    path: contractPath,
    signedIn: true,
    resolve: (c) => signedInPage(c, contractView),
    start: async (c, method) => {
      const { startContractTurnSession } = await pageModule();
      return startContractTurnSession(
        c.get('deps'),
        c.get('viewer')!.actor.id,
        { contractId: c.req.param('contract') ?? '', signingMethod: methodRequired(method) },
        originOf(asAppContext(c)),
      );
    },
  },
];

/** The task of `/ky-so/{taskId}` (or its code) as the signed-in user sees it (404 otherwise). */
async function taskView(c: WebContext): Promise<SigningPageView> {
  const task = c.req.param('task') ?? '';
  const ref = /^[0-9]+$/.test(task) ? { id: Number(task) } : { code: task.toLowerCase() };
  const { taskSignerView } = await pageModule();
  return taskSignerView(c.get('deps'), c.get('viewer')!.principal, ref);
}

/** The contract of `/ky-so/hop-dong/{id}` when the signed-in user is its signer (404 otherwise). */
async function contractView(c: WebContext): Promise<SigningPageView> {
  const { contractTurnView } = await pageModule();
  return contractTurnView(c.get('deps'), c.get('viewer')!.actor.id, c.req.param('contract') ?? '');
}

/** A signed-in user's page: their view and the session they hold on it. */
async function signedInPage(
  c: WebContext,
  viewOf: (c: WebContext) => Promise<SigningPageView>,
): Promise<ResolvedPage> {
  const view = await viewOf(c);
  const held = heldCredentialOf(c);
  const { heldSessionOf } = await pageModule();
  const session = await heldSessionOf(c.get('deps'), view, held);
  return {
    view,
    session,
    held: session ? held : undefined,
    entry: 'start',
    documentVisible: true,
    fixedMethod: null,
  };
}

/** The page's path: its cookie's path, the script's POST target, the files' prefix. */
function pagePathOf(c: WebContext): string {
  return new URL(c.req.url).pathname.replace(/\/(tai-lieu|ban-da-ky)$/, '');
}

/** What the session this browser held came to, when it ended here. */
function outcomeOf(session: SessionRow | undefined): SessionOutcome | undefined {
  if (session?.state === 'signed') {
    const certificate = certificateInfoOf(session)?.subject ?? null;
    return { state: 'signed', at: session.signed_at, certificate };
  }
  if (session?.state === 'rejected') return { state: 'rejected' };
  return undefined;
}

/** Whether the signed file is offered: the signer signed, or the subject is complete. */
function offersSigned(page: ResolvedPage, outcome: SessionOutcome | undefined): boolean {
  const { turn, document } = page.view;
  return (
    document.signed &&
    page.documentVisible &&
    (outcome?.state === 'signed' ||
      turn.state === 'signed' ||
      (turn.state === 'closed' && turn.reason === 'completed'))
  );
}

/** The verification of the signed file; a failure to verify is said, never a broken page. */
async function verificationOf(
  c: WebContext,
  view: SigningPageView,
): Promise<PageVerification | 'failed' | null> {
  const { pageVerification } = await pageModule();
  try {
    return await pageVerification(c.get('deps'), view);
  } catch (error) {
    c.get('logger').warn({ err: error }, 'signing page: verification failed');
    return 'failed';
  }
}

function heldSessionData(page: ResolvedPage, now: Date): HeldSessionData | null {
  const { session, held } = page;
  if (!session || !held || session.state !== 'open') return null;
  if (session.expires_at <= now.toISOString()) return null;
  return {
    sessionId: session.public_id,
    pageCredential: held.credential,
    signingMethod: session.method,
    expiresAt: session.expires_at,
    otpSentAt: session.otp_sent_at,
  };
}

async function renderSigningPage(c: WebContext, page: ResolvedPage): Promise<Response> {
  const t = c.get('t');
  const locale = c.get('locale');
  const deps = c.get('deps');
  const { view } = page;
  const pagePath = pagePathOf(c);
  const outcome = outcomeOf(page.session);
  // What this browser's session came to decides over the subject's turn.
  const turn: SignerTurn =
    outcome?.state === 'signed'
      ? { state: 'signed', at: outcome.at }
      : outcome?.state === 'rejected'
        ? { state: 'declined' }
        : view.turn;
  const heldOpen = heldSessionData(page, deps.clock.now());
  // The turn is the signer's and the page can open (or holds) a session: the actions.
  const canAct =
    turn.state === 'yours' && outcome === undefined && (page.entry !== null || heldOpen !== null);
  const signedUrl = offersSigned(page, outcome) ? `${pagePath}/ban-da-ky` : null;
  const verification = signedUrl ? await verificationOf(c, view) : null;
  const data: SigningPageData = {
    pageUrl: pagePath,
    apiBase: '/api/signing/',
    entry: page.entry ?? 'none',
    methods: page.fixedMethod ? [page.fixedMethod] : view.methods,
    session: heldOpen,
    resendSeconds: otpResendMs / 1000,
    maxImageBytes,
    documentTitle: view.title,
  };
  // A partner origin the contract's or dossier's tenant registered may frame the page.
  await allowFramingBy(c, view.document.tenantId);
  if (canAct && data.methods.includes('usb_token')) {
    // The desktop agent's discovery probe and socket on its loopback ports, and nothing else.
    c.set('extraConnectSources', agentConnectSources());
  }
  return renderPage(
    c,
    {
      title: `${t.signing.pageTitle[view.subject.kind]}: ${view.title}`,
      scripts: ['signing.js', 'preview.js'],
    },
    <div class="signing">
      <SigningHead t={t} view={view} />
      <div class="signing-layout">
        <SigningDocument
          t={t}
          view={view}
          url={page.documentVisible ? `${pagePath}/tai-lieu` : null}
          beforeSigning={canAct}
        />
        <div class="signing-side">
          <SigningFacts t={t} locale={locale} view={view} turn={turn} />
          {canAct ? (
            <SigningActions
              t={t}
              data={data}
              serviceName={deps.config.serviceName}
              agentDownloadUrl={deps.config.agentDownloadUrl}
            />
          ) : (
            <TurnNotice
              t={t}
              locale={locale}
              view={view}
              turn={turn}
              outcome={outcome}
              done={c.req.query('done')}
              signedUrl={signedUrl}
            />
          )}
          {verification ? (
            <VerificationResult t={t} locale={locale} verification={verification} />
          ) : null}
          <p class="muted signing-secure">{t.signing.secure}</p>
        </div>
      </div>
    </div>,
  );
}

/** Answers a page that opens nothing (unknown, used or expired link) in plain words. */
function linkOverPage(c: WebContext, reason: LinkOver | 'invalid'): Response {
  const t = c.get('t');
  const status = reason === 'invalid' ? 404 : reason === 'expired' ? 410 : 409;
  return renderPage(
    c,
    { title: t.signing.link[reason].title, status },
    <LinkOverPage t={t} reason={reason} />,
  );
}

/** The page's files answer like an unknown page to anyone who may not open the page. */
const noFile = () => new DomainError('FILE_NOT_FOUND', 'No such file');

/** Reads the start's JSON body: `{}` or `{ signingMethod }`. */
async function startBody(c: WebContext): Promise<SigningMethod | undefined> {
  const text = await c.req.text();
  let json: unknown = {};
  if (text.trim() !== '') {
    try {
      json = JSON.parse(text);
    } catch {
      throw new DomainError('INVALID_JSON', 'The body must be JSON');
    }
  }
  const parsed = StartBody.safeParse(json);
  if (!parsed.success) throw validationError(parsed.error);
  return parsed.data.signingMethod;
}

/**
 * The signing page's routes, on the web app (its layout, language, CSRF guard). The pages of
 * links need no sign-in; a signed-in user's pages send anyone else to sign in.
 */
export function signingPages(web: Hono<WebEnv>, limiter: RateLimiter): void {
  for (const entry of entries) {
    if (entry.signedIn) {
      web.use(entry.path, requireViewer());
      web.use(`${entry.path}/*`, requireViewer());
    }
    const limited = async (c: WebContext) => {
      await enforceRateLimit(asAppContext(c), limiter, entry.signedIn ? 'api' : 'auth');
    };

    web.get(entry.path, async (c) => {
      const page = await entry.resolve(c, true);
      if ('over' in page) return linkOverPage(c, page.over);
      return renderSigningPage(c, page);
    });

    // Opens the page's session (the link's, or one for the method picked): JSON for the script,
    // and the page credential kept in the page's cookie.
    web.post(entry.path, async (c) => {
      await limited(c);
      const method = await startBody(c);
      const started = await entry.start(c, method);
      keepCredential(c, pagePathOf(c), started);
      return c.json({ data: started });
    });

    const file = (kind: 'document' | 'signed') => async (c: WebContext) => {
      const page = await entry.resolve(c, false);
      if ('over' in page || !page.documentVisible || page.view.document.sha256 === '') {
        throw noFile();
      }
      const deps = c.get('deps');
      const { view } = page;
      if (kind === 'document') {
        return fileResponse(deps, {
          sha256: view.document.sha256,
          mimeType: 'application/pdf',
          title: view.document.title,
        });
      }
      if (!offersSigned(page, outcomeOf(page.session))) throw noFile();
      const { recordSignerDownload } = await pageModule();
      const signed = await recordSignerDownload(deps, view, originOf(asAppContext(c)));
      if (!signed) throw noFile();
      return fileResponse(deps, {
        sha256: signed.sha256,
        mimeType: 'application/pdf',
        title: c.get('t').signing.document.signedName(view.document.title),
      });
    };
    web.get(`${entry.path}/tai-lieu`, file('document'));
    web.get(`${entry.path}/ban-da-ky`, file('signed'));
  }
}
