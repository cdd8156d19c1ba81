import type { Locale, Messages } from '@esign/shared/messages';
import type { FC } from 'hono/jsx';
import type { SigningMethod } from '../../../db/schema';
import type {
  ClosedReason,
  LinkOver,
  PageVerification,
  SignerTurn,
  SigningPageView,
} from '../../../sessions/signingPage';
import { appBase } from '../../assets';
import { Badge, DateTime, Fact, Notice, type Tone } from '../../components';

/**
 * The signing page's parts: its head, the document, the facts of the turn, the actions the
 * signer may take (the script brings them to life), what became of the signature, and the
 * verification of the signed file. Every text comes from the catalogue (`t.signing`).
 */

/** What the page's script reads from `#signing-actions[data-page]`. */
export interface SigningPageData {
  /** This page's own path: the script POSTs here to open a session, then comes back to it. */
  pageUrl: string;
  apiBase: string;
  /**
   * `exchange`: the link's session is opened on load; `start`: a method opens one when first
   * used; `none`: only the held session.
   */
  entry: 'exchange' | 'start' | 'none';
  methods: SigningMethod[];
  /** The open session this browser holds (after a reload), with its page credential. */
  session: HeldSessionData | null;
  resendSeconds: number;
  maxImageBytes: number;
  documentTitle: string;
}

export interface HeldSessionData {
  sessionId: string;
  pageCredential: string;
  signingMethod: SigningMethod;
  expiresAt: string;
  otpSentAt: string | null;
}

/** What became of the session this browser held, when it ended on this page. */
export type SessionOutcome =
  | { state: 'signed'; at: string | null; certificate: string | null }
  | { state: 'rejected' };

const turnTone: Record<Exclude<SignerTurn['state'], 'closed'>, Tone> = {
  yours: 'info',
  waiting: 'warning',
  signed: 'success',
  declined: 'danger',
  viewer: 'neutral',
};

const closedTone: Record<ClosedReason, Tone> = {
  completed: 'success',
  cancelled: 'warning',
  expired: 'warning',
  rejected: 'warning',
  notSent: 'neutral',
  handled: 'neutral',
  notSigned: 'neutral',
};

/** The turn as a coloured label, with its words. */
function toneOf(turn: SignerTurn): Tone {
  return turn.state === 'closed' ? closedTone[turn.reason] : turnTone[turn.state];
}

function badgeOf(t: Messages, turn: SignerTurn): string {
  return turn.state === 'closed'
    ? t.signing.badge.closed[turn.reason]
    : t.signing.badge[turn.state];
}

/** The turn in one sentence. */
export function turnSentence(t: Messages, turn: SignerTurn): string {
  switch (turn.state) {
    case 'yours':
      return t.signing.turn.yours;
    case 'waiting':
      return turn.waitingFor.length > 0
        ? t.signing.turn.waiting(turn.waitingFor.join(', '))
        : t.signing.turn.waitingAnyone;
    case 'signed':
      return t.signing.turn.signed;
    case 'declined':
      return t.signing.turn.declined;
    case 'viewer':
      return t.signing.turn.viewer;
    case 'closed':
      return t.signing.turn.closed[turn.reason];
  }
}

export const SigningHead: FC<{ t: Messages; view: SigningPageView }> = ({ t, view }) => {
  const kind = view.subject.kind;
  return (
    <div class="page-head signing-head">
      <div>
        <p class="eyebrow">{t.signing.eyebrow[kind]}</p>
        <h1>{view.title}</h1>
        {view.stepName ? <p class="muted signing-step">{t.signing.step(view.stepName)}</p> : null}
      </div>
    </div>
  );
};

export const SigningFacts: FC<{
  t: Messages;
  locale: Locale;
  view: SigningPageView;
  turn: SignerTurn;
}> = ({ t, locale, view, turn }) => (
  <section class="card signing-facts" aria-label={t.signing.facts.label}>
    <dl class="facts">
      <Fact label={t.signing.facts.signer}>
        {view.signer.name}
        {view.signer.email ? <span class="muted signing-email">{view.signer.email}</span> : null}
      </Fact>
      <Fact label={t.signing.facts.deadline}>
        {view.deadline ? (
          <DateTime iso={view.deadline} locale={locale} />
        ) : (
          t.signing.facts.noDeadline
        )}
      </Fact>
      <Fact label={t.signing.facts.reference[view.subject.kind]}>
        <span class="signing-reference">{view.reference}</span>
      </Fact>
      <Fact label={t.signing.facts.state}>
        <Badge tone={toneOf(turn)}>{badgeOf(t, turn)}</Badge>
      </Fact>
    </dl>
  </section>
);

/** The file, shown inline by preview.js, with a plain link for when it cannot be. */
export const SigningDocument: FC<{
  t: Messages;
  view: SigningPageView;
  url: string | null;
  /** The signer is about to sign: the page asks them to read it first. */
  beforeSigning: boolean;
}> = ({ t, view, url, beforeSigning }) => (
  <section class="card signing-document" aria-labelledby="signing-document-heading">
    <h2 id="signing-document-heading">{t.signing.document.heading}</h2>
    {url ? (
      <>
        {beforeSigning ? <p class="muted">{t.signing.document.intro}</p> : null}
        <div class="pdf-preview" data-pdf-src={url} data-pdf-title={view.document.title}>
          <a class="button button-secondary" href={url} download>
            {t.signing.document.download}
          </a>
        </div>
      </>
    ) : (
      <p class="muted">{t.signing.document.hidden}</p>
    )}
  </section>
);

/**
 * The method panels. Each is server-rendered and hidden; the script shows the chosen one. The
 * OTP panel serves otp_sms and cloud_hsm alike (its hint says which).
 */
const MethodPanels: FC<{
  t: Messages;
  methods: SigningMethod[];
  serviceName: string;
  agentDownloadUrl: string;
}> = ({ t, methods, serviceName, agentDownloadUrl }) => {
  const s = t.signing;
  const otp = methods.includes('otp_sms') || methods.includes('cloud_hsm');
  return (
    <>
      {methods.length > 1 ? (
        <fieldset class="method-choice">
          <legend>{s.sign.choose}</legend>
          {methods.map((method) => (
            <label class="method-option">
              <input type="radio" name="signing-method" value={method} />
              <span>{s.sign.methods[method]}</span>
            </label>
          ))}
        </fieldset>
      ) : null}
      {methods.map((method) => (
        <p class="muted method-hint" data-hint={method} hidden>
          {s.sign.hints[method]}
        </p>
      ))}
      {otp ? (
        <div class="method-panel" data-panel="otp" hidden>
          <p id="otp-sent" class="notice notice-info" role="status" hidden />
          <div class="actions">
            <button id="otp-send" type="button" class="button button-primary">
              {s.otp.send}
            </button>
          </div>
          <form id="otp-form" class="form-stack" hidden>
            <label for="otp-code">{s.otp.label}</label>
            <input
              id="otp-code"
              name="otp"
              type="text"
              inputmode="numeric"
              autocomplete="one-time-code"
              pattern="[0-9]{6}"
              maxlength={6}
              required
              class="otp-input"
            />
            <p class="muted signing-consent">{s.sign.consent}</p>
            <div class="actions">
              <button id="otp-confirm" type="submit" class="button button-primary">
                {s.otp.confirm}
              </button>
              <button id="otp-resend" type="button" class="button button-secondary">
                {s.otp.resend}
              </button>
            </div>
          </form>
        </div>
      ) : null}
      {methods.includes('image_signature') ? (
        <div class="method-panel" data-panel="image" hidden>
          <p class="muted" id="pad-hint">
            {s.image.padHint}
          </p>
          <canvas
            id="signature-pad"
            class="signature-pad"
            width={600}
            height={220}
            role="img"
            aria-label={s.image.padLabel}
            aria-describedby="pad-hint"
          />
          <div class="actions pad-tools">
            <button id="pad-clear" type="button" class="button button-secondary">
              {s.image.clear}
            </button>
          </div>
          <label for="signature-upload" class="upload-label">
            {s.image.upload}
          </label>
          <input id="signature-upload" type="file" accept="image/png,image/jpeg" />
          <p class="muted signing-consent">{s.sign.consent}</p>
          <div class="actions">
            <button id="image-confirm" type="button" class="button button-primary">
              {s.image.confirm}
            </button>
          </div>
        </div>
      ) : null}
      {methods.includes('usb_token') ? (
        // The USB-token module (server/web/signing-page/usbToken.ts) fills these parts in.
        <div
          class="method-panel usb-token"
          data-panel="usb"
          id="usb-token"
          data-service-name={serviceName}
          data-agent-download={agentDownloadUrl}
          hidden
        >
          <p data-part="intro">{s.usb.intro}</p>
          <p data-part="status" role="status" hidden />
          <p data-part="problem" class="notice notice-danger" role="alert" hidden />
          <p data-part="install" hidden />
          <fieldset data-part="certificates" class="usb-certificates" hidden>
            <legend data-part="legend" />
            <div data-part="list" />
          </fieldset>
          <div class="actions">
            <button data-part="sign" type="button" class="button button-primary" hidden />
            <button data-part="retry" type="button" class="button button-secondary" hidden />
            <button data-part="new-tab" type="button" class="button button-secondary" hidden />
          </div>
        </div>
      ) : null}
    </>
  );
};

/** The signer's actions while they may sign: the methods, then declining with a reason. */
export const SigningActions: FC<{
  t: Messages;
  data: SigningPageData;
  serviceName: string;
  agentDownloadUrl: string;
}> = ({ t, data, serviceName, agentDownloadUrl }) => {
  const s = t.signing;
  return (
    <section
      class="card signing-actions"
      id="signing-actions"
      aria-labelledby="signing-actions-heading"
      data-page={JSON.stringify(data)}
    >
      <h2 id="signing-actions-heading">{s.sign.heading}</h2>
      <p id="signing-status" class="signing-status" role="status" aria-live="polite" />
      <div id="signing-error" class="notice notice-danger" role="alert" hidden />
      <MethodPanels
        t={t}
        methods={data.methods}
        serviceName={serviceName}
        agentDownloadUrl={agentDownloadUrl}
      />
      <details class="signing-reject" id="reject">
        <summary>{s.reject.summary}</summary>
        <form id="reject-form" class="form-stack">
          <label for="reject-reason">{s.reject.label}</label>
          <textarea id="reject-reason" name="reason" rows={3} maxlength={1000} required />
          <p class="muted">{s.reject.hint}</p>
          <div class="actions">
            <button id="reject-submit" type="submit" class="button button-danger">
              {s.reject.submit}
            </button>
          </div>
        </form>
      </details>
    </section>
  );
};

/** Where the signer stands when they cannot sign now (or have), in plain words. */
/**
 * What a parent page embedding the app is told once the signer signed or declined here: the
 * attributes the task pages' notices carry (`data-task-event`, `data-task-id`,
 * `data-dossier-id`), and for a contract `data-contract-event` and `data-contract-id`.
 */
function embedEvent(
  view: SigningPageView,
  happened: 'signed' | 'rejected',
): Record<string, string> {
  const { subject } = view;
  return subject.kind === 'task'
    ? {
        'data-task-event': happened,
        'data-task-id': String(subject.taskId),
        'data-dossier-id': String(subject.dossierId),
      }
    : { 'data-contract-event': happened, 'data-contract-id': view.reference };
}

export const TurnNotice: FC<{
  t: Messages;
  locale: Locale;
  view: SigningPageView;
  turn: SignerTurn;
  outcome: SessionOutcome | undefined;
  done: string | undefined;
  signedUrl: string | null;
}> = ({ t, locale, view, turn, outcome, done, signedUrl }) => {
  const s = t.signing;
  const tone = toneOf(turn);
  const justSigned = outcome?.state === 'signed' && done === 'signed';
  const justRejected = outcome?.state === 'rejected' && done === 'rejected';
  const happened = justSigned ? 'signed' : justRejected ? 'rejected' : null;
  return (
    <section
      class="card signing-outcome"
      id="signing-outcome"
      aria-labelledby="signing-outcome-heading"
    >
      <h2 id="signing-outcome-heading" class="visually-hidden">
        {s.facts.state}
      </h2>
      <div {...(happened ? embedEvent(view, happened) : {})}>
        <Notice tone={justRejected ? 'warning' : tone}>
          <strong>
            {justSigned
              ? s.result.signed
              : justRejected
                ? s.result.rejected
                : turnSentence(t, turn)}
          </strong>
        </Notice>
      </div>
      {outcome?.state === 'signed' || turn.state === 'signed' ? (
        <dl class="facts">
          <Fact label={s.turn.signedAt}>
            <DateTime
              iso={
                (outcome?.state === 'signed' ? outcome.at : null) ??
                (turn.state === 'signed' ? turn.at : null)
              }
              locale={locale}
            />
          </Fact>
          {outcome?.state === 'signed' && outcome.certificate ? (
            <Fact label={s.result.certificate}>{outcome.certificate}</Fact>
          ) : null}
        </dl>
      ) : null}
      {signedUrl ? (
        <p class="actions signing-download">
          <a class="button button-primary" href={signedUrl} download id="signed-download">
            {s.document.downloadSigned}
          </a>
        </p>
      ) : null}
      {turn.state === 'closed' && turn.reason === 'notSigned' ? (
        <p>
          <a class="button button-secondary" href={`${appBase}/xu-ly-cong-viec`}>
            {s.turn.tasksLink}
          </a>
        </p>
      ) : null}
    </section>
  );
};

/** The verification engine's answer on the signed file, one signature after another. */
export const VerificationResult: FC<{
  t: Messages;
  locale: Locale;
  verification: PageVerification | 'failed';
}> = ({ t, locale, verification }) => {
  const v = t.signing.verification;
  if (verification === 'failed') {
    return (
      <section class="card signing-verification" aria-labelledby="verification-heading">
        <h2 id="verification-heading">{v.heading}</h2>
        <Notice tone="warning">{v.failed}</Notice>
      </section>
    );
  }
  let signatureNumber = 0;
  return (
    <section
      class="card signing-verification"
      id="signing-verification"
      aria-labelledby="verification-heading"
    >
      <h2 id="verification-heading">{v.heading}</h2>
      <Notice tone={verification.isValid ? 'success' : 'danger'}>
        <strong>{verification.isValid ? v.allValid : v.notValid}</strong>
      </Notice>
      <ol class="verification-list">
        {verification.signatures.map((signature) => {
          const title = signature.documentTimestamp
            ? v.documentTimestamp
            : v.signature(++signatureNumber);
          return (
            <li class="verification-item" data-valid={signature.isValid ? 'true' : 'false'}>
              <div class="verification-title">
                <strong>{title}</strong>
                <Badge tone={signature.isValid ? 'success' : 'danger'}>
                  {signature.isValid ? v.valid : v.invalid}
                </Badge>
              </div>
              <dl class="verification-facts">
                {signature.documentTimestamp ? null : (
                  <div>
                    <dt>{v.signedBy}</dt>
                    <dd>{signature.signerName ?? v.unknownSigner}</dd>
                  </div>
                )}
                <div>
                  <dt>{v.signedAt}</dt>
                  <dd>
                    <DateTime iso={signature.signedAt} locale={locale} />
                  </dd>
                </div>
              </dl>
              <ul class="verification-checks">
                <li data-ok={String(signature.integrityCheck === 'passed')}>
                  {v.integrity[signature.integrityCheck]}
                </li>
                {signature.documentTimestamp ? null : (
                  <li data-ok={String(signature.certificateStatus === 'valid')}>
                    {v.certificate[signature.certificateStatus] ?? v.certificate.unknown}
                  </li>
                )}
                <li data-ok={String(signature.timestampVerified)}>
                  {signature.timestampVerified ? v.timestamp.yes : v.timestamp.no}
                </li>
                {signature.documentTimestamp ? null : (
                  <li data-ok="true">{v.level(signature.level)}</li>
                )}
              </ul>
            </li>
          );
        })}
      </ol>
    </section>
  );
};

/** A link that opens nothing (unknown, used, expired…): why, and what to do. */
export const LinkOverPage: FC<{ t: Messages; reason: LinkOver | 'invalid' }> = ({ t, reason }) => {
  const words = t.signing.link[reason];
  return (
    <section class="card card-narrow problem signing-over" id="signing-over" data-reason={reason}>
      <h1>{words.title}</h1>
      <p>{words.text}</p>
    </section>
  );
};
