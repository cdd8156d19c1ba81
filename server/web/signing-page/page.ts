/**
 * The signing page, two entry modes. `signingUrl` ({APP_URL}/ky-so/phien/<token>): exchanges the
 * link's token for the page credential (once). The e-mailed invitation ({APP_URL}/ky-so/<token>):
 * shows the contract, the signer picks a method, which starts a session with its credential.
 * Either way the session's steps then run with that credential. Bundled for the browser by
 * scripts/build.mjs; the server serves it beside index.html under a strict CSP. USB-token
 * signing (the desktop agent) is tokenSigning.ts's; this page gives it the server calls.
 */
import { handedOverSession, reportSignedToOpener } from './newTab';
import { setUpTokenSigning, type TokenPrepared, type TokenSignature } from './tokenSigning';

interface ApiFailure {
  status: number;
  code: string;
  message: string;
}

interface PageCredential {
  sessionId: string;
  pageCredential: string;
  expiresAt: string;
  signingMethod: 'otp_sms' | 'cloud_hsm' | 'image_signature' | 'usb_token';
  contractHash: string;
  contract?: { id: string; title: string };
  task?: { id: string; title: string };
  signer: { name: string; email: string | null };
}

type SigningMethod = PageCredential['signingMethod'];

interface Invitation {
  contract: { id: string; title: string; expiredAt: string };
  signer: { name: string; email: string; role: 'signer' | 'viewer'; status: string };
  yourTurn: boolean;
  waitingForOrder: number | null;
  signingMethods: SigningMethod[];
}

interface SignatureResult {
  signedAt: string;
  certificateInfo: { subject: string };
}

/** Vietnamese first for the codes a signer meets; the API's English message follows. */
const explained: Record<string, string> = {
  SIGNING_LINK_USED: 'Liên kết ký này đã được sử dụng. Vui lòng yêu cầu liên kết mới.',
  SIGNING_LINK_EXPIRED: 'Liên kết ký đã hết hạn. Vui lòng yêu cầu liên kết mới.',
  SIGNING_LINK_NOT_FOUND: 'Liên kết ký không hợp lệ.',
  SESSION_EXPIRED: 'Phiên ký đã hết hạn.',
  SESSION_SUPERSEDED: 'Phiên ký này đã được thay bằng phiên mới.',
  SESSION_ALREADY_USED: 'Phiên ký này đã hoàn tất.',
  SESSION_LOCKED: 'Phiên ký bị khóa do nhập sai mã quá nhiều lần.',
  OTP_INVALID: 'Mã OTP không đúng.',
  OTP_EXPIRED: 'Mã OTP đã hết hạn, vui lòng gửi lại.',
  OTP_RESEND_TOO_SOON: 'Vui lòng chờ trước khi gửi lại mã.',
  CONTRACT_CANCELLED: 'Hợp đồng đã bị hủy.',
  CONTRACT_EXPIRED: 'Hợp đồng đã hết hạn ký.',
  CONTRACT_REJECTED: 'Hợp đồng đã bị từ chối.',
  CONTRACT_COMPLETED: 'Hợp đồng đã được ký xong.',
  INVITATION_NOT_FOUND: 'Liên kết ký không hợp lệ.',
  INVITATION_EXPIRED: 'Liên kết ký không còn hiệu lực.',
  NOT_SIGNER_TURN: 'Chưa đến lượt ký của bạn.',
  SIGNER_ALREADY_SIGNED: 'Bạn đã ký hợp đồng này.',
  SIGNER_IS_VIEWER: 'Bạn chỉ được xem hợp đồng này.',
  SIGNER_KEY_NOT_ENROLLED: 'Bạn chưa có chữ ký số từ xa.',
};

const methodLabels: Record<SigningMethod, string> = {
  otp_sms: 'Ký bằng mã OTP · OTP code',
  image_signature: 'Ký bằng chữ ký hình ảnh · Drawn signature',
  cloud_hsm: 'Ký số từ xa · Cloud signature',
  usb_token: 'Ký bằng USB token · USB token',
};

function element<T extends HTMLElement = HTMLElement>(id: string): T {
  const found = document.getElementById(id);
  if (!found) throw new Error(`#${id} is missing from the page`);
  return found as T;
}

function show(id: string, visible = true): void {
  element(id).hidden = !visible;
}

const pathSegments = window.location.pathname.split('/');
const linkToken = decodeURIComponent(pathSegments.at(-1) ?? '');
/** {APP_URL}/ky-so/<invitation token> rather than {APP_URL}/ky-so/phien/<session link token>. */
const invitationMode = pathSegments.at(-2) !== 'phien';

/** Relative to the page, so the service may live under a path prefix. */
const apiBase = new URL(
  invitationMode ? '../../api/signing/' : '../../../api/signing/',
  window.location.href,
);

async function call<T>(
  path: string,
  body: unknown,
  credential?: string,
): Promise<{ data: T; message?: string }> {
  const headers: Record<string, string> = { 'content-type': 'application/json' };
  if (credential !== undefined) headers['x-signing-token'] = credential;
  let response: Response;
  try {
    response = await fetch(new URL(path, apiBase), {
      method: 'POST',
      headers,
      body: JSON.stringify(body),
      credentials: 'omit',
      cache: 'no-store',
    });
  } catch {
    throw {
      status: 0,
      code: 'NETWORK',
      message: 'The service cannot be reached',
    } satisfies ApiFailure;
  }
  const parsed = (await response.json().catch(() => ({}))) as {
    data?: T;
    message?: string;
    code?: string;
  };
  if (!response.ok || parsed.data === undefined) {
    throw {
      status: response.status,
      code: parsed.code ?? 'HTTP_ERROR',
      message: parsed.message ?? `HTTP ${response.status}`,
    } satisfies ApiFailure;
  }
  return {
    data: parsed.data,
    ...(parsed.message !== undefined ? { message: parsed.message } : {}),
  };
}

function isApiFailure(value: unknown): value is ApiFailure {
  return typeof value === 'object' && value !== null && 'code' in value && 'message' in value;
}

function describe(error: unknown): string {
  if (!isApiFailure(error)) return 'Đã xảy ra lỗi. · Something went wrong.';
  const vietnamese = explained[error.code] ?? 'Không thực hiện được.';
  return `${vietnamese} · ${error.message} (${error.code})`;
}

function showError(id: 'error' | 'fatal', error: unknown): void {
  const target = element(id);
  target.textContent = describe(error);
  target.dataset.code = isApiFailure(error) ? error.code : '';
  target.hidden = false;
}

/** Disables the page's buttons while a step runs, so one click sends one request. */
async function busy(work: () => Promise<void>): Promise<void> {
  const buttons = Array.from(document.querySelectorAll('button'));
  for (const button of buttons) button.disabled = true;
  show('error', false);
  try {
    await work();
  } catch (error) {
    showError('error', error);
  } finally {
    for (const button of buttons) button.disabled = false;
  }
}

function finish(text: string, signature?: SignatureResult): void {
  remembered.write(linkToken, undefined);
  show('session', false);
  element('result-text').textContent = text;
  if (signature) {
    element('signed-at').textContent = new Date(signature.signedAt).toLocaleString('vi-VN');
    element('signed-at').title = signature.signedAt;
    element('certificate').textContent = signature.certificateInfo.subject;
    show('result-details');
  }
  show('result');
}

function signed(signature: SignatureResult): void {
  finish('Đã ký thành công. · Signed.', signature);
  // A tab opened from the framed page: the frame shows the result too.
  reportSignedToOpener(signature);
}

function setUpOtp(session: PageCredential, credential: string): void {
  show('otp');
  element('send-otp').addEventListener('click', () =>
    busy(async () => {
      const sent = await call<{ to: string; channel: 'sms' | 'email' }>(
        `${session.sessionId}/send-otp`,
        {},
        credential,
      );
      const where = sent.data.channel === 'sms' ? 'số điện thoại' : 'địa chỉ e-mail';
      const notice = element('otp-sent');
      notice.textContent = `Mã OTP đã được gửi tới ${where} ${sent.data.to}. · The code was sent to ${sent.data.to}.`;
      notice.hidden = false;
      show('otp-form');
      element<HTMLInputElement>('otp-code').focus();
    }),
  );
  element<HTMLFormElement>('otp-form').addEventListener('submit', (event) => {
    event.preventDefault();
    void busy(async () => {
      const otp = element<HTMLInputElement>('otp-code').value.trim();
      const result = await call<SignatureResult>(
        `${session.sessionId}/confirm`,
        { otp },
        credential,
      );
      signed(result.data);
    });
  });
}

/** A drawing pad: pointer events, so mouse, pen and touch draw alike. */
function setUpImage(session: PageCredential, credential: string): void {
  show('image');
  const pad = element<HTMLCanvasElement>('pad');
  const context = pad.getContext('2d');
  if (!context) throw new Error('no 2D canvas');
  context.lineWidth = 2.5;
  context.lineCap = 'round';
  context.lineJoin = 'round';
  context.strokeStyle = '#0b3d91';
  let drawing = false;
  let drawn = false;
  const point = (event: PointerEvent) => {
    const box = pad.getBoundingClientRect();
    return {
      x: ((event.clientX - box.left) * pad.width) / box.width,
      y: ((event.clientY - box.top) * pad.height) / box.height,
    };
  };
  pad.addEventListener('pointerdown', (event) => {
    drawing = true;
    pad.setPointerCapture(event.pointerId);
    const { x, y } = point(event);
    context.beginPath();
    context.moveTo(x, y);
  });
  pad.addEventListener('pointermove', (event) => {
    if (!drawing) return;
    const { x, y } = point(event);
    context.lineTo(x, y);
    context.stroke();
    drawn = true;
  });
  const stop = () => {
    drawing = false;
  };
  pad.addEventListener('pointerup', stop);
  pad.addEventListener('pointercancel', stop);
  element('clear-pad').addEventListener('click', () => {
    context.clearRect(0, 0, pad.width, pad.height);
    drawn = false;
  });
  element('confirm-image').addEventListener('click', () =>
    busy(async () => {
      if (!drawn) {
        throw {
          status: 0,
          code: 'SIGNATURE_EMPTY',
          message: 'Draw your signature first',
        } satisfies ApiFailure;
      }
      const signatureImage = pad.toDataURL('image/png');
      const result = await call<SignatureResult>(
        `${session.sessionId}/confirm`,
        { signatureImage },
        credential,
      );
      signed(result.data);
    }),
  );
}

function setUpReject(session: PageCredential, credential: string): void {
  element<HTMLFormElement>('reject-form').addEventListener('submit', (event) => {
    event.preventDefault();
    void busy(async () => {
      const reason = element<HTMLTextAreaElement>('reject-reason').value.trim();
      await call(`${session.sessionId}/reject`, { reason }, credential);
      finish('Bạn đã từ chối ký hợp đồng. · You declined to sign.');
    });
  });
}

/**
 * The link works once, so the credential it gave is kept for this tab: a reload goes on with the
 * session instead of showing "already used". Dropped once the session ends.
 */
const remembered = {
  key: (token: string) => `esign-signing-page:${token}`,
  read(token: string): PageCredential | undefined {
    try {
      const raw = window.sessionStorage.getItem(remembered.key(token));
      return raw === null ? undefined : (JSON.parse(raw) as PageCredential);
    } catch {
      return undefined;
    }
  },
  write(token: string, session: PageCredential | undefined): void {
    try {
      if (session) window.sessionStorage.setItem(remembered.key(token), JSON.stringify(session));
      else window.sessionStorage.removeItem(remembered.key(token));
    } catch {
      // Storage off (private mode): a reload then shows the used link, nothing worse.
    }
  },
};

function showHeading(title: string, signer: { name: string; email: string | null }): void {
  element('title').textContent = title;
  element('signer').textContent = signer.email ? `${signer.name} <${signer.email}>` : signer.name;
}

/** The session's steps with its page credential, whichever way the page got it. */
function begin(session: PageCredential): void {
  const credential = session.pageCredential;
  showHeading(session.contract?.title ?? session.task?.title ?? '', session.signer);
  show('choose', false);
  show('facts');
  element('hash').textContent = session.contractHash;
  element('expires').textContent = new Date(session.expiresAt).toLocaleString('vi-VN');
  if (session.signingMethod === 'otp_sms' || session.signingMethod === 'cloud_hsm') {
    setUpOtp(session, credential);
  } else if (session.signingMethod === 'image_signature') {
    setUpImage(session, credential);
  } else {
    setUpTokenSigning<SignatureResult>(element('usb'), {
      sessionId: session.sessionId,
      documentTitle: session.contract?.title ?? session.task?.title ?? '',
      prepare: async (certificate) =>
        (await call<TokenPrepared>(`${session.sessionId}/prepare`, { certificate }, credential))
          .data,
      signWithToken: async (signature: TokenSignature) =>
        (await call<SignatureResult>(`${session.sessionId}/sign-with-token`, signature, credential))
          .data,
      signed,
      describeServerRefusal: describe,
      handOver: session,
    });
  }
  setUpReject(session, credential);
  show('session');
}

/** Why an invitation offers no method: not the turn yet, signed already, or a viewer. */
function noChoice(invitation: Invitation): string {
  if (invitation.signer.role === 'viewer') {
    return 'Bạn được mời xem hợp đồng này, không cần ký. · You are invited to view this contract; no signature is needed.';
  }
  if (invitation.signer.status === 'signed') {
    return 'Bạn đã ký hợp đồng này. · You have signed this contract.';
  }
  return `Chưa đến lượt ký của bạn: đang chờ những người ký thứ tự ${invitation.waitingForOrder}. · It is not your turn yet: waiting for the signers of order ${invitation.waitingForOrder}.`;
}

/** The invitation link: the contract first, then a session for the method the signer picks. */
async function startFromInvitation(): Promise<void> {
  let invitation: Invitation;
  try {
    invitation = (await call<Invitation>('invitation', { token: linkToken })).data;
  } catch (error) {
    show('status', false);
    showError('fatal', error);
    return;
  }
  show('status', false);
  showHeading(invitation.contract.title, invitation.signer);
  element('deadline').textContent = new Date(invitation.contract.expiredAt).toLocaleString('vi-VN');
  show('deadline-row');
  show('session');
  // Declining needs a session, so it comes with the method chosen.
  show('reject', false);
  if (!invitation.yourTurn || invitation.signingMethods.length === 0) {
    element('no-choice').textContent = noChoice(invitation);
    show('no-choice');
    return;
  }
  const buttons = element('methods');
  for (const method of invitation.signingMethods) {
    const button = document.createElement('button');
    button.type = 'button';
    button.dataset.method = method;
    button.textContent = methodLabels[method];
    button.addEventListener('click', () =>
      busy(async () => {
        const started = await call<PageCredential>('invitation/session', {
          token: linkToken,
          signingMethod: method,
        });
        show('reject');
        begin(started.data);
      }),
    );
    buttons.append(button);
  }
  show('choose');
}

/** The session link works once: the credential it gave is kept for this tab (see remembered). */
async function startFromSigningLink(): Promise<void> {
  let session = remembered.read(linkToken);
  if (!session) {
    try {
      session = (await call<PageCredential>('page-credential', { token: linkToken })).data;
    } catch (error) {
      show('status', false);
      showError('fatal', error);
      return;
    }
    remembered.write(linkToken, session);
  }
  show('status', false);
  begin(session);
}

/** A tab opened by the framed page goes on with the session the frame handed over. */
async function start(): Promise<void> {
  const handed = (await handedOverSession()) as PageCredential | undefined;
  if (handed?.sessionId === undefined) {
    await (invitationMode ? startFromInvitation() : startFromSigningLink());
    return;
  }
  if (!invitationMode) remembered.write(linkToken, handed);
  show('status', false);
  show('reject');
  begin(handed);
}

void start();
