import crypto from 'node:crypto';
import type { Module, Session } from 'graphene-pk11';
import { EngineError } from '../../pdf/engineError';
import { ecdsaRawToDer } from './ecdsa';
import {
  type KeyAlgorithm,
  type KeyReference,
  type KeyStore,
  KeyStoreUnavailable,
  type SignatureScheme,
} from './keyStore';
import { checkScheme, otherStore } from './scheme';

type Graphene = typeof import('graphene-pk11');

export interface Pkcs11Settings {
  /** PKCS11_MODULE: absolute path of the token's PKCS#11 library. */
  module: string;
  /** PKCS11_TOKEN_LABEL */
  tokenLabel: string;
  /** PKCS11_PIN (user PIN); read only to log in, never kept in messages. */
  pin(): string;
}

/** DER of the named-curve OID of P-256 (CKA_EC_PARAMS). */
const p256Parameters = Buffer.from('06082a8648ce3d030107', 'hex');

/** PKCS#11 return values this layer turns into its own messages (pkcs11js `code`). */
const ckr = {
  PIN_INCORRECT: 0xa0,
  PIN_LOCKED: 0xa4,
  PIN_EXPIRED: 0xa3,
  USER_ALREADY_LOGGED_IN: 0x100,
  CRYPTOKI_ALREADY_INITIALIZED: 0x191,
  SESSION_CLOSED: 0xb0,
  SESSION_HANDLE_INVALID: 0xb3,
  DEVICE_REMOVED: 0x32,
  TOKEN_NOT_PRESENT: 0xe0,
  USER_NOT_LOGGED_IN: 0x101,
} as const;

/** Errors after which a fresh session (and login) may succeed. */
const lostSession = new Set<number>([
  ckr.SESSION_CLOSED,
  ckr.SESSION_HANDLE_INVALID,
  ckr.DEVICE_REMOVED,
  ckr.TOKEN_NOT_PRESENT,
  ckr.USER_NOT_LOGGED_IN,
]);

function pkcs11Code(error: unknown): number | undefined {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === 'number' ? code : undefined;
}

function unavailable(message: string): EngineError {
  return new KeyStoreUnavailable(message);
}

// The library is loaded and C_Initialize'd once per process, whatever the number of stores.
let graphene: Promise<Graphene> | undefined;
const modules = new Map<string, Module>();

async function loadedModule(file: string): Promise<{ graphene: Graphene; module: Module }> {
  graphene ??= import('graphene-pk11');
  const library = await graphene;
  let module = modules.get(file);
  if (!module) {
    try {
      module = library.Module.load(file, 'esign');
    } catch (error) {
      throw unavailable(
        `PKCS11_MODULE ${file} cannot be loaded: ${error instanceof Error ? error.message : String(error)}`,
      );
    }
    try {
      module.initialize();
    } catch (error) {
      // Another copy of this module (a second registry in the same process) initialized it.
      if (pkcs11Code(error) !== ckr.CRYPTOKI_ALREADY_INITIALIZED) throw error;
    }
    modules.set(file, module);
  }
  return { graphene: library, module };
}

/** C_Finalize of every module this process loaded (shutdown, tests). */
export function unloadPkcs11Modules(): void {
  for (const module of modules.values()) {
    try {
      module.finalize();
    } catch {
      // Already finalized by another copy: nothing left to release.
    }
  }
  modules.clear();
}

/**
 * Keys on a PKCS#11 token through graphene-pk11 (SoftHSM2 in tests, an HSM in production).
 * Keys are generated on the token, private, sensitive and non-extractable; a row records
 * their CKA_ID. One logged-in session is kept and reopened when the token drops it: graphene
 * calls are synchronous, so calls of this process never interleave on it.
 */
export class Pkcs11KeyStore implements KeyStore {
  readonly kind = 'pkcs11';
  private session: Session | undefined;
  private library: Graphene | undefined;

  constructor(private readonly settings: Pkcs11Settings) {}

  async ready(): Promise<void> {
    await this.open();
  }

  async generateKey(label: string, algorithm: KeyAlgorithm): Promise<KeyReference> {
    return this.withSession((session, g) => {
      const id = crypto.randomBytes(16);
      const common = { token: true, id, label };
      const pair =
        algorithm === 'rsa-2048'
          ? session.generateKeyPair(
              g.KeyGenMechanism.RSA,
              {
                ...common,
                keyType: g.KeyType.RSA,
                verify: true,
                modulusBits: 2048,
                publicExponent: Buffer.from([1, 0, 1]),
              },
              { ...common, ...privateAttributes, keyType: g.KeyType.RSA },
            )
          : session.generateKeyPair(
              g.KeyGenMechanism.EC,
              { ...common, keyType: g.KeyType.EC, verify: true, paramsEC: p256Parameters },
              { ...common, ...privateAttributes, keyType: g.KeyType.EC },
            );
      return {
        label,
        algorithm,
        publicKeySpki: spkiOfTokenKey(algorithm, (template) =>
          pair.publicKey.getAttribute(template),
        ),
        locator: {
          store: 'pkcs11',
          pkcs11Id: id.toString('hex'),
          tokenLabel: this.settings.tokenLabel,
        },
      };
    });
  }

  async publicKeySpki(ref: KeyReference): Promise<Buffer> {
    return Buffer.from(ref.publicKeySpki);
  }

  async sign(ref: KeyReference, data: Uint8Array, scheme: SignatureScheme): Promise<Buffer> {
    checkScheme(ref, scheme);
    return this.withSession((session, g) => {
      const key = this.privateKeyOf(session, g, ref);
      if (ref.algorithm === 'rsa-2048') {
        return session.createSign('SHA256_RSA_PKCS', key).once(Buffer.from(data));
      }
      // CKM_ECDSA signs a digest we compute; the token answers r||s.
      const digest = crypto.createHash('sha256').update(data).digest();
      return ecdsaRawToDer(session.createSign('ECDSA', key).once(digest));
    });
  }

  /** How the token protects a private key (for audits: it must never have been extractable). */
  async protection(ref: KeyReference): Promise<Record<KeyProtection, boolean>> {
    return this.withSession((session, g) => {
      const key = this.privateKeyOf(session, g, ref);
      const read = key.getAttribute({
        private: null,
        sensitive: null,
        alwaysSensitive: null,
        extractable: null,
        neverExtractable: null,
      });
      return {
        private: read.private === true,
        sensitive: read.sensitive === true,
        alwaysSensitive: read.alwaysSensitive === true,
        extractable: read.extractable === true,
        neverExtractable: read.neverExtractable === true,
      };
    });
  }

  async discardKey(ref: KeyReference): Promise<void> {
    if (ref.locator.store !== 'pkcs11') return;
    const id = Buffer.from(ref.locator.pkcs11Id, 'hex');
    await this.withSession((session) => {
      session.destroy({ id });
    });
  }

  async close(): Promise<void> {
    const session = this.session;
    this.session = undefined;
    if (!session) return;
    try {
      session.logout();
      session.close();
    } catch {
      // The token or module is already gone; nothing to release.
    }
  }

  private privateKeyOf(session: Session, g: Graphene, ref: KeyReference) {
    if (ref.locator.store !== 'pkcs11') throw otherStore(ref);
    if (ref.locator.tokenLabel !== this.settings.tokenLabel) {
      throw new EngineError(
        'SIGNING_KEY_ON_OTHER_TOKEN',
        `Key ${ref.label} is on token "${ref.locator.tokenLabel}", not "${this.settings.tokenLabel}" (PKCS11_TOKEN_LABEL)`,
      );
    }
    const found = session.find({
      class: g.ObjectClass.PRIVATE_KEY,
      id: Buffer.from(ref.locator.pkcs11Id, 'hex'),
    });
    if (found.length !== 1) {
      throw new EngineError(
        'SIGNING_KEY_NOT_ON_TOKEN',
        `Key ${ref.label} (CKA_ID ${ref.locator.pkcs11Id}) is ${found.length === 0 ? 'not' : 'more than once'} on token "${this.settings.tokenLabel}"`,
      );
    }
    return found.items(0).toType<import('graphene-pk11').PrivateKey>();
  }

  /** Runs `work` on the logged-in session; a session the token dropped is reopened once. */
  private async withSession<T>(work: (session: Session, g: Graphene) => T): Promise<T> {
    for (let attempt = 0; ; attempt++) {
      const session = await this.open();
      try {
        return work(session, this.library!);
      } catch (error) {
        const code = pkcs11Code(error);
        if (attempt > 0 || code === undefined || !lostSession.has(code)) throw error;
        this.session = undefined;
      }
    }
  }

  private opening: Promise<Session> | undefined;

  /** The logged-in session; concurrent first calls share one opening. */
  private async open(): Promise<Session> {
    if (this.session) return this.session;
    this.opening ??= this.openSession().finally(() => {
      this.opening = undefined;
    });
    return this.opening;
  }

  private async openSession(): Promise<Session> {
    const { module: file, tokenLabel } = this.settings;
    const { graphene: g, module } = await loadedModule(file);
    this.library = g;
    const slots = module.getSlots(true);
    const labels: string[] = [];
    for (let index = 0; index < slots.length; index++) {
      const slot = slots.items(index);
      const label = slot.getToken().label.trim();
      if (label !== '') labels.push(label);
      if (label !== tokenLabel) continue;
      const session = slot.open(g.SessionFlag.SERIAL_SESSION | g.SessionFlag.RW_SESSION);
      login(session, g, this.settings);
      this.session = session;
      return session;
    }
    throw unavailable(
      `No token labelled "${tokenLabel}" (PKCS11_TOKEN_LABEL) in ${file}; tokens present: ${
        labels.length === 0
          ? 'none'
          : labels
              .sort()
              .map((label) => `"${label}"`)
              .join(', ')
      }`,
    );
  }
}

type KeyProtection =
  | 'private'
  | 'sensitive'
  | 'alwaysSensitive'
  | 'extractable'
  | 'neverExtractable';

const privateAttributes = {
  private: true,
  sign: true,
  sensitive: true,
  extractable: false,
} as const;

function login(session: Session, g: Graphene, settings: Pkcs11Settings): void {
  try {
    session.login(settings.pin(), g.UserType.USER);
  } catch (error) {
    const code = pkcs11Code(error);
    if (code === ckr.USER_ALREADY_LOGGED_IN) return;
    session.close();
    const token = `token "${settings.tokenLabel}"`;
    if (code === ckr.PIN_INCORRECT) throw unavailable(`PKCS11_PIN is wrong for ${token}`);
    if (code === ckr.PIN_LOCKED) throw unavailable(`The user PIN of ${token} is locked`);
    if (code === ckr.PIN_EXPIRED) throw unavailable(`The user PIN of ${token} has expired`);
    throw unavailable(
      `Cannot log in to ${token}: ${error instanceof Error ? error.message : String(error)}`,
    );
  }
}

type ReadAttributes = (template: Record<string, null>) => Record<string, unknown>;

/** The SPKI of a token's public key, from its CKA_MODULUS/EXPONENT or CKA_EC_POINT. */
function spkiOfTokenKey(algorithm: KeyAlgorithm, read: ReadAttributes): Buffer {
  const jwk: crypto.JsonWebKey =
    algorithm === 'rsa-2048' ? rsaJwk(read) : { kty: 'EC', crv: 'P-256', ...ecPoint(read) };
  return crypto
    .createPublicKey({ key: jwk, format: 'jwk' })
    .export({ format: 'der', type: 'spki' });
}

function rsaJwk(read: ReadAttributes): crypto.JsonWebKey {
  const { modulus, publicExponent } = read({ modulus: null, publicExponent: null });
  return {
    kty: 'RSA',
    n: (modulus as Buffer).toString('base64url'),
    e: (publicExponent as Buffer).toString('base64url'),
  };
}

function ecPoint(read: ReadAttributes): { x: string; y: string } {
  let point = read({ pointEC: null }).pointEC as Buffer;
  // CKA_EC_POINT is a DER OCTET STRING around the point (some tokens give the bare point).
  if (point.length === 67 && point[0] === 0x04 && point[1] === 0x41) point = point.subarray(2);
  if (point.length !== 65 || point[0] !== 0x04) {
    throw new EngineError('KEYSTORE_UNEXPECTED', 'The token returned an unexpected EC point');
  }
  return {
    x: point.subarray(1, 33).toString('base64url'),
    y: point.subarray(33).toString('base64url'),
  };
}
