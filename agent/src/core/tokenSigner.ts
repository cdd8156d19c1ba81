import crypto from 'node:crypto';
import type { TokenCertificate } from '@esign/shared';
import {
  buildSignedAttributes,
  digestInfoSha256,
  ecdsaRawSignatureToDer,
  signedAttributesDigest,
} from '@esign/shared/cms';
import type { Session, Slot } from 'graphene-pk11';
import {
  type CertificateFacts,
  certificateHashPrefix,
  describeCertificate,
  isSigningCertificate,
  parseCertificateId,
  readCertificateFacts,
} from './certificates';
import { AgentFailure, type PinTries } from './errors';
import { ckr, pkcs11Code, tokenFlag, tokenGone } from './pkcs11/returnValues';
import type { Graphene, PresentToken, TokenRegistry } from './pkcs11/tokenRegistry';
import type { SignConsent, UserPrompts } from './prompts';
import type { AgentMechanism } from './settings';

/** What the token produced for one `sign`: the rest (chain, timestamp) needs no token. */
export interface TokenSignature {
  /** RSA: the PKCS#1 v1.5 signature; ECDSA: DER ECDSA-Sig-Value. */
  signature: Buffer;
  signer: Buffer;
  /** Every certificate on the token: intermediates for the chain. */
  tokenCertificates: Buffer[];
}

export interface SignOnToken {
  certificateId: string;
  documentDigest: Buffer;
  /** The consent's fields the token does not supply. */
  origin: string;
  serviceName: string;
  documentTitle: string;
  prompts: Pick<UserPrompts, 'confirmSign' | 'askPin'>;
  now: Date;
}

/** Graphene's names of the mechanisms the agent signs with. */
type Mechanism = 'SHA256_RSA_PKCS' | 'RSA_PKCS' | 'ECDSA' | 'ECDSA_SHA256';

const GRAPHENE_NAMES: Record<AgentMechanism, Mechanism> = {
  CKM_SHA256_RSA_PKCS: 'SHA256_RSA_PKCS',
  CKM_RSA_PKCS: 'RSA_PKCS',
  CKM_ECDSA: 'ECDSA',
  CKM_ECDSA_SHA256: 'ECDSA_SHA256',
};

export interface TokenSignerOptions {
  /** Mechanisms the settings tell the agent not to use with tokens of this module (by label). */
  avoidedMechanisms?(moduleLabel: string): readonly AgentMechanism[];
  log?(message: string): void;
}

interface TokenObjects {
  certificates: { der: Buffer; id: Buffer }[];
  /** CKA_IDs of keys visible now (private ones are often visible only after login). */
  keyIds: Set<string>;
}

function readObjects(session: Session, g: Graphene): TokenObjects {
  const certificates: { der: Buffer; id: Buffer }[] = [];
  const found = session.find({ class: g.ObjectClass.CERTIFICATE });
  for (let index = 0; index < found.length; index++) {
    const read = found.items(index).getAttribute({ value: null, id: null }) as {
      value?: Buffer;
      id?: Buffer;
    };
    if (read.value) certificates.push({ der: read.value, id: read.id ?? Buffer.alloc(0) });
  }
  const keyIds = new Set<string>();
  for (const keyClass of [g.ObjectClass.PRIVATE_KEY, g.ObjectClass.PUBLIC_KEY]) {
    const keys = session.find({ class: keyClass });
    for (let index = 0; index < keys.length; index++) {
      const id = (keys.items(index).getAttribute({ id: null }) as { id?: Buffer }).id;
      if (id) keyIds.add(id.toString('hex'));
    }
  }
  return { certificates, keyIds };
}

function openSession(slot: Slot, g: Graphene): Session {
  return slot.open(g.SessionFlag.SERIAL_SESSION);
}

function pinTries(flags: number): PinTries {
  return {
    countLow: (flags & tokenFlag.USER_PIN_COUNT_LOW) !== 0,
    finalTry: (flags & tokenFlag.USER_PIN_FINAL_TRY) !== 0,
  };
}

/**
 * The mechanisms for this key on this token, best first: those it advertises less those the
 * settings avoid for its module. MECHANISM_UNSUPPORTED when none is left.
 */
function mechanismsFor(
  slot: Slot,
  keyAlgorithm: CertificateFacts['keyAlgorithm'],
  avoided: readonly AgentMechanism[],
): Mechanism[] {
  const available = new Set<string>();
  const list = slot.getMechanisms();
  for (let index = 0; index < list.length; index++) available.add(list.items(index).name);
  const skipped = new Set(avoided.map((name) => GRAPHENE_NAMES[name]));
  const wanted: Mechanism[] =
    keyAlgorithm === 'rsa' ? ['SHA256_RSA_PKCS', 'RSA_PKCS'] : ['ECDSA', 'ECDSA_SHA256'];
  const usable = wanted.filter((name) => available.has(name) && !skipped.has(name));
  if (usable.length === 0) {
    const because = avoided.length > 0 ? ` (the settings avoid ${avoided.join(', ')})` : '';
    throw new AgentFailure(
      'MECHANISM_UNSUPPORTED',
      `the token offers none of ${wanted.map((name) => `CKM_${name}`).join(', ')} for this ${keyAlgorithm.toUpperCase()} key${because}`,
    );
  }
  return usable;
}

/** What a mechanism is given: the signed attributes, or their SHA-256 (in a DigestInfo for RSA). */
function signInput(mechanism: Mechanism, attributes: Uint8Array): Buffer {
  const digest = Buffer.from(signedAttributesDigest(attributes));
  switch (mechanism) {
    case 'SHA256_RSA_PKCS':
    case 'ECDSA_SHA256':
      return Buffer.from(attributes);
    case 'RSA_PKCS':
      return Buffer.from(digestInfoSha256(digest));
    case 'ECDSA':
      return digest;
  }
}

/**
 * Signs with the first mechanism whose C_SignInit the token accepts. Tokens in the field
 * advertise mechanisms their firmware (or the key's CKA_ALLOWED_MECHANISMS) then refuses with
 * CKR_MECHANISM_INVALID: the next one gives the same signature value's meaning, so the user
 * never sees the difference. Returns the signature as the server takes it (ECDSA in DER).
 */
function signWithFirstAccepted(
  session: Session,
  key: import('graphene-pk11').PrivateKey,
  mechanisms: readonly Mechanism[],
  attributes: Uint8Array,
  log: (message: string) => void,
): Buffer {
  for (const [index, mechanism] of mechanisms.entries()) {
    let signer: ReturnType<Session['createSign']>;
    try {
      signer = session.createSign(mechanism, key);
    } catch (error) {
      const next = mechanisms[index + 1];
      if (pkcs11Code(error) !== ckr.MECHANISM_INVALID || next === undefined) throw error;
      log(`the token refused CKM_${mechanism} at C_SignInit; trying CKM_${next}`);
      continue;
    }
    const signature = signer.once(signInput(mechanism, attributes));
    return mechanism.startsWith('ECDSA')
      ? Buffer.from(ecdsaRawSignatureToDer(signature))
      : signature;
  }
  throw new Error('no mechanism to sign with');
}

/**
 * Reads certificates and signs on the tokens of a registry. Sessions live for one operation:
 * opened, logged in, used, logged out and closed; a PIN is never kept.
 */
export class TokenSigner {
  constructor(
    private readonly registry: TokenRegistry,
    private readonly options: TokenSignerOptions = {},
  ) {}

  /** Signing certificates (usage, validity, a key with their CKA_ID) on every token present. */
  async listCertificates(now: Date): Promise<TokenCertificate[]> {
    const listed: TokenCertificate[] = [];
    for (const token of await this.registry.refresh()) {
      try {
        const found = await this.registry.withToken(token, async (slot, g, present) => {
          const session = openSession(slot, g);
          try {
            const objects = readObjects(session, g);
            return objects.certificates.flatMap(({ der, id }) => {
              const facts = readCertificateFacts(der);
              if (!facts || !isSigningCertificate(facts, now)) return [];
              // Tokens that hide private keys before login show the public key of the pair.
              if (id.length === 0 || !objects.keyIds.has(id.toString('hex'))) return [];
              return [describeCertificate(present, id, facts)];
            });
          } finally {
            session.close();
          }
        });
        listed.push(...found);
      } catch (error) {
        // A token pulled out while being read is simply not listed.
        if (!(error instanceof AgentFailure && error.code === 'TOKEN_REMOVED')) throw error;
      }
    }
    return listed;
  }

  /**
   * One signature: the certificate found again, the mechanism chosen, the user's consent, the
   * PIN, the signed attributes signed. Every check that needs no user runs before the user is
   * asked; the module stays reserved for this request until it ends.
   */
  async sign(request: SignOnToken): Promise<TokenSignature> {
    const locator = parseCertificateId(request.certificateId);
    return this.registry.withToken(locator, async (slot, g, token) => {
      const session = openSession(slot, g);
      let loggedIn = false;
      try {
        const objects = readObjects(session, g);
        const entry = objects.certificates.find(
          ({ der, id }) =>
            id.equals(locator.keyId) && certificateHashPrefix(der).equals(locator.certificateHash),
        );
        const facts = entry ? readCertificateFacts(entry.der) : undefined;
        if (!entry || !facts || !isSigningCertificate(facts, request.now)) {
          throw new AgentFailure(
            'CERTIFICATE_NOT_FOUND',
            `no valid signing certificate ${request.certificateId} on token "${token.label}"`,
          );
        }
        const mechanisms = mechanismsFor(
          slot,
          facts.keyAlgorithm,
          this.options.avoidedMechanisms?.(token.module) ?? [],
        );
        if ((token.flags & tokenFlag.USER_PIN_LOCKED) !== 0) {
          throw new AgentFailure('PIN_LOCKED', `the user PIN of "${token.label}" is locked`);
        }
        const described = describeCertificate(token, entry.id, facts);
        const consent: SignConsent = {
          origin: request.origin,
          serviceName: request.serviceName,
          documentTitle: request.documentTitle,
          documentDigestHex: request.documentDigest.toString('hex'),
          certificate: {
            subject: described.subject,
            issuer: described.issuer,
            serialNumber: described.serialNumber,
            notAfter: described.notAfter,
          },
          token: { label: token.label, serialNumber: token.serialNumber, module: token.module },
        };
        if (!(await request.prompts.confirmSign(consent))) {
          throw new AgentFailure('USER_CANCELLED', 'the user declined the signature');
        }
        await this.login(session, slot, token, request, described.subject);
        loggedIn = true;
        const keys = session.find({ class: g.ObjectClass.PRIVATE_KEY, id: locator.keyId });
        if (keys.length === 0) {
          throw new AgentFailure(
            'CERTIFICATE_NOT_FOUND',
            `token "${token.label}" has no private key with CKA_ID ${locator.keyId.toString('hex')}`,
          );
        }
        const key = keys.items(0).toType<import('graphene-pk11').PrivateKey>();
        const attributes = buildSignedAttributes(request.documentDigest, entry.der);
        const signature = signWithFirstAccepted(session, key, mechanisms, attributes, (message) =>
          this.options.log?.(`token "${token.label}": ${message}`),
        );
        return {
          signature,
          signer: entry.der,
          tokenCertificates: objects.certificates.map(({ der }) => der),
        };
      } catch (error) {
        throw this.translate(error, slot, token);
      } finally {
        try {
          if (loggedIn) session.logout();
          session.close();
        } catch {
          // The token is gone with its session.
        }
      }
    });
  }

  private async login(
    session: Session,
    slot: Slot,
    token: PresentToken,
    request: SignOnToken,
    certificateSubject: string,
  ): Promise<void> {
    const flags = slot.getToken().flags;
    const subject = { label: token.label, serialNumber: token.serialNumber, module: token.module };
    let pin: string | undefined;
    if ((flags & tokenFlag.PROTECTED_AUTHENTICATION_PATH) === 0) {
      const answer = await request.prompts.askPin({
        origin: request.origin,
        token: subject,
        certificateSubject,
        ...pinTries(flags),
      });
      if (answer === null)
        throw new AgentFailure('USER_CANCELLED', 'the user closed the PIN window');
      pin = answer;
    }
    try {
      // With a PIN pad the token asks the user itself: C_Login without a PIN.
      session.lib.C_Login(session.handle, 1, pin);
    } catch (error) {
      const code = pkcs11Code(error);
      if (code === ckr.USER_ALREADY_LOGGED_IN) return;
      if (code === ckr.PIN_INCORRECT || code === ckr.PIN_INVALID || code === ckr.PIN_LEN_RANGE) {
        let after = flags;
        try {
          after = slot.getToken().flags;
        } catch {
          // Tries left stay unknown.
        }
        if ((after & tokenFlag.USER_PIN_LOCKED) !== 0) {
          throw new AgentFailure(
            'PIN_LOCKED',
            `the user PIN of "${token.label}" is now locked`,
            pinTries(after),
          );
        }
        throw new AgentFailure('PIN_INCORRECT', `wrong PIN for "${token.label}"`, pinTries(after));
      }
      if (code === ckr.PIN_LOCKED) {
        throw new AgentFailure('PIN_LOCKED', `the user PIN of "${token.label}" is locked`);
      }
      if (code === ckr.FUNCTION_CANCELED) {
        throw new AgentFailure('USER_CANCELLED', 'the PIN entry was cancelled on the token');
      }
      throw error;
    }
  }

  /** PKCS#11 errors as protocol codes: a token that left is TOKEN_REMOVED whatever it said. */
  private translate(error: unknown, slot: Slot, token: PresentToken): unknown {
    if (error instanceof AgentFailure) return error;
    const code = pkcs11Code(error);
    if (code === undefined) return error;
    if (tokenGone.has(code) || !this.registry.stillPresent(slot, token)) {
      return new AgentFailure('TOKEN_REMOVED', `token "${token.label}" was removed`);
    }
    if (code === ckr.MECHANISM_INVALID) {
      return new AgentFailure(
        'MECHANISM_UNSUPPORTED',
        `the token refused the mechanism (${String(error)})`,
      );
    }
    return new AgentFailure(
      'TOKEN_ERROR',
      `token "${token.label}": ${error instanceof Error ? error.message : String(error)}`,
    );
  }
}

/** SHA-256 of the signature value: what the timestamp covers. */
export function signatureImprint(signature: Buffer): Buffer {
  return crypto.createHash('sha256').update(signature).digest();
}
