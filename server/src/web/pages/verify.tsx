import type { Locale, Messages } from '@esign/shared/messages';
import type { FC } from 'hono/jsx';
import type { PdfVerification, SignatureVerification } from '../../signing/verification';
import { appBase } from '../assets';
import { Badge, DateTime, Fact, Notice, type Tone } from '../components';
import type { WebContext } from '../context';
import { renderPage } from '../render';

/**
 * `/xac-thuc`: the upload form, and the verification engine's answer for the uploaded file in
 * words a person who knows nothing of PAdES understands, signature by signature. The route
 * (verifyRoutes.ts) receives the file and removes it; these only show.
 */

/** Why a check did not run: a key of the page's texts, with the value some of them need. */
export type VerifyProblem =
  | { kind: 'missing' | 'notPdf' | 'unreadable' | 'malformed' | 'busy' }
  | { kind: 'tooLarge'; megabytes: number }
  | { kind: 'rateLimited'; seconds: number };

export interface VerifiedFile {
  fileName: string;
  checkedAt: string;
  verification: PdfVerification;
}

function problemText(t: Messages, problem: VerifyProblem): string {
  switch (problem.kind) {
    case 'tooLarge':
      return t.verify.errors.tooLarge(problem.megabytes);
    case 'rateLimited':
      return t.verify.errors.rateLimited(problem.seconds);
    default:
      return t.verify.errors[problem.kind];
  }
}

const UploadForm: FC<{ t: Messages; megabytes: number; problem?: VerifyProblem }> = ({
  t,
  megabytes,
  problem,
}) => (
  <section class="card verify-upload" aria-label={t.verify.fileLabel}>
    <p>{t.verify.intro}</p>
    <p class="muted">{t.verify.privacy}</p>
    {problem ? <Notice tone="danger">{problemText(t, problem)}</Notice> : null}
    <form
      method="post"
      action={`${appBase}/xac-thuc`}
      enctype="multipart/form-data"
      class="form-stack"
    >
      <label for="verify-file">{t.verify.fileLabel}</label>
      <input
        id="verify-file"
        name="file"
        type="file"
        accept="application/pdf,.pdf"
        required
        aria-describedby="verify-file-hint"
      />
      <p id="verify-file-hint" class="muted field-hint">
        {t.verify.fileHint(megabytes)}
      </p>
      <div class="actions">
        <button type="submit" class="button button-primary">
          {t.verify.submit}
        </button>
      </div>
    </form>
  </section>
);

/** One line of "what was checked": a labelled mark (never colour alone) and the words. */
const Check: FC<{ t: Messages; tone: Tone; text: string }> = ({ t, tone, text }) => (
  <li class={`verify-check verify-check-${tone}`}>
    <Badge tone={tone}>{t.verify.mark[tone === 'neutral' ? 'info' : tone]}</Badge>
    <span>{text}</span>
  </li>
);

const isDocumentTimestamp = (signature: SignatureVerification) =>
  signature.subFilter === 'ETSI.RFC3161';

const SignatureCard: FC<{
  t: Messages;
  locale: Locale;
  signature: SignatureVerification;
  index: number;
  timestampIndex: number;
}> = ({ t, locale, signature, index, timestampIndex }) => {
  const v = t.verify;
  const certificate = signature.certificate;
  const headingId = `verify-signature-${index}`;
  const modifiedTone: Tone =
    signature.modifiedAfterSigning === 'none'
      ? 'success'
      : signature.modifiedAfterSigning === 'allowed'
        ? 'info'
        : 'danger';
  const kinds = (certificate?.identifiers ?? []).map((kind) => v.identity.kinds[kind] ?? kind);
  return (
    <article class="card verify-signature" aria-labelledby={headingId}>
      <div class="page-head">
        <h2 id={headingId}>
          {isDocumentTimestamp(signature)
            ? v.timestampHeading(timestampIndex)
            : v.signatureHeading(index)}
        </h2>
        <Badge tone={signature.isValid ? 'success' : 'danger'}>
          {signature.isValid ? v.badge.valid : v.badge.invalid}
        </Badge>
      </div>
      <dl class="facts">
        <Fact label={v.signer}>{signature.signerName ?? v.unknown}</Fact>
        <Fact label={v.signedAt}>
          <DateTime iso={signature.signedAt} locale={locale} />
        </Fact>
        <Fact label={v.subject}>{certificate?.subject ?? v.unknown}</Fact>
        <Fact label={v.issuer}>{certificate?.issuer ?? v.unknown}</Fact>
        {certificate ? (
          <Fact label={v.validity}>
            <DateTime iso={certificate.validFrom} locale={locale} dateOnly /> –{' '}
            <DateTime iso={certificate.validTo} locale={locale} dateOnly />
          </Fact>
        ) : null}
        <Fact label={v.field}>{signature.fieldName}</Fact>
      </dl>
      <p class="verify-level">
        <strong>{v.level}: </strong>
        {v.levels[signature.level]}
      </p>
      <h3>{v.checks}</h3>
      <ul class="verify-checks">
        <Check
          t={t}
          tone={signature.integrityCheck === 'passed' ? 'success' : 'danger'}
          text={v.integrity[signature.integrityCheck]}
        />
        <Check
          t={t}
          tone={
            signature.certificateStatus === 'valid'
              ? 'success'
              : signature.certificateStatus === 'unknown'
                ? 'warning'
                : 'danger'
          }
          text={v.certificate[signature.certificateStatus]}
        />
        <Check
          t={t}
          tone={signature.timestampVerified ? 'success' : 'warning'}
          text={signature.timestampVerified ? v.timestamp.verified : v.timestamp.missing}
        />
        <Check
          t={t}
          tone={signature.coversWholeDocument ? 'success' : modifiedTone}
          text={signature.coversWholeDocument ? v.coverage.whole : v.coverage.partial}
        />
        <Check t={t} tone={modifiedTone} text={v.modified[signature.modifiedAfterSigning]} />
      </ul>
      {isDocumentTimestamp(signature) ? null : (
        <div class="verify-identity">
          <h3>{v.identity.label}</h3>
          <p>{kinds.length > 0 ? v.identity.bound(kinds.join(', ')) : v.identity.none}</p>
          <p class="muted">{v.identity.note}</p>
        </div>
      )}
      {signature.changes.length > 0 ? (
        <div class="verify-changes">
          <h3>{v.changes}</h3>
          <ul>
            {signature.changes.map((change) => (
              <li>{v.changeLine(change.revision, change.what)}</li>
            ))}
          </ul>
        </div>
      ) : null}
      {signature.problems.length > 0 || signature.subFilter ? (
        <details class="verify-technical">
          <summary>{v.technical}</summary>
          <ul lang="en">
            {signature.subFilter ? <li>SubFilter: {signature.subFilter}</li> : null}
            {certificate ? <li>Serial: {certificate.serialNumber}</li> : null}
            {signature.problems.map((problem) => (
              <li>{problem}</li>
            ))}
          </ul>
        </details>
      ) : null}
    </article>
  );
};

const Result: FC<{ t: Messages; locale: Locale; verified: VerifiedFile }> = ({
  t,
  locale,
  verified,
}) => {
  const { signatures, isValid } = verified.verification;
  const verdict =
    signatures.length === 0
      ? t.verify.verdict.none
      : isValid
        ? t.verify.verdict.valid
        : t.verify.verdict.invalid;
  let timestamps = 0;
  let signed = 0;
  return (
    <>
      <section class="card verify-result" aria-labelledby="verify-result-title">
        <div class="page-head">
          <h2 id="verify-result-title">{t.verify.resultTitle}</h2>
          {signatures.length === 0 ? (
            <Badge tone="warning">{t.verify.badge.none}</Badge>
          ) : (
            <Badge tone={isValid ? 'success' : 'danger'}>
              {isValid ? t.verify.badge.valid : t.verify.badge.invalid}
            </Badge>
          )}
        </div>
        <Notice tone={isValid ? 'success' : signatures.length === 0 ? 'warning' : 'danger'}>
          {verdict}
        </Notice>
        <dl class="facts">
          <Fact label={t.verify.fileName}>{verified.fileName}</Fact>
          <Fact label={t.verify.signatureCount}>{String(signatures.length)}</Fact>
          <Fact label={t.verify.checkedAt}>
            <DateTime iso={verified.checkedAt} locale={locale} />
          </Fact>
        </dl>
      </section>
      {signatures.map((signature) => {
        if (isDocumentTimestamp(signature)) timestamps += 1;
        else signed += 1;
        return (
          <SignatureCard
            t={t}
            locale={locale}
            signature={signature}
            index={signed}
            timestampIndex={timestamps}
          />
        );
      })}
      <p>
        <a class="button button-secondary" href={`${appBase}/xac-thuc`}>
          {t.verify.again}
        </a>
      </p>
    </>
  );
};

/** The page: the form, with a problem above it, or the result of a file below it. */
export function verifyPage(
  c: WebContext,
  options: {
    megabytes: number;
    problem?: VerifyProblem;
    verified?: VerifiedFile;
    status?: 200 | 400 | 413 | 415 | 422 | 429 | 503;
  },
): Response {
  const t = c.get('t');
  return renderPage(
    c,
    { title: t.verify.title, active: 'verify', status: options.status ?? 200 },
    <>
      <div class="page-head">
        <h1>{t.verify.title}</h1>
      </div>
      {options.verified ? (
        <Result t={t} locale={c.get('locale')} verified={options.verified} />
      ) : (
        <UploadForm t={t} megabytes={options.megabytes} problem={options.problem} />
      )}
    </>,
  );
}
