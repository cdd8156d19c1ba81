/**
 * Every agent window (approval, consent, PIN, settings) is this one page, drawn for the request
 * the shell gives it. Text from pages (origins, titles, names) only ever goes in as textContent.
 */
import type { AgentShellApi, Language, ModuleView, SettingsChange, WindowRequest } from '../api';
import { SHELL_API_NAME } from '../api';
import { type MessageKey, t } from '../i18n';

const api = (window as unknown as Record<typeof SHELL_API_NAME, AgentShellApi>)[SHELL_API_NAME];
const root = document.getElementById('root')!;

type Child = Node | string;

function el<K extends keyof HTMLElementTagNameMap>(
  tag: K,
  props: Partial<HTMLElementTagNameMap[K]> & { dataset?: Record<string, string> } = {},
  ...children: Child[]
): HTMLElementTagNameMap[K] {
  const element = document.createElement(tag);
  const { dataset, ...rest } = props;
  Object.assign(element, rest);
  for (const [key, value] of Object.entries(dataset ?? {})) element.dataset[key] = value;
  element.append(...children);
  return element;
}

function facts(language: Language, rows: [MessageKey, string, string?][]): HTMLDListElement {
  return el(
    'dl',
    {},
    ...rows.flatMap(([key, value, className]) => [
      el('dt', {}, t(language, key)),
      el('dd', className ? { className } : {}, value),
    ]),
  );
}

/** Buttons; Escape answers like the first (the safe one). */
function actions(
  buttons: { label: string; primary?: boolean; onClick(): void; type?: 'submit' | 'button' }[],
): HTMLDivElement {
  const safe = buttons[0]!;
  document.addEventListener('keydown', (event) => {
    if (event.key === 'Escape') safe.onClick();
  });
  return el(
    'div',
    { className: 'actions' },
    ...buttons.map((button) =>
      el(
        'button',
        {
          type: button.type ?? 'button',
          className: button.primary ? 'primary' : '',
          onclick: button.type === 'submit' ? null : () => button.onClick(),
        },
        button.label,
      ),
    ),
  );
}

let answered = false;
function answer(value: boolean | string | null): void {
  if (answered) return;
  answered = true;
  void api.answer(value);
}

function approveOrigin(language: Language, origin: string): void {
  root.append(
    el('h1', {}, t(language, 'approve.title')),
    el('p', { className: 'origin', id: 'origin' }, origin),
    el('p', {}, t(language, 'approve.explain')),
    actions([
      { label: t(language, 'approve.deny'), onClick: () => answer(false) },
      { label: t(language, 'approve.allow'), primary: true, onClick: () => answer(true) },
    ]),
  );
  // Refusing is the default: Enter on a window that popped up unasked must not approve.
  root.querySelector('button')!.focus();
}

function confirmSign(
  language: Language,
  consent: Extract<WindowRequest, { kind: 'confirmSign' }>['consent'],
): void {
  const hash = consent.documentDigestHex.match(/.{1,8}/g)!.join(' ');
  root.append(
    el('h1', {}, t(language, 'consent.title')),
    el('p', { className: 'origin', id: 'origin' }, consent.origin),
    facts(language, [
      ['consent.service', consent.serviceName],
      ['consent.document', consent.documentTitle],
      ['consent.hash', hash, 'hash'],
      ['consent.certificate', consent.certificate.subject],
      ['consent.issuer', consent.certificate.issuer],
      ['consent.validUntil', consent.certificate.notAfter.slice(0, 10)],
      ['consent.token', `${consent.token.label} (${consent.token.module})`],
    ]),
    actions([
      { label: t(language, 'consent.cancel'), onClick: () => answer(false) },
      { label: t(language, 'consent.sign'), primary: true, onClick: () => answer(true) },
    ]),
  );
  root.querySelector('button')!.focus();
}

function askPin(
  language: Language,
  question: Extract<WindowRequest, { kind: 'askPin' }>['question'],
): void {
  const input = el('input', {
    type: 'password',
    id: 'pin',
    autocomplete: 'off',
    spellcheck: false,
    required: true,
    maxLength: 64,
  });
  const warnings: HTMLElement[] = [];
  if (question.finalTry)
    warnings.push(el('p', { className: 'warning' }, t(language, 'pin.finalTry')));
  else if (question.countLow)
    warnings.push(el('p', { className: 'warning' }, t(language, 'pin.countLow')));
  const form = el(
    'form',
    {
      onsubmit: (event: SubmitEvent) => {
        event.preventDefault();
        if (input.value !== '') answer(input.value);
      },
    },
    el('label', { htmlFor: 'pin' }, t(language, 'pin.label')),
    input,
    actions([
      { label: t(language, 'pin.cancel'), onClick: () => answer(null) },
      { label: t(language, 'pin.ok'), primary: true, type: 'submit', onClick: () => {} },
    ]),
  );
  root.append(
    el('h1', {}, t(language, 'pin.title')),
    el('p', { className: 'origin', id: 'origin' }, question.origin),
    facts(language, [
      ['consent.token', `${question.token.label} (${question.token.module})`],
      ['consent.certificate', question.certificateSubject],
    ]),
    ...warnings,
    form,
  );
  input.focus();
}

async function settingsPage(): Promise<void> {
  let view = await api.settings();
  const message = el('p', { className: 'error', id: 'message', role: 'alert' });
  const apply = async (change: SettingsChange) => {
    const result = await api.changeSettings(change);
    if ('error' in result) {
      message.textContent = result.error;
      return;
    }
    message.textContent = '';
    view = result;
    draw();
  };
  const moduleRow = (language: Language, module: ModuleView) => {
    const result = el('td', { className: 'test-result' });
    const test = el('button', { type: 'button' }, t(language, 'settings.test'));
    test.onclick = async () => {
      const outcome = await api.testModule(module.path);
      const tokens = outcome.tokens.map((token) => `${token.label} (${token.serialNumber})`);
      result.textContent = `${t(language, `state.${outcome.state}`)}${outcome.reason ? `: ${outcome.reason}` : ''} — ${t(language, 'test.tokens')}: ${tokens.length > 0 ? tokens.join(', ') : t(language, 'test.noToken')}`;
    };
    const enabled = el('input', { type: 'checkbox', checked: module.enabled });
    enabled.setAttribute('aria-label', `${t(language, 'settings.enabled')} ${module.label}`);
    enabled.onchange = () =>
      void apply({ type: 'moduleEnabled', path: module.path, enabled: enabled.checked });
    return el(
      'tr',
      { dataset: { path: module.path } },
      el('td', {}, enabled),
      el('td', {}, module.label),
      el('td', { className: 'path' }, module.path),
      el(
        'td',
        { className: 'state' },
        `${t(language, `state.${module.state}`)}${module.reason ? `: ${module.reason}` : ''}`,
      ),
      el('td', {}, test),
      result,
    );
  };
  const draw = () => {
    const language = view.language;
    document.documentElement.lang = language;
    document.title = t(language, 'settings.title');
    const select = el(
      'select',
      { id: 'language' },
      el('option', { value: 'vi', selected: language === 'vi' }, t(language, 'language.vi')),
      el('option', { value: 'en', selected: language === 'en' }, t(language, 'language.en')),
    );
    select.onchange = () => void apply({ type: 'language', language: select.value as Language });
    const login = el('input', {
      type: 'checkbox',
      id: 'start-at-login',
      checked: view.startAtLogin,
    });
    login.onchange = () => void apply({ type: 'startAtLogin', enabled: login.checked });
    const tsa = el('input', { type: 'url', id: 'tsa', value: view.tsaUrl ?? '' });
    const saveTsa = el('button', { type: 'button', id: 'save-tsa' }, t(language, 'settings.save'));
    saveTsa.onclick = () => void apply({ type: 'tsaUrl', url: tsa.value || null });
    const origins =
      view.allowedOrigins.length === 0
        ? [el('p', {}, t(language, 'settings.noOrigins'))]
        : view.allowedOrigins.map((origin) => {
            const revoke = el('button', { type: 'button' }, t(language, 'settings.revoke'));
            revoke.setAttribute('aria-label', `${t(language, 'settings.revoke')} ${origin}`);
            revoke.onclick = () => void apply({ type: 'revokeOrigin', origin });
            return el(
              'div',
              { className: 'row origin-row' },
              el('span', { className: 'origin' }, origin),
              revoke,
            );
          });
    root.replaceChildren(
      el('h1', {}, `${t(language, 'settings.title')} ${view.version}`),
      message,
      el('h2', {}, t(language, 'settings.general')),
      el(
        'div',
        { className: 'row' },
        el('label', { htmlFor: 'language' }, t(language, 'settings.language')),
        select,
      ),
      el(
        'div',
        { className: 'row' },
        login,
        el('label', { htmlFor: 'start-at-login' }, t(language, 'settings.startAtLogin')),
      ),
      el('label', { htmlFor: 'tsa' }, t(language, 'settings.tsa')),
      el('div', { className: 'row' }, tsa, saveTsa),
      el('h2', {}, t(language, 'settings.modules')),
      el(
        'table',
        { id: 'modules' },
        el(
          'tr',
          {},
          ...(
            ['settings.enabled', 'settings.module', 'settings.path', 'settings.state'] as const
          ).map((key) => el('th', {}, t(language, key))),
          el('th', {}),
          el('th', {}),
        ),
        ...view.modules.map((module) => moduleRow(language, module)),
      ),
      el('h2', {}, t(language, 'settings.origins')),
      el('div', { id: 'origins' }, ...origins),
    );
  };
  draw();
}

async function start(): Promise<void> {
  const request = await api.request();
  document.documentElement.lang = request.language;
  if (request.kind === 'settings') {
    await settingsPage();
    return;
  }
  document.title = t(
    request.language,
    request.kind === 'approveOrigin'
      ? 'approve.title'
      : request.kind === 'confirmSign'
        ? 'consent.title'
        : 'pin.title',
  );
  if (request.kind === 'approveOrigin') approveOrigin(request.language, request.origin);
  if (request.kind === 'confirmSign') confirmSign(request.language, request.consent);
  if (request.kind === 'askPin') askPin(request.language, request.question);
}

void start();
