import type { Locale, Messages } from '@esign/shared/messages';
import type { Hono } from 'hono';
import type { FC } from 'hono/jsx';
import { originOf } from '../../audit/origin';
import { holdsPermission } from '../../auth/permissions';
import { type ContractCaller, callerOfPrincipal, contractReaders } from '../../contracts/access';
import { resendInvitation } from '../../contracts/invitations';
import { type ContractOverview, contractOverview, previewContract } from '../../contracts/overview';
import {
  CancelBody,
  ContractListQuery,
  contractPageSize,
  contractStatuses,
  DownloadQuery,
  type DownloadType,
} from '../../contracts/schemas';
import { cancelContract, downloadContract, listContractPage } from '../../contracts/service';
import type { ContractStatus } from '../../db/schema';
import { DomainError, errors, validationError } from '../../errors/domainError';
import type { Permission } from '../../tenancy/permissionCatalog';
import { appBase } from '../assets';
import {
  Badge,
  Card,
  CsrfField,
  DateFact,
  DateTime,
  Fact,
  Notice,
  PageHead,
  Pager,
  Table,
  type Tone,
} from '../components';
import type { Viewer } from '../context';
import { asAppContext, type WebContext, type WebEnv } from '../context';
import {
  DateRangeFields,
  FilterActions,
  KeywordField,
  listParameters,
  StatusSelect,
} from '../listFilters';
import { renderPage } from '../render';

/** The signed-in person of a page behind `requireViewer`. */
function viewerOf(c: WebContext): Viewer {
  const viewer = c.get('viewer');
  if (!viewer) throw errors.unauthorized();
  return viewer;
}

async function holdsAny(c: WebContext, permissions: Permission[]): Promise<boolean> {
  const principal = viewerOf(c).principal;
  for (const permission of permissions) {
    if (await holdsPermission(c.get('deps'), principal, permission)) return true;
  }
  return false;
}

/**
 * The viewer as the contract API sees its caller, after the API's own guard: a person who may
 * read no contract gets 403 (the "not found" page), as the API answers them.
 */
export async function contractCallerOf(
  c: WebContext,
  permissions: Permission[] = contractReaders,
): Promise<ContractCaller> {
  if (!(await holdsAny(c, permissions))) throw errors.forbidden();
  return callerOfPrincipal(c.get('deps'), viewerOf(c).principal, originOf(asAppContext(c)));
}

const contractsPath = `${appBase}/hop-dong`;
export const contractPath = (id: string) => `${contractsPath}/${encodeURIComponent(id)}`;
const downloadPath = (id: string, type: DownloadType) =>
  `${contractPath(id)}/tai-xuong?type=${type}`;

const contractStatusTones: Record<ContractStatus, Tone> = {
  draft: 'neutral',
  signing: 'info',
  completed: 'success',
  rejected: 'danger',
  expired: 'warning',
  cancelled: 'neutral',
};

const ContractStatusBadge: FC<{ t: Messages; status: ContractStatus }> = ({ t, status }) => (
  <Badge tone={contractStatusTones[status]}>{t.contracts.status[status]}</Badge>
);

const listNames = ['search', 'status', 'fromDate', 'toDate', 'sortBy', 'order', 'page', 'limit'];

async function listPage(c: WebContext, caller: ContractCaller) {
  const t = c.get('t');
  const locale = c.get('locale');
  const typed = listParameters(c, listNames);
  const parsed = ContractListQuery.safeParse(typed);
  const labels: Record<string, string> = {
    search: t.contracts.list.search,
    status: t.contracts.list.status,
    fromDate: t.contracts.list.fromDate,
    toDate: t.contracts.list.toDate,
    sortBy: t.contracts.list.sortBy,
    order: t.contracts.list.order,
    page: t.contracts.list.page,
    limit: t.contracts.list.limit,
  };
  const invalid = parsed.success ? null : (validationError(parsed.error).field ?? '');
  const page = parsed.success
    ? await listContractPage(c.get('deps'), caller, parsed.data)
    : { data: [], meta: { page: 1, limit: contractPageSize.default, total: 0, totalPages: 0 } };
  const l = t.contracts.list;
  return renderPage(
    c,
    { title: l.title, active: 'contracts', status: invalid === null ? 200 : 400 },
    <>
      <PageHead title={l.title} intro={l.intro} />
      <form method="get" action={contractsPath} class="card filters">
        <h2 class="visually-hidden">{l.filters}</h2>
        <KeywordField
          name="search"
          class="field field-wide"
          label={l.search}
          hint={l.searchHint}
          value={typed.search}
        />
        <StatusSelect
          label={l.status}
          any={l.anyStatus}
          statuses={contractStatuses}
          labels={t.contracts.status}
          selected={typed.status}
        />
        <DateRangeFields fromLabel={l.fromDate} toLabel={l.toDate} query={typed} />
        <div class="field">
          <label for="sortBy">{l.sortBy}</label>
          <select id="sortBy" name="sortBy">
            {(['createdAt', 'expiredAt', 'title', 'status'] as const).map((key) => (
              <option value={key} selected={(typed.sortBy ?? 'createdAt') === key}>
                {l.sorts[key]}
              </option>
            ))}
          </select>
        </div>
        <div class="field">
          <label for="order">{l.order}</label>
          <select id="order" name="order">
            {(['DESC', 'ASC'] as const).map((key) => (
              <option value={key} selected={(typed.order ?? 'DESC').toUpperCase() === key}>
                {l.orders[key]}
              </option>
            ))}
          </select>
        </div>
        <FilterActions t={t} clear={contractsPath} class="actions filter-actions" />
      </form>
      {invalid !== null ? (
        <Notice tone="danger">{l.invalidFilter(labels[invalid] ?? invalid)}</Notice>
      ) : null}
      <section class="card card-flush" aria-label={l.title}>
        {page.data.length === 0 ? (
          <p class="empty">{l.empty}</p>
        ) : (
          <Table
            class="stack contract-list"
            labels={[
              l.columns.title,
              l.columns.status,
              l.columns.signers,
              l.columns.expiredAt,
              l.columns.createdAt,
            ]}
          >
            {page.data.map((contract) => {
              const signers = contract.signers.filter((s) => s.role === 'signer');
              const signed = signers.filter((s) => s.status === 'signed').length;
              return (
                <tr>
                  <td data-label={l.columns.title} class="cell-title">
                    <a href={contractPath(contract.id)}>{contract.title}</a>
                  </td>
                  <td data-label={l.columns.status}>
                    <ContractStatusBadge t={t} status={contract.status} />
                  </td>
                  <td data-label={l.columns.signers}>{l.progress(signed, signers.length)}</td>
                  <td data-label={l.columns.expiredAt}>
                    <DateTime iso={contract.expiredAt} locale={locale} />
                  </td>
                  <td data-label={l.columns.createdAt}>
                    <DateTime iso={contract.createdAt} locale={locale} dateOnly />
                  </td>
                </tr>
              );
            })}
          </Table>
        )}
      </section>
      <Pager
        t={t}
        page={page.meta.page}
        pageSize={page.meta.limit}
        total={page.meta.total}
        path={contractsPath}
        query={typed}
      />
    </>,
  );
}

type Signer = ContractOverview['signers'][number];

function signerTone(signer: Signer): Tone {
  if (signer.role === 'viewer') return 'neutral';
  return { waiting: 'neutral', invited: 'warning', signed: 'success', rejected: 'danger' }[
    signer.status
  ] as Tone;
}

function signerLabel(t: Messages, signer: Signer): string {
  const states = t.contracts.detail.signerStatus;
  if (signer.role === 'viewer')
    return signer.status === 'invited' ? states.viewerInvited : states.viewer;
  return states[signer.status];
}

const SignerItem: FC<{
  t: Messages;
  locale: Locale;
  contractId: string;
  signer: Signer;
  mayResend: boolean;
  now: Date;
  csrfToken: string;
}> = ({ t, locale, contractId, signer, mayResend, now, csrfToken }) => {
  const d = t.contracts.detail;
  const availableAt = signer.resendAvailableAt === null ? null : new Date(signer.resendAvailableAt);
  return (
    <li class={`signer signer-${signer.role === 'viewer' ? 'viewer' : signer.status}`}>
      <div class="signer-head">
        <span class="signer-order">
          <span class="visually-hidden">{d.order(signer.order)}</span>
          <span aria-hidden="true">{signer.role === 'viewer' ? '—' : signer.order}</span>
        </span>
        <div class="signer-who">
          <strong>{signer.name}</strong>
          <span class="muted signer-email">{signer.email}</span>
          {signer.role === 'viewer' ? <span class="muted">{d.viewerRole}</span> : null}
        </div>
        <Badge tone={signerTone(signer)}>{signerLabel(t, signer)}</Badge>
      </div>
      <dl class="signer-facts">
        {signer.status === 'signed' ? (
          <>
            <DateFact label={d.signedAt} iso={signer.signedAt} locale={locale} />
            {signer.method ? <Fact label={d.method}>{d.methods[signer.method]}</Fact> : null}
            {signer.certificateSubject ? (
              <Fact label={d.certificate}>{signer.certificateSubject}</Fact>
            ) : null}
          </>
        ) : null}
        {signer.status === 'rejected' ? (
          <Fact label={d.rejectReason}>{signer.rejectReason ?? '—'}</Fact>
        ) : null}
        {signer.status === 'invited' ? (
          <DateFact label={d.invitedAt} iso={signer.invitedAt} locale={locale} />
        ) : null}
      </dl>
      {mayResend && availableAt !== null ? (
        availableAt > now ? (
          <p class="muted signer-resend">
            {d.resendLater} <DateTime iso={availableAt.toISOString()} locale={locale} />
          </p>
        ) : (
          <form
            method="post"
            action={`${contractPath(contractId)}/gui-lai-loi-moi`}
            class="signer-resend"
          >
            <CsrfField token={csrfToken} />
            <input type="hidden" name="signer" value={String(signer.position)} />
            <button
              type="submit"
              class="button button-secondary button-small"
              aria-label={d.resendFor(signer.name)}
            >
              {d.resend}
            </button>
          </form>
        )
      ) : null}
    </li>
  );
};

type TrailEvent = ContractOverview['auditTrail'][number];

/** The facts of an event worth a line: who signed or refused, why, which file, how many. */
function eventDetails(t: Messages, event: TrailEvent): string[] {
  const d = t.contracts.detail;
  const facts = event.details;
  const lines: string[] = [];
  if (typeof facts.signerName === 'string') lines.push(d.detailSigner(facts.signerName));
  if (typeof facts.method === 'string' && facts.method in d.methods) {
    lines.push(d.detailMethod(d.methods[facts.method as keyof typeof d.methods]));
  }
  if (typeof facts.reason === 'string') lines.push(d.detailReason(facts.reason));
  if (typeof facts.type === 'string' && facts.type in d.downloadTypes) {
    lines.push(d.detailDownload(d.downloadTypes[facts.type as DownloadType]));
  }
  if (Array.isArray(facts.invited)) lines.push(d.detailInvited(facts.invited.length));
  return lines;
}

/** The newest events the page lists; the audit PDF holds them all. */
const trailShown = 50;

/** One line of the listed trail: an event, or a run of one person's views folded into one. */
interface TrailLine {
  event: TrailEvent;
  times: number;
}

/** Newest first; consecutive views by the same person read as one line with their count. */
function trailLines(events: TrailEvent[]): TrailLine[] {
  const lines: TrailLine[] = [];
  for (const event of [...events].reverse()) {
    const last = lines.at(-1);
    if (
      last &&
      event.action === 'viewed' &&
      last.event.action === 'viewed' &&
      last.event.actor.name === event.actor.name
    ) {
      last.times += 1;
    } else {
      lines.push({ event, times: 1 });
    }
  }
  return lines;
}

const Trail: FC<{ t: Messages; locale: Locale; events: TrailEvent[] }> = ({
  t,
  locale,
  events,
}) => {
  const d = t.contracts.detail;
  const shown = events.slice(-trailShown);
  return (
    <Card id="trail" title={d.trail}>
      <p class="muted">{d.trailIntro(shown.length, events.length)}</p>
      <ol class="trail">
        {trailLines(shown).map(({ event, times }) => {
          const action = (d.actions as Record<string, string>)[event.action] ?? event.action;
          return (
            <li class={`trail-event trail-${event.action}`}>
              <DateTime iso={event.at} locale={locale} />
              <div class="trail-what">
                <strong>{times > 1 ? d.timesOver(action, times) : action}</strong>
                <span class="trail-actor">
                  {event.actor.kind === 'system' ? d.system : event.actor.name}
                </span>
              </div>
              <div class="trail-details">
                {eventDetails(t, event).map((line) => (
                  <span class="trail-detail">{line}</span>
                ))}
              </div>
            </li>
          );
        })}
      </ol>
    </Card>
  );
};

/** What a refused action says on the page, by the domain's code; anything else is an error page. */
const refusals: Record<string, 'resendTooSoon' | 'notInvited' | 'notCancellable'> = {
  INVITATION_RESENT_RECENTLY: 'resendTooSoon',
  SIGNER_NOT_INVITED: 'notInvited',
  CONTRACT_NOT_CANCELLABLE: 'notCancellable',
};

async function detailPage(c: WebContext, caller: ContractCaller, id: string) {
  const t = c.get('t');
  const locale = c.get('locale');
  const viewer = viewerOf(c);
  const deps = c.get('deps');
  const contract = await contractOverview(deps, caller, id);
  const [maySend, mayCancel] = await Promise.all([
    holdsPermission(deps, viewer.principal, 'contract:send'),
    holdsPermission(deps, viewer.principal, 'contract:cancel'),
  ]);
  const cancellable = mayCancel && (contract.status === 'draft' || contract.status === 'signing');
  const d = t.contracts.detail;
  const done = c.req.query('done');
  const problem = c.req.query('problem');
  const now = deps.clock.now();
  return renderPage(
    c,
    { title: contract.title, active: 'contracts', scripts: ['preview.js'] },
    <>
      <p class="breadcrumb">
        <a href={contractsPath}>{d.back}</a>
      </p>
      <div class="page-head">
        <div class="title-block">
          <h1>{contract.title}</h1>
          <ContractStatusBadge t={t} status={contract.status} />
        </div>
        <nav class="actions" aria-label={d.downloads}>
          <a class="button button-secondary" href={downloadPath(contract.id, 'original')}>
            {d.downloadOriginal}
          </a>
          {contract.signedFileUrl ? (
            <a class="button button-primary" href={downloadPath(contract.id, 'signed')}>
              {d.downloadSigned}
            </a>
          ) : null}
          <a class="button button-secondary" href={downloadPath(contract.id, 'audit')}>
            {d.downloadAudit}
          </a>
        </nav>
      </div>
      {done === 'resent' || done === 'cancelled' ? (
        <Notice tone="success">{d.done[done]}</Notice>
      ) : null}
      {problem === 'reason' ? <Notice tone="danger">{d.cancelReasonMissing}</Notice> : null}
      {problem === 'resendTooSoon' || problem === 'notInvited' || problem === 'notCancellable' ? (
        <Notice tone="warning">{d.problems[problem]}</Notice>
      ) : null}
      <div class="contract-layout">
        <div class="contract-main">
          <Card id="facts" title={d.facts}>
            <dl class="facts">
              <Fact label={d.status}>
                <ContractStatusBadge t={t} status={contract.status} />
              </Fact>
              <DateFact label={d.deadline} iso={contract.expiredAt} locale={locale} />
              <Fact label={d.creator}>
                {contract.createdBy.name}
                {contract.createdBy.email ? (
                  <span class="muted fact-note">{contract.createdBy.email}</span>
                ) : null}
              </Fact>
              <Fact label={d.type}>{contract.contractType.name}</Fact>
              <DateFact label={d.createdAt} iso={contract.createdAt} locale={locale} />
              <DateFact label={d.sentAt} iso={contract.sentAt} locale={locale} optional />
              <DateFact label={d.completedAt} iso={contract.completedAt} locale={locale} optional />
              <DateFact label={d.rejectedAt} iso={contract.rejectedAt} locale={locale} optional />
              <DateFact label={d.cancelledAt} iso={contract.cancelledAt} locale={locale} optional />
              {contract.cancelReason ? (
                <Fact label={d.cancelReason}>{contract.cancelReason}</Fact>
              ) : null}
              <Fact label={d.fileName}>{contract.fileName}</Fact>
              <Fact label={d.id}>
                <code class="hash">{contract.id}</code>
              </Fact>
              {contract.description ? (
                <Fact label={d.description}>{contract.description}</Fact>
              ) : null}
            </dl>
            <h3>{d.hashes}</h3>
            <dl class="facts facts-hashes">
              <Fact label={d.originalHash}>
                <code class="hash">{contract.originalSha256}</code>
              </Fact>
              {contract.newestVersion !== null && contract.newestVersion > 1 ? (
                <Fact label={d.newestHash(contract.newestVersion)}>
                  <code class="hash">{contract.newestSha256}</code>
                </Fact>
              ) : null}
              <Fact label={d.auditHead}>
                <code class="hash">{contract.auditHead}</code>
              </Fact>
            </dl>
          </Card>
          <Card id="signers" title={d.signers}>
            <p class="muted">{d.signersIntro}</p>
            <ol class="signers">
              {[
                ...contract.signers.filter((signer) => signer.role === 'signer'),
                ...contract.signers.filter((signer) => signer.role === 'viewer'),
              ].map((signer) => (
                <SignerItem
                  t={t}
                  locale={locale}
                  contractId={contract.id}
                  signer={signer}
                  mayResend={maySend}
                  now={now}
                  csrfToken={viewer.csrfToken}
                />
              ))}
            </ol>
          </Card>
          {contract.existingSignatures.length > 0 ? (
            <Card id="existing" title={d.existing}>
              <p class="muted">{d.existingIntro}</p>
              <Table
                class="stack"
                labels={[
                  d.existingColumns.signer,
                  d.existingColumns.signedAt,
                  d.existingColumns.result,
                  d.existingColumns.certificate,
                ]}
              >
                {contract.existingSignatures.map((signature) => (
                  <tr>
                    <td data-label={d.existingColumns.signer}>
                      {signature.signerName ?? d.unknownSigner}
                    </td>
                    <td data-label={d.existingColumns.signedAt}>
                      <DateTime iso={signature.signedAt} locale={locale} />
                    </td>
                    <td data-label={d.existingColumns.result}>
                      <Badge tone={signature.isValid ? 'success' : 'danger'}>
                        {signature.isValid ? d.existingValid : d.existingInvalid}
                      </Badge>
                    </td>
                    <td data-label={d.existingColumns.certificate} class="cell-wrap">
                      {signature.certificateSubject ?? '—'}
                    </td>
                  </tr>
                ))}
              </Table>
            </Card>
          ) : null}
        </div>
        <div class="contract-side">
          <Card id="preview" title={d.preview} class="contract-preview">
            <p class="muted">{d.previewNote}</p>
            <div
              class="pdf-preview"
              data-pdf-src={`${contractPath(contract.id)}/xem-truoc`}
              data-pdf-title={contract.title}
            >
              <a href={downloadPath(contract.id, contract.signedFileUrl ? 'signed' : 'original')}>
                {d.previewFallback}
              </a>
            </div>
          </Card>
          {cancellable ? (
            <section class="card card-danger" id="cancel" aria-labelledby="cancel-title">
              <h2 id="cancel-title">{d.cancel}</h2>
              <p class="muted">{d.cancelIntro}</p>
              <form
                method="post"
                action={`${contractPath(contract.id)}/huy`}
                class="form-stack"
                data-confirm={d.cancelConfirm}
              >
                <CsrfField token={viewer.csrfToken} />
                <label for="cancel-reason">{d.cancelReasonLabel}</label>
                <textarea
                  id="cancel-reason"
                  name="reason"
                  required
                  maxlength={1000}
                  aria-describedby="cancel-reason-hint"
                />
                <span id="cancel-reason-hint" class="hint">
                  {d.cancelReasonHint}
                </span>
                <div class="actions">
                  <button type="submit" class="button button-danger">
                    {d.cancelSubmit}
                  </button>
                </div>
              </form>
            </section>
          ) : null}
        </div>
      </div>
      <Trail t={t} locale={locale} events={contract.auditTrail} />
    </>,
  );
}

/** The contract of a form's answer, with a notice; 303 so that a reload does not post again. */
const backTo = (c: WebContext, id: string, notice: string) =>
  c.redirect(`${contractPath(id)}?${notice}`, 303);

/** Runs a page's state change; a refusal the page can explain comes back as its notice. */
async function acting(c: WebContext, id: string, act: () => Promise<string>) {
  try {
    return backTo(c, id, await act());
  } catch (error) {
    const refusal = error instanceof DomainError ? refusals[error.code] : undefined;
    if (refusal) return backTo(c, id, `problem=${refusal}`);
    throw error;
  }
}

/** `/hop-dong` and `/hop-dong/{id}`: the contracts the viewer may see, as the contract API. */
export function contractsPages(app: Hono<WebEnv>): void {
  app.get('/hop-dong', async (c) => listPage(c, await contractCallerOf(c)));

  app.get('/hop-dong/:id', async (c) =>
    detailPage(c, await contractCallerOf(c), c.req.param('id')),
  );

  app.get('/hop-dong/:id/tai-xuong', async (c) => {
    const caller = await contractCallerOf(c);
    const query = DownloadQuery.safeParse(c.req.query());
    if (!query.success) throw validationError(query.error);
    return downloadContract(c.get('deps'), caller, c.req.param('id'), query.data.type);
  });

  app.get('/hop-dong/:id/xem-truoc', async (c) =>
    previewContract(c.get('deps'), await contractCallerOf(c), c.req.param('id')),
  );

  app.post('/hop-dong/:id/gui-lai-loi-moi', async (c) => {
    const caller = await contractCallerOf(c, ['contract:send']);
    const id = c.req.param('id');
    const signer = (await c.req.parseBody()).signer;
    if (typeof signer !== 'string' || !/^\d{1,3}$/.test(signer)) {
      throw errors.validation('signer', 'signer: must be the position of a signer');
    }
    return acting(c, id, async () => {
      await resendInvitation(c.get('deps'), caller, id, Number(signer));
      return 'done=resent';
    });
  });

  app.post('/hop-dong/:id/huy', async (c) => {
    const caller = await contractCallerOf(c, ['contract:cancel']);
    const id = c.req.param('id');
    const body = CancelBody.safeParse({ reason: (await c.req.parseBody()).reason });
    if (!body.success) return backTo(c, id, 'problem=reason#cancel');
    return acting(c, id, async () => {
      await cancelContract(c.get('deps'), caller, id, body.data.reason);
      return 'done=cancelled';
    });
  });
}
