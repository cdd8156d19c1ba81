/**
 * The signing page's actions (`#signing-actions`, rendered by server/src/web/pages/signing.tsx
 * with its settings in `data-page`; its words are the shared catalogue's signingPage area, in
 * the body's `data-locale`). The page gets its session one of two ways: a
 * session link's is opened on load (`exchange`); a signer's own page opens one for the method
 * they use, when they first use it (`start`). A reload goes on with the session the page's
 * cookie kept (`session`). The steps run on the API with the page credential; once signed or
 * declined, the page reloads to show the result (which tells a parent page embedding it).
 */
import { signingPage as en } from '@esign/shared/messages/en/signingPage';
import { signingPage as vi } from '@esign/shared/messages/vi/signingPage';
import { type PageSession, postStep, postToPage, Refusal, type SigningMethod } from './api';
import { signaturePad } from './pad';
import { afterSigned, handedOverSession, startUsbToken, type TokenPrepared } from './usbToken';

interface PageData {
  pageUrl: string;
  apiBase: string;
  entry: 'exchange' | 'start' | 'none';
  methods: SigningMethod[];
  session: PageSession | null;
  resendSeconds: number;
  maxImageBytes: number;
  documentTitle: string;
}

interface OtpSent {
  otpExpiredAt: string;
  channel: 'sms' | 'email';
  to: string;
}

/** Codes after which the session cannot go on: the next action opens a new one. */
const sessionOver = new Set([
  'SESSION_EXPIRED',
  'SESSION_SUPERSEDED',
  'SESSION_ALREADY_USED',
  'SESSION_LOCKED',
  'UNAUTHORIZED',
]);

function element<T extends HTMLElement = HTMLElement>(id: string): T {
  const found = document.getElementById(id);
  if (!found) throw new Error(`#${id} is missing from the page`);
  return found as T;
}

function optional<T extends HTMLElement = HTMLElement>(id: string): T | null {
  return document.getElementById(id) as T | null;
}

function clock(iso: string, locale: string): string {
  return new Date(iso).toLocaleTimeString(locale === 'en' ? 'en-GB' : 'vi-VN', {
    hour: '2-digit',
    minute: '2-digit',
  });
}

function setUp(root: HTMLElement, data: PageData): void {
  const locale = document.body.dataset.locale ?? 'vi';
  const words = locale === 'en' ? en : vi;
  const texts = words.client;
  const refusals: Partial<Record<string, string>> = words.errors;
  const status = element('signing-status');
  const problem = element('signing-error');
  let session: PageSession | null = data.session;
  let opening: Promise<PageSession> | null = null;
  let working = false;

  const say = (text: string) => {
    status.textContent = text;
  };
  const clearProblem = () => {
    problem.hidden = true;
    problem.textContent = '';
    delete problem.dataset.code;
  };
  const describe = (error: unknown): string => {
    if (!(error instanceof Refusal)) return texts.generic;
    if (error.code === 'NETWORK') return texts.network;
    if (error.code === 'OTP_INVALID' && error.triesLeft !== undefined) {
      return texts.triesLeft(error.triesLeft);
    }
    return refusals[error.code] ?? texts.generic;
  };
  const showProblem = (error: unknown) => {
    problem.textContent = describe(error);
    problem.dataset.code = error instanceof Refusal ? error.code : 'PAGE';
    problem.hidden = false;
    if (error instanceof Refusal && sessionOver.has(error.code) && data.entry === 'start') {
      session = null;
    }
  };
  const complain = (text: string, code: string) => {
    problem.textContent = text;
    problem.dataset.code = code;
    problem.hidden = false;
  };

  /** One action at a time: the page's controls wait while it runs. */
  const busy = async (text: string, work: () => Promise<void>) => {
    if (working) return;
    working = true;
    const controls = Array.from(
      root.querySelectorAll<HTMLButtonElement | HTMLInputElement | HTMLTextAreaElement>(
        'button, input, textarea',
      ),
    );
    const wasDisabled = controls.map((control) => control.disabled);
    for (const control of controls) control.disabled = true;
    root.setAttribute('aria-busy', 'true');
    clearProblem();
    say(text);
    try {
      await work();
    } catch (error) {
      showProblem(error);
      say('');
    } finally {
      controls.forEach((control, index) => {
        // A control that waits (the resend timer) stays disabled until its wait is over.
        control.disabled = wasDisabled[index]! || control.dataset.wait !== undefined;
      });
      root.removeAttribute('aria-busy');
      working = false;
    }
  };

  /** The session for `method`: the one held, else one opened now (a signer's own page). */
  const sessionFor = async (method: SigningMethod): Promise<PageSession> => {
    if (session && session.signingMethod === method) return session;
    if (opening) {
      const pending = await opening;
      if (pending.signingMethod === method) return pending;
    }
    if (data.entry !== 'start')
      throw new Refusal(401, 'UNAUTHORIZED', 'no session', undefined, undefined);
    opening = postToPage<PageSession>(data.pageUrl, { signingMethod: method });
    try {
      session = await opening;
    } finally {
      opening = null;
    }
    return session;
  };

  /**
   * Signed or declined: the page comes back with the result, whose notice carries the event for
   * a parent page embedding it (data-task-event / data-contract-event).
   */
  const finish = (kind: 'signed' | 'rejected', result?: unknown) => {
    if (kind === 'signed') afterSigned(result);
    window.location.replace(`${data.pageUrl}?done=${kind}`);
  };

  // --- The method the signer uses -----------------------------------------------------------
  const panels = {
    otp: root.querySelector<HTMLElement>('[data-panel="otp"]'),
    image: root.querySelector<HTMLElement>('[data-panel="image"]'),
    usb: root.querySelector<HTMLElement>('[data-panel="usb"]'),
  };
  let chosen: SigningMethod | null = null;

  const otp = setUpOtp();
  setUpImage();
  const usb = setUpUsb();

  function choose(method: SigningMethod): void {
    if (chosen === method) return;
    chosen = method;
    clearProblem();
    for (const hint of root.querySelectorAll<HTMLElement>('[data-hint]')) {
      hint.hidden = hint.dataset.hint !== method;
    }
    const otpMethod = method === 'otp_sms' || method === 'cloud_hsm';
    if (panels.otp) panels.otp.hidden = !otpMethod;
    if (panels.image) panels.image.hidden = method !== 'image_signature';
    if (panels.usb) panels.usb.hidden = method !== 'usb_token';
    if (otpMethod) otp.shown(method);
    if (method === 'usb_token') usb.shown();
    const radio = root.querySelector<HTMLInputElement>(
      `input[name="signing-method"][value="${method}"]`,
    );
    if (radio) radio.checked = true;
  }

  for (const radio of root.querySelectorAll<HTMLInputElement>('input[name="signing-method"]')) {
    radio.addEventListener('change', () => {
      if (radio.checked) choose(radio.value as SigningMethod);
    });
  }

  function setUpOtp() {
    const sendButton = optional<HTMLButtonElement>('otp-send');
    const resendButton = optional<HTMLButtonElement>('otp-resend');
    const form = optional<HTMLFormElement>('otp-form');
    const code = optional<HTMLInputElement>('otp-code');
    const sent = optional('otp-sent');
    const resendLabel = resendButton?.textContent ?? '';
    let timer: number | undefined;
    let method: SigningMethod = 'otp_sms';

    const countDown = (seconds: number) => {
      if (!resendButton) return;
      window.clearInterval(timer);
      let left = Math.ceil(seconds);
      const tick = () => {
        if (left <= 0) {
          window.clearInterval(timer);
          resendButton.disabled = false;
          resendButton.textContent = resendLabel;
          delete resendButton.dataset.wait;
          return;
        }
        resendButton.disabled = true;
        resendButton.dataset.wait = String(left);
        resendButton.textContent = texts.resendIn(left);
        left -= 1;
      };
      tick();
      timer = window.setInterval(tick, 1000);
    };
    const showForm = () => {
      if (form) form.hidden = false;
      if (sendButton) sendButton.hidden = true;
      code?.focus();
    };
    const send = () =>
      busy(texts.working, async () => {
        const current = await sessionFor(method);
        try {
          const answer = await postStep<OtpSent>(data.apiBase, current, 'send-otp', {});
          if (sent) {
            const until = clock(answer.otpExpiredAt, locale);
            sent.textContent =
              answer.channel === 'sms'
                ? texts.otpSentSms(answer.to, until)
                : texts.otpSentEmail(answer.to, until);
            sent.hidden = false;
          }
          current.otpSentAt = new Date().toISOString();
          showForm();
          countDown(data.resendSeconds);
          say('');
        } catch (error) {
          if (error instanceof Refusal && error.code === 'OTP_RESEND_TOO_SOON') {
            showForm();
            countDown(error.retryAfter ?? data.resendSeconds);
          }
          throw error;
        }
      });
    sendButton?.addEventListener('click', () => void send());
    resendButton?.addEventListener('click', () => void send());
    form?.addEventListener('submit', (event) => {
      event.preventDefault();
      const value = code?.value.trim() ?? '';
      if (!/^[0-9]{6}$/.test(value)) {
        complain(texts.otpFormat, 'OTP_FORMAT');
        code?.focus();
        return;
      }
      void busy(texts.signing, async () => {
        const current = await sessionFor(method);
        try {
          const result = await postStep<unknown>(data.apiBase, current, 'confirm', { otp: value });
          finish('signed', result);
        } catch (error) {
          if (code) {
            code.value = '';
            window.setTimeout(() => code.focus(), 0);
          }
          throw error;
        }
      });
    });

    return {
      /** The panel is shown for otp_sms or cloud_hsm; a code already sent keeps its timer. */
      shown(next: SigningMethod) {
        if (next !== method) {
          method = next;
          if (form) form.hidden = true;
          if (sent) sent.hidden = true;
          if (sendButton) sendButton.hidden = false;
        }
        const sentAt = session?.signingMethod === method ? session.otpSentAt : null;
        if (sentAt) {
          if (sent) {
            sent.textContent = texts.otpWaiting;
            sent.hidden = false;
          }
          showForm();
          const waited = (Date.now() - Date.parse(sentAt)) / 1000;
          countDown(Math.max(0, data.resendSeconds - waited));
        }
      },
    };
  }

  function setUpImage() {
    const canvas = optional<HTMLCanvasElement>('signature-pad');
    if (!canvas) return null;
    const pad = signaturePad(canvas, () => clearProblem());
    const upload = element<HTMLInputElement>('signature-upload');
    element('pad-clear').addEventListener('click', () => {
      pad.clear();
      upload.value = '';
    });
    upload.addEventListener('change', () => {
      const file = upload.files?.[0];
      if (!file) return;
      if (file.type !== 'image/png' && file.type !== 'image/jpeg') {
        complain(texts.imageType, 'IMAGE_TYPE');
        upload.value = '';
        return;
      }
      if (file.size > data.maxImageBytes) {
        complain(texts.imageTooLarge, 'IMAGE_TOO_LARGE');
        upload.value = '';
        return;
      }
      createImageBitmap(file).then(
        (bitmap) => {
          pad.load(bitmap);
          bitmap.close();
          clearProblem();
          say(texts.imageLoaded);
        },
        () => complain(texts.imageUnreadable, 'IMAGE_UNREADABLE'),
      );
    });
    element('image-confirm').addEventListener('click', () => {
      if (pad.isEmpty()) {
        complain(texts.imageEmpty, 'IMAGE_EMPTY');
        return;
      }
      void busy(texts.signing, async () => {
        const current = await sessionFor('image_signature');
        const result = await postStep<unknown>(data.apiBase, current, 'confirm', {
          signatureImage: pad.toDataUrl(),
        });
        finish('signed', result);
      });
    });
    return pad;
  }

  function setUpUsb() {
    const container = panels.usb;
    let startedFor: string | null = null;
    return {
      shown() {
        if (!container) return;
        void busy(texts.working, async () => {
          const current = await sessionFor('usb_token');
          say('');
          if (startedFor === current.sessionId) return;
          startedFor = current.sessionId;
          startUsbToken(container, {
            session: current,
            documentTitle: data.documentTitle,
            prepare: (certificate) =>
              postStep<TokenPrepared>(data.apiBase, current, 'prepare', { certificate }),
            signWithToken: (signature) =>
              postStep<unknown>(data.apiBase, current, 'sign-with-token', signature),
            signed: (result) => finish('signed', result),
            describeServerRefusal: describe,
          });
        });
      },
    };
  }

  // --- Declining ------------------------------------------------------------------------------
  const rejectForm = optional<HTMLFormElement>('reject-form');
  rejectForm?.addEventListener('submit', (event) => {
    event.preventDefault();
    const reason = element<HTMLTextAreaElement>('reject-reason').value.trim();
    if (reason === '') {
      complain(texts.reasonRequired, 'REASON_REQUIRED');
      return;
    }
    if (!window.confirm(texts.rejectConfirm)) return;
    void busy(texts.working, async () => {
      const current = session ?? (await sessionFor(chosen ?? firstMethod()));
      await postStep<unknown>(data.apiBase, current, 'reject', { reason });
      finish('rejected');
    });
  });

  /** The method to open a session with just to decline: the one least likely to be refused. */
  function firstMethod(): SigningMethod {
    return data.methods.find((method) => method !== 'cloud_hsm') ?? data.methods[0]!;
  }

  // --- Start ------------------------------------------------------------------------------------
  const initial =
    session?.signingMethod ??
    (data.methods.length === 1
      ? data.methods[0]!
      : (data.methods.find((method) => method !== 'usb_token') ?? null));

  if (data.entry === 'exchange' && !session) {
    void busy(texts.opening, async () => {
      session = await postToPage<PageSession>(data.pageUrl, {});
      say('');
    }).then(() => {
      if (session) choose(session.signingMethod);
    });
  } else if (initial) {
    choose(initial);
  }
}

async function main(): Promise<void> {
  const root = document.getElementById('signing-actions');
  if (!root?.dataset.page) return;
  const data = JSON.parse(root.dataset.page) as PageData;
  // A tab opened by a framed page goes on with the session the frame held.
  const handed = await handedOverSession();
  if (handed) data.session = handed;
  setUp(root, data);
}

void main();
