import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { buildSignedAttributes } from '@esign/shared/cms';
import { provisionSoftHsm, softHsmModule, tempDir } from '../../../test/support/tools';
import { developmentCa } from '../../src/dev/developmentCa';
import type { TokenSignatureInput } from '../../src/signing/finalize';
import { repoRoot } from '../admin/runCli';
import {
  type ContractWorld,
  contractsPath,
  openContractWorld,
  type SignerSpec,
  storedFiles,
  type UploadSpec,
} from '../contracts/fixtures';
import { manualWorker, startSmtpServer, type TestSmtpServer } from '../notify/support';
import type { Harness } from '../support/harness';

export const signingPath = '/api/signing';

/** A signer of the tests, with where a signature picture goes. */
export type SessionSigner = SignerSpec & {
  placement?: { page?: number; x: number; y: number; width: number; height: number };
  /** Compared with the signing certificate's CMND/CCCD (UID). */
  identityNumber?: string;
};

export interface SessionWorld extends ContractWorld {
  smtp: TestSmtpServer;
  /** Sets the manual clock to the real time: the TSA and certificates live in real time. */
  tick(): void;
  /** A contract as ACME's administrator, sent for signing; its deadline a week from now. */
  sentContract(signers: SessionSigner[], spec?: UploadSpec): Promise<string>;
  initiate(
    contractId: string,
    signerEmail: string,
    method: string,
    key?: string,
  ): Promise<Response>;
  step(
    sessionId: string,
    step: 'send-otp' | 'confirm' | 'prepare' | 'sign-with-token' | 'reject',
    json?: unknown,
    credential?: { key?: string; page?: string },
  ): Promise<Response>;
  /** Runs the notification worker once: queued e-mail reaches the SMTP sink, SMS the outbox. */
  deliver(): Promise<void>;
  /** Downloads the contract's signed PDF into the data directory as `name`; answers its path. */
  signedFile(contractId: string, name: string): Promise<string>;
  /** The newest OTP the development SMS outbox holds for `phone`. */
  otpFor(phone: string): string;
  close(): Promise<void>;
}

export async function openSessionWorld(env: Record<string, string> = {}): Promise<SessionWorld> {
  const smtp = await startSmtpServer();
  const world = await openContractWorld({
    MAIL_TRANSPORT: 'smtp',
    SMTP_HOST: '127.0.0.1',
    SMTP_PORT: String(smtp.port),
    MAIL_FROM: 'ESign <no-reply@esign.example>',
    APP_URL: 'https://app.esign.example',
    ...env,
  });
  const { h } = world;
  const tick = () => {
    const now = new Date();
    if (now > h.clock.now()) h.clock.set(now);
  };
  tick();
  const sessionWorld: SessionWorld = {
    ...world,
    smtp,
    tick,
    sentContract: async (signers, spec = {}) => {
      tick();
      const id = await world.create({
        expiredAt: new Date(h.clock.now().getTime() + 7 * 86_400_000).toISOString(),
        ...spec,
        signers: signers as SignerSpec[],
      });
      const sent = await world.request('POST', `${contractsPath}/${id}/send`, world.acme.orgKey);
      if (sent.status !== 200) throw new Error(`send: ${sent.status} ${await sent.text()}`);
      return id;
    },
    initiate: (contractId, signerEmail, method, key = world.acme.orgKey) => {
      tick();
      return world.request('POST', `${signingPath}/initiate`, key, {
        contractId,
        signerEmail,
        signingMethod: method,
      });
    },
    step: (sessionId, step, json, credential = {}) => {
      tick();
      const headers: Record<string, string> =
        credential.page !== undefined
          ? { 'x-signing-token': credential.page }
          : { 'x-api-key': credential.key ?? world.acme.orgKey };
      return h.request('POST', `${signingPath}/${sessionId}/${step}`, {
        headers,
        ...(json !== undefined ? { json } : {}),
      });
    },
    deliver: async () => {
      const worker = manualWorker(h.deps);
      await worker.drain();
      await worker.stop();
    },
    signedFile: async (contractId, name) => {
      const response = await world.request(
        'GET',
        `${contractsPath}/${contractId}/download?type=signed`,
        world.acme.orgKey,
      );
      if (response.status !== 200) {
        throw new Error(`signed download: ${response.status} ${await response.text()}`);
      }
      const file = path.join(h.dataDir, name);
      fs.writeFileSync(file, Buffer.from(await response.arrayBuffer()));
      return file;
    },
    otpFor: (phone) => outboxOtp(h, phone),
    close: async () => {
      await world.close();
      await smtp.close();
    },
  };
  return sessionWorld;
}

/** The newest OTP the development SMS outbox of `h` holds for `phone`. */
export function outboxOtp(h: Harness, phone: string): string {
  return otpInOutbox(h.deps.config.notify.smsDir, phone);
}

/** The newest OTP the development SMS outbox directory `smsDir` holds for `phone`. */
export function otpInOutbox(smsDir: string, phone: string): string {
  const file = path.join(smsDir, 'messages.jsonl');
  const lines = fs
    .readFileSync(file, 'utf8')
    .split('\n')
    .filter((line) => line.trim() !== '')
    .map((line) => JSON.parse(line) as { to: string; text: string });
  const text = lines.filter((line) => line.to === phone).at(-1)?.text ?? '';
  const code = /\b(\d{6})\b/.exec(text)?.[1];
  if (!code) throw new Error(`no OTP for ${phone} in the outbox`);
  return code;
}

export async function json<T = Record<string, unknown>>(response: Response): Promise<T> {
  return (await response.json()) as T;
}

export async function dataOf<T = Record<string, unknown>>(response: Response): Promise<T> {
  const body = await json<{ data: T }>(response);
  if (response.status !== 200) throw new Error(`HTTP ${response.status}: ${JSON.stringify(body)}`);
  return body.data;
}

export async function codeOf(response: Response): Promise<{ status: number; code: string }> {
  return { status: response.status, code: (await json<{ code: string }>(response)).code };
}

interface SerializedRef {
  label: string;
  algorithm: string;
  publicKeySpki: string;
  locator: Record<string, string>;
}

/**
 * A USB token: a SoftHSM2 token with an RSA key, driven in a child process, and its certificate
 * from the server's development CA (trusted outside production, as a CA-issued token would be).
 */
export class SoftToken {
  private constructor(
    private readonly dir: { dir: string; remove(): void },
    private readonly config: string,
    private readonly ref: SerializedRef,
    readonly chain: Buffer[],
  ) {}

  private static readonly token = { label: 'usb-token', pin: '1234', soPin: '5678' };

  private static probe<T>(config: string, request: Record<string, unknown>): T {
    const stdout = execFileSync(
      process.execPath,
      [
        '--import',
        'tsx',
        path.join(__dirname, 'tokenProbe.ts'),
        JSON.stringify({
          module: softHsmModule,
          tokenLabel: SoftToken.token.label,
          pin: SoftToken.token.pin,
          ...request,
        }),
      ],
      { cwd: repoRoot, env: { ...process.env, SOFTHSM2_CONF: config }, encoding: 'utf8' },
    );
    return JSON.parse(stdout) as T;
  }

  /**
   * A token whose certificate names `holder`: CN, subjectAltName e-mail (none when null), and
   * the subject UID as Vietnamese CAs write it (`CCCD:…`) when given.
   */
  static async create(
    world: SessionWorld,
    holder: { name: string; email: string | null; uid?: string },
  ) {
    const dir = tempDir('esign-usb-token-');
    const { config } = provisionSoftHsm(dir.dir, [SoftToken.token]);
    const { ref } = SoftToken.probe<{ ref: SerializedRef }>(config, {
      action: 'generate',
      label: 'usb-token-signer',
    });
    const ca = await developmentCa(world.h.deps);
    const certificate = await ca.issue(
      {
        kind: 'signer',
        name: holder.name,
        email: holder.email,
        organization: 'Đối tác ACME',
        ...(holder.uid === undefined ? {} : { uid: holder.uid }),
      },
      Buffer.from(ref.publicKeySpki, 'base64'),
    );
    const root = Buffer.from(
      ca.certificatePem.replace(/-----(BEGIN|END) CERTIFICATE-----|\s/g, ''),
      'base64',
    );
    return new SoftToken(dir, config, ref, [certificate, root]);
  }

  /** What a token client sends for `contractHash`: attributes by the shared builder, signed on the token, stamped by `tsa`. */
  async signAsClient(
    contractHash: string,
    stamp: (signature: Buffer) => Promise<Buffer>,
  ): Promise<TokenSignatureInput> {
    const digest = Buffer.from(contractHash.replace(/^sha256:/, ''), 'hex');
    const attributes = buildSignedAttributes(digest, this.chain[0]!);
    const { signature } = SoftToken.probe<{ signature: string }>(this.config, {
      action: 'sign',
      ref: this.ref,
      data: Buffer.from(attributes).toString('base64'),
    });
    const value = Buffer.from(signature, 'base64');
    return {
      signedHash: signature,
      certificateChain: this.chain.map((der) => der.toString('base64')),
      timestampToken: (await stamp(value)).toString('base64'),
    };
  }

  remove(): void {
    this.dir.remove();
  }
}

/**
 * A timestamp client as a partner's would be: an `openssl ts -query` over SHA-256 of the
 * signature, sent by `post`, the token cut out of the reply by `openssl ts -reply -token_out`.
 */
function tsaClient(post: (query: Buffer) => Promise<Response>) {
  const scratch = tempDir('esign-tsa-query-');
  const stamp = async (signature: Buffer): Promise<Buffer> => {
    const data = path.join(scratch.dir, `value-${Date.now()}`);
    fs.writeFileSync(data, signature);
    const query = execFileSync('openssl', ['ts', '-query', '-data', data, '-sha256', '-cert']);
    const response = await post(query);
    if (response.status !== 200) throw new Error(`TSA: HTTP ${response.status}`);
    const reply = path.join(scratch.dir, `reply-${Date.now()}.tsr`);
    fs.writeFileSync(reply, Buffer.from(await response.arrayBuffer()));
    return execFileSync('openssl', ['ts', '-reply', '-in', reply, '-token_out']);
  };
  return { stamp, remove: () => scratch.remove() };
}

const timestampQuery = (query: Buffer): RequestInit => ({
  method: 'POST',
  headers: { 'content-type': 'application/timestamp-query' },
  body: new Uint8Array(query),
});

/** The development TSA the session named (POST /api/dev/tsa), reached through the app. */
export function developmentTsa(world: SessionWorld, tsaUrl: string) {
  return tsaClient((query) => {
    world.tick();
    return Promise.resolve(world.h.app.request(new URL(tsaUrl).pathname, timestampQuery(query)));
  });
}

/** An RFC 3161 TSA over HTTP(S) (TSA_URL), reached over the network. */
export function remoteTsa(tsaUrl: string) {
  return tsaClient((query) => fetch(tsaUrl, timestampQuery(query)));
}

/** Everything a refused step must leave as it was: rows of every table it could touch, stored files. */
export async function persisted(world: SessionWorld) {
  const db = world.h.deps.db;
  return {
    contracts: await db.selectFrom('contracts').select(['id', 'status']).orderBy('id').execute(),
    signers: await db
      .selectFrom('contract_signers')
      .select(['id', 'status', 'signed_at'])
      .orderBy('id')
      .execute(),
    versions: await db.selectFrom('contract_file_versions').selectAll().orderBy('id').execute(),
    sessions: await db
      .selectFrom('signing_sessions')
      .select(['id', 'state', 'preparation_id', 'otp_failures', 'otp_sent_at'])
      .orderBy('id')
      .execute(),
    preparations: await db
      .selectFrom('signature_preparations')
      .select(['id', 'state'])
      .orderBy('id')
      .execute(),
    outbox: await db.selectFrom('notify_outbox').select('id').orderBy('id').execute(),
    events: await db.selectFrom('contract_audit_events').select('id').orderBy('id').execute(),
    files: storedFiles(world.h).sort(),
  };
}
