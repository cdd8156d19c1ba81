import type { Locale, Messages } from '@esign/shared/messages';
import type { Hono } from 'hono';
import type { FC } from 'hono/jsx';
import { originOf } from '../../audit/origin';
import { downloadDossierAudit, downloadFileInScope } from '../../dossiers/downloads';
import type { FileItem } from '../../dossiers/fileItems';
import {
  type DossierListFilter,
  DossierListQuery,
  DossierStatusSchema,
} from '../../dossiers/schemas';
import { ensurePermissionOrSigner } from '../../dossiers/scope';
import {
  type DossierListItem,
  type DossierOverview,
  dossierOverview,
  listDossiers,
  type TurnOverview,
} from '../../dossiers/service';
import type { HistoryItemValue } from '../../tasks/schemas';
import { actionableTaskOf, dossierHistory } from '../../tasks/service';
import { appBase } from '../assets';
import {
  Badge,
  Card,
  DateFact,
  DateTime,
  Fact,
  Notice,
  PageHead,
  Pager,
  Table,
  type Tone,
} from '../components';
import { asAppContext, type WebContext, type WebEnv } from '../context';
import {
  DateRangeFields,
  dayRange,
  FilterActions,
  FilterForm,
  KeywordField,
  listParameters,
  MoreFilters,
  RefusedFilter,
  StatusSelect,
} from '../listFilters';
import { renderPage } from '../render';
import { notFoundPage as notFound } from './problems';

/**
 * `/ho-so`: the dossiers the viewer may see, with the filters of the API's lists; `/ho-so/{id}`:
 * one dossier with its files (inline preview), turns, history and downloads; `/folders?id=`,
 * the deep link of the spec. Every read goes through the dossier domain with the viewer's
 * principal, so a page shows what the API would; anything else is the one "not found" page.
 */

const dossierStatuses = DossierStatusSchema.options;
type DossierStatus = (typeof dossierStatuses)[number];

const statusTones: Record<DossierStatus, Tone> = {
  PENDING: 'neutral',
  PENDING_SIGN: 'info',
  IN_PROGRESS: 'info',
  COMPLETED: 'success',
  REJECTED: 'danger',
  EXPIRED: 'warning',
};

const turnTones: Record<TurnOverview['state'], Tone> = {
  WAITING: 'neutral',
  ACTIVE: 'warning',
  SIGNED: 'success',
  REJECTED: 'danger',
  EXPIRED: 'warning',
  CANCELLED: 'neutral',
};

const historyTones: Record<HistoryItemValue['action'], Tone> = {
  NEXT: 'success',
  REJECT: 'danger',
  OVERDUE: 'warning',
};

export const dossierPath = (folderId: number) => `${appBase}/ho-so/${folderId}`;
const filePath = (folderId: number, fileUuid: string) =>
  `${dossierPath(folderId)}/tep/${encodeURIComponent(fileUuid)}`;

/** A positive integer id from a path or query, or null (then the page is "not found"). */
export function idOf(value: string | undefined): number | null {
  if (value === undefined || !/^[1-9]\d{0,14}$/.test(value)) return null;
  return Number(value);
}

export const DossierStatusBadge: FC<{ t: Messages; status: DossierStatus }> = ({ t, status }) => (
  <Badge tone={statusTones[status]}>{t.dossiers.status[status]}</Badge>
);

/** Signed turns out of all, as text and as a bar. */
export const Progress: FC<{ t: Messages; signed: number; required: number }> = ({
  t,
  signed,
  required,
}) => (
  <span class="progress">
    <progress
      max={Math.max(required, 1)}
      value={signed}
      aria-label={t.dossiers.progressLabel(signed, required)}
    />
    <span class="progress-text">{t.dossiers.progress(signed, required)}</span>
  </span>
);

function kilobytes(size: number, locale: Locale): string {
  return new Intl.NumberFormat(locale === 'vi' ? 'vi-VN' : 'en-GB', {
    maximumFractionDigits: 1,
  }).format(size / 1024);
}

/** A file item, with the number of its newest version where the page knows it. */
export type ShownFile = FileItem & { version?: number };

/** One file: what it is, its download, and an inline preview of a PDF (preview.js draws it). */
const FileCard: FC<{ t: Messages; locale: Locale; folderId: number; file: ShownFile }> = ({
  t,
  locale,
  folderId,
  file,
}) => {
  const texts = t.dossiers.files;
  const download = filePath(folderId, file.fileUuid);
  const main = file.type === 'MAIN';
  const signed = main && file.version !== undefined && file.version > 1;
  const state = !main
    ? texts.attachmentVersion
    : file.version === undefined
      ? null
      : signed
        ? texts.signedVersion(file.version)
        : texts.original;
  const label =
    !main || file.version === undefined
      ? texts.download
      : signed
        ? texts.downloadSigned
        : texts.downloadOriginal;
  return (
    <article class="file-card">
      <header class="file-head">
        <div class="file-about">
          <h3>{file.title}</h3>
          <p class="muted file-meta">
            <Badge tone={main ? 'info' : 'neutral'}>{main ? texts.main : texts.attachment}</Badge>
            {state ? <span> {state}</span> : null}
            {file.size !== undefined ? (
              <span> · {texts.size(kilobytes(file.size, locale))}</span>
            ) : null}
          </p>
        </div>
        <a class="button button-secondary" href={download} download>
          {label}
        </a>
      </header>
      {file.mimeType === undefined || file.mimeType === 'application/pdf' ? (
        <div
          class="pdf-preview"
          data-pdf-src={`${download}/xem`}
          data-pdf-title={texts.previewTitle(file.title)}
        >
          <p class="muted">
            {texts.previewFallback} <a href={download}>{file.title}</a>
          </p>
        </div>
      ) : null}
    </article>
  );
};

/** The files of a dossier, signed documents first, each with its preview. */
export const FileList: FC<{
  t: Messages;
  locale: Locale;
  folderId: number;
  files: ShownFile[];
  attachments: ShownFile[];
}> = ({ t, locale, folderId, files, attachments }) => {
  const all = [...files, ...attachments];
  if (all.length === 0) return <p class="muted">{t.dossiers.files.none}</p>;
  return (
    <div class="file-list">
      {all.map((file) => (
        <FileCard t={t} locale={locale} folderId={folderId} file={file} />
      ))}
    </div>
  );
};

/** History records, oldest first: when, which step, what was done, by whom, with what comment. */
export const HistoryTable: FC<{
  t: Messages;
  locale: Locale;
  items: HistoryItemValue[];
  /** What to say when nobody has acted yet. */
  empty: string;
}> = ({ t, locale, items, empty }) => {
  const texts = t.dossiers.history;
  if (items.length === 0) return <p class="muted">{empty}</p>;
  return (
    <Table
      class="stack history"
      labels={[texts.at, texts.step, texts.action, texts.actor, texts.comment]}
    >
      {items.map((item) => (
        <tr>
          <td data-label={texts.at}>
            <DateTime iso={item.actionAt} locale={locale} />
          </td>
          <td data-label={texts.step}>{item.stepName}</td>
          <td data-label={texts.action}>
            <Badge tone={historyTones[item.action]}>
              {item.action === 'OVERDUE' ? texts.overdue : item.actionLabel}
            </Badge>
          </td>
          <td data-label={texts.actor}>
            <span>
              {item.actorName ?? item.actorUsername ?? item.actorEmail ?? '—'}
              {item.actorUsername && item.actorName ? (
                <span class="muted"> ({item.actorUsername})</span>
              ) : null}
            </span>
          </td>
          <td data-label={texts.comment}>
            {item.comment ? <span class="comment">{item.comment}</span> : '—'}
          </td>
        </tr>
      ))}
    </Table>
  );
};

/**
 * Who a turn is for, in words: the name, else the identity the lookup shows; a role turn
 * nobody has taken yet is its role's.
 */
function turnHolder(t: Messages, turn: TurnOverview): { name: string; note: string | null } {
  const { signer } = turn;
  const name =
    turn.name ??
    signer.username ??
    signer.email ??
    signer.phone ??
    signer.taxCode ??
    signer.identityNumber;
  if (name) {
    const note = signer.roleName
      ? t.dossiers.steps.role(signer.roleName)
      : turn.name && signer.email
        ? signer.email
        : null;
    return { name, note };
  }
  return signer.roleName
    ? { name: t.dossiers.steps.role(signer.roleName), note: t.dossiers.steps.anyHolder }
    : { name: '—', note: null };
}

/** The turns grouped by step, in signing order, each with its state. */
const StepList: FC<{ t: Messages; locale: Locale; turns: TurnOverview[] }> = ({
  t,
  locale,
  turns,
}) => {
  const texts = t.dossiers.steps;
  if (turns.length === 0) return <p class="muted">{texts.none}</p>;
  const steps: TurnOverview[][] = [];
  for (const turn of turns) {
    const last = steps.at(-1);
    if (last && last[0]!.stepPosition === turn.stepPosition) last.push(turn);
    else steps.push([turn]);
  }
  return (
    <ol class="steps">
      {steps.map((group, index) => {
        const first = group[0]!;
        return (
          <li class="step">
            <h3>{texts.step(index + 1, first.signer.stepName)}</h3>
            <p class="muted step-kind">{t.tasks.signType[first.signType]}</p>
            <ul class="turns">
              {group.map((turn) => {
                const holder = turnHolder(t, turn);
                return (
                  <li class="turn">
                    <span class="turn-holder">
                      <span class="turn-name">{holder.name}</span>
                      {holder.note ? <span class="muted turn-note">{holder.note}</span> : null}
                    </span>
                    <span class="turn-state">
                      <Badge tone={turnTones[turn.state]}>{t.dossiers.turnState[turn.state]}</Badge>
                      {turn.actedAt ? <DateTime iso={turn.actedAt} locale={locale} /> : null}
                    </span>
                  </li>
                );
              })}
            </ul>
          </li>
        );
      })}
    </ol>
  );
};

/** The filter form of the list; the less used filters fold away unless one of them is set. */
const DossierFilters: FC<{ t: Messages; query: Record<string, string> }> = ({ t, query }) => {
  const texts = t.dossiers.list;
  const more =
    query.documentId !== undefined || query.fromDate !== undefined || query.toDate !== undefined;
  return (
    <FilterForm action={`${appBase}/ho-so`} query={query}>
      <div class="filter-row">
        <KeywordField label={texts.keyword} hint={texts.keywordHint} value={query.keyword} />
        <StatusSelect
          label={texts.status}
          any={texts.allStatuses}
          statuses={dossierStatuses}
          labels={t.dossiers.status}
          selected={query.status?.toUpperCase()}
        />
        <FilterActions t={t} clear={`${appBase}/ho-so`} />
      </div>
      <MoreFilters label={texts.moreFilters} open={more}>
        <div class="filters">
          <div class="field">
            <label for="documentId">{texts.documentId}</label>
            <input
              id="documentId"
              name="documentId"
              type="text"
              value={query.documentId ?? ''}
              maxlength={255}
            />
          </div>
          <DateRangeFields fromLabel={texts.fromDate} toLabel={texts.toDate} query={query} />
        </div>
      </MoreFilters>
    </FilterForm>
  );
};

const DossierRows: FC<{ t: Messages; locale: Locale; items: DossierListItem[] }> = ({
  t,
  locale,
  items,
}) => {
  const columns = t.dossiers.list.columns;
  return (
    <Table
      wrap="table-wrap card card-flush"
      class="stack dossier-table"
      labels={[columns.dossier, columns.status, columns.progress, columns.current, columns.created]}
    >
      {items.map((item) => (
        <tr>
          <td data-label={columns.dossier} class="cell-main">
            <a href={dossierPath(item.folderId)} class="row-title">
              {item.documentTitle}
            </a>
            <span class="muted row-sub">
              {item.documentId || t.dossiers.webCreated} · {item.processName}
            </span>
          </td>
          <td data-label={columns.status}>
            <DossierStatusBadge t={t} status={item.status} />
          </td>
          <td data-label={columns.progress}>
            <Progress t={t} signed={item.signedCount} required={item.requiredCount} />
          </td>
          <td data-label={columns.current} class={item.currentStep ? undefined : 'cell-none'}>
            {item.currentStep ? (
              <span>
                {item.currentStep.name}
                {item.currentStep.expireAt ? (
                  <span class="muted row-sub">
                    {t.dossiers.list.due}{' '}
                    <DateTime iso={item.currentStep.expireAt} locale={locale} />
                  </span>
                ) : null}
              </span>
            ) : (
              <span class="muted">{t.dossiers.list.noCurrent}</span>
            )}
          </td>
          <td data-label={columns.created}>
            <DateTime iso={item.createdAt} locale={locale} />
          </td>
        </tr>
      ))}
    </Table>
  );
};

const listNames = ['keyword', 'status', 'documentId', 'fromDate', 'toDate', 'page', 'pageSize'];

async function listPage(c: WebContext): Promise<Response> {
  const viewer = c.get('viewer')!;
  const deps = c.get('deps');
  const t = c.get('t');
  const locale = c.get('locale');
  await ensurePermissionOrSigner(deps, viewer.principal, 'document:view');
  const query = listParameters(c, listNames);
  const parsed = DossierListQuery.safeParse({
    ...query,
    ...dayRange(query),
  });
  const texts = t.dossiers.list;
  const filter: DossierListFilter | null = parsed.success ? parsed.data : null;
  const result = filter ? await listDossiers(deps, viewer.principal, filter) : null;
  const filtered = Object.keys(query).some((name) => name !== 'page' && name !== 'pageSize');
  return renderPage(
    c,
    { title: texts.title, active: 'dossiers', status: parsed.success ? 200 : 400 },
    <section>
      <PageHead title={texts.title} intro={texts.intro} />
      <DossierFilters t={t} query={query} />
      {parsed.success ? null : (
        <RefusedFilter
          t={t}
          error={parsed.error}
          texts={texts}
          labels={{ status: texts.status, documentId: texts.documentId }}
        />
      )}
      {result && result.items.length > 0 ? (
        <>
          <DossierRows t={t} locale={locale} items={result.items} />
          <Pager
            t={t}
            page={result.page}
            pageSize={result.pageSize}
            total={result.total}
            more={result.more}
            next={result.next}
            path={`${appBase}/ho-so`}
            query={query}
          />
        </>
      ) : result ? (
        <p class="card empty">{filtered ? texts.empty : texts.emptyAll}</p>
      ) : null}
    </section>,
  );
}

async function detailPage(c: WebContext, folderId: number): Promise<Response> {
  const viewer = c.get('viewer')!;
  const deps = c.get('deps');
  const t = c.get('t');
  const locale = c.get('locale');
  await ensurePermissionOrSigner(deps, viewer.principal, 'document:view');
  const dossier: DossierOverview = await dossierOverview(deps, viewer.principal, folderId);
  const history = await dossierHistory(deps, viewer.principal, { folderId });
  const myTask = await actionableTaskOf(deps, viewer.principal, folderId);
  const texts = t.dossiers.detail;
  return renderPage(
    c,
    { title: dossier.documentTitle, active: 'dossiers', scripts: ['preview.js'] },
    <section>
      <nav class="breadcrumb" aria-label={texts.breadcrumbLabel}>
        <a href={`${appBase}/ho-so`}>{texts.breadcrumb}</a>
      </nav>
      <PageHead
        title={dossier.documentTitle}
        intro={`${dossier.documentId || t.dossiers.webCreated} · ${dossier.processName}`}
      >
        <DossierStatusBadge t={t} status={dossier.status} />
      </PageHead>
      {myTask !== null ? (
        <Notice tone="warning">
          {texts.yourTask}{' '}
          <a href={`${appBase}/xu-ly-cong-viec/${myTask}`} class="notice-link">
            {texts.openTask}
          </a>
        </Notice>
      ) : null}
      <div class="detail-grid">
        <div class="detail-main">
          <Card id="files" title={t.dossiers.files.title}>
            <FileList
              t={t}
              locale={locale}
              folderId={dossier.folderId}
              files={dossier.files}
              attachments={dossier.attachments}
            />
          </Card>
          <Card id="steps" title={t.dossiers.steps.title}>
            <StepList t={t} locale={locale} turns={dossier.turns} />
          </Card>
          <Card id="history" title={t.dossiers.history.title}>
            <HistoryTable
              t={t}
              locale={locale}
              items={history.history}
              empty={t.dossiers.history.none}
            />
          </Card>
        </div>
        <aside class="detail-side">
          <Card id="facts" title={texts.facts}>
            <dl class="facts facts-single">
              {dossier.documentId ? (
                <Fact label={texts.documentId}>{dossier.documentId}</Fact>
              ) : null}
              <Fact label={texts.process}>{dossier.processName}</Fact>
              {dossier.transactionId ? (
                <Fact label={texts.transactionId}>{dossier.transactionId}</Fact>
              ) : null}
              {dossier.ecmClassCode ? (
                <Fact label={texts.ecmClassCode}>{dossier.ecmClassCode}</Fact>
              ) : null}
              <Fact label={texts.progress}>
                <Progress t={t} signed={dossier.signedCount} required={dossier.requiredCount} />
              </Fact>
              <DateFact label={texts.createdAt} iso={dossier.createdAt} locale={locale} />
              <DateFact label={texts.startedAt} iso={dossier.startedAt} locale={locale} optional />
              <DateFact
                label={texts.completedAt}
                iso={dossier.completedAt}
                locale={locale}
                optional
              />
              <DateFact
                label={texts.rejectedAt}
                iso={dossier.rejectedAt}
                locale={locale}
                optional
              />
              <DateFact label={texts.expiredAt} iso={dossier.expiredAt} locale={locale} optional />
            </dl>
          </Card>
          <Card id="downloads" title={texts.downloads}>
            <p class="muted">{texts.auditHint}</p>
            <a
              class="button button-secondary"
              href={`${dossierPath(dossier.folderId)}/nhat-ky`}
              download
            >
              {texts.auditTrail}
            </a>
          </Card>
        </aside>
      </div>
    </section>,
  );
}

export function dossierPages(app: Hono<WebEnv>): void {
  app.get('/ho-so', (c) => listPage(c));

  app.get('/ho-so/:id', async (c) => {
    const id = idOf(c.req.param('id'));
    if (id === null) return notFound(c);
    return detailPage(c, id);
  });

  // A file of the dossier, its newest version: downloaded, or read by the page's preview.
  const file = (viewed: boolean) => async (c: WebContext) => {
    const id = idOf(c.req.param('id'));
    const fileUuid = c.req.param('fileUuid') ?? '';
    if (id === null || fileUuid.length > 64) return notFound(c);
    const viewer = c.get('viewer')!;
    await ensurePermissionOrSigner(c.get('deps'), viewer.principal, 'document:view');
    return downloadFileInScope(
      c.get('deps'),
      viewer.principal,
      { fileUuid, dossierId: id, viewed },
      { origin: originOf(asAppContext(c)), via: 'web' },
    );
  };
  app.get('/ho-so/:id/tep/:fileUuid', file(false));
  app.get('/ho-so/:id/tep/:fileUuid/xem', file(true));

  app.get('/ho-so/:id/nhat-ky', async (c) => {
    const id = idOf(c.req.param('id'));
    if (id === null) return notFound(c);
    const viewer = c.get('viewer')!;
    await ensurePermissionOrSigner(c.get('deps'), viewer.principal, 'document:view');
    return downloadDossierAudit(c.get('deps'), viewer.principal, id, originOf(asAppContext(c)));
  });

  // The spec's deep link: the dossier page decides whether the viewer may see it.
  app.get('/folders', (c) => {
    const id = idOf(c.req.query('id'));
    if (id === null) return notFound(c);
    return c.redirect(dossierPath(id), 303);
  });
}
