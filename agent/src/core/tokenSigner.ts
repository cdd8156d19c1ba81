import crypto from 'node:crypto';
import type { TokenCertificate } from '@esign/shared';
import { buildSignedAttributes } from '@esign/shared/cms';
import type { PrivateKey, Session, Slot } from 'graphene-pk11';
import {
  type CertificateFacts,
  type CertificateLocator,
  certificateHashPrefix,
  describeCertificate,
  notForSigning,
  parseCertificateId,
  readCertificateFacts,
} from './certificates';
import { AgentFailure } from './errors';
import {
  type KeyMatch,
  type KeyObject,
  keyOfCertificate,
  readKeyObjects,
} from './pkcs11/keyObjects';
import { assertPinUsable, logIn } from './pkcs11/login';
import { mechanismsFor, signWithFirstAccepted } from './pkcs11/mechanisms';
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

export interface TokenSignerOptions {
  /** Mechanisms the settings tell the agent not to use with tokens of this module (by label). */
  avoidedMechanisms?(moduleLabel: string): readonly AgentMechanism[];
  log?(message: string): void;
}

interface TokenObjects {
  certificates: { der: Buffer; id: Buffer }[];
  /** Keys visible now: public ones, and private ones where the token shows them before login. */
  keys: KeyObject[];
}

function readObjects(session: Session, g: Graphene, withKeys = true): TokenObjects {
  const certificates: { der: Buffer; id: Buffer }[] = [];
  const found = session.find({ class: g.ObjectClass.CERTIFICATE });
  for (let index = 0; index < found.length; index++) {
    const read = found.items(index).getAttribute({ value: null, id: null }) as {
      value?: Buffer;
      id?: Buffer;
    };
    if (read.value) certificates.push({ der: read.value, id: read.id ?? Buffer.alloc(0) });
  }
  const keys = withKeys
    ? [...readKeyObjects(session, g, 'private'), ...readKeyObjects(session, g, 'public')]
    : [];
  return { certificates, keys };
}

/** What the log says of a certificate: its subject and CKA_ID. */
function named(facts: CertificateFacts | undefined, id: Buffer): string {
  const subject = facts ? facts.x509.subject.split('\n').reverse().join(',') : 'not X.509';
  return `certificate "${subject}" (CKA_ID ${id.length > 0 ? id.toString('hex') : 'none'})`;
}

/**
 * One certificate of a token as the page sees it: valid for signing now, with a key. The key is
 * found by CKA_ID or by the certificate's public key among the keys visible before login; on a
 * token that requires login and shows no matching key, it is listed all the same (private keys
 * are often hidden until the PIN, and not every token holds a public-key object) and its key is
 * looked for after login. Every certificate skipped, and why, goes to `note`.
 */
function signingCertificatesOf(
  objects: TokenObjects,
  token: PresentToken,
  now: Date,
  note: (message: string) => void,
): TokenCertificate[] {
  const ids = objects.certificates.map(({ id }) => id);
  return objects.certificates.flatMap(({ der, id }) => {
    const facts = readCertificateFacts(der);
    const refusal = facts ? notForSigning(facts, now) : 'not an X.509 certificate';
    if (!facts || refusal) {
      note(`${named(facts, id)} skipped: ${refusal}`);
      return [];
    }
    const found = keyOfCertificate(
      objects.keys,
      { id, facts },
      { otherCertificateIds: ids.filter((other) => other !== id), privateOnly: false },
    );
    if (!found) {
      if ((token.flags & tokenFlag.LOGIN_REQUIRED) === 0) {
        note(`${named(facts, id)} skipped: no key on the token has its CKA_ID or public key`);
        return [];
      }
      note(
        `${named(facts, id)} listed without a visible key: the token shows no key with its CKA_ID or public key before login; the private key is looked for after the PIN`,
      );
    } else if (found.how !== 'CKA_ID') {
      note(`${named(facts, id)} matched to a key by ${found.how}`);
    }
    return [describeCertificate(token, id, facts)];
  });
}

/** The certificate a `sign` names, found again on its token and still valid for signing. */
function certificateToSignWith(
  objects: TokenObjects,
  locator: CertificateLocator,
  request: SignOnToken,
  token: PresentToken,
): { der: Buffer; id: Buffer; facts: CertificateFacts } {
  const entry = objects.certificates.find(
    ({ der, id }) =>
      id.equals(locator.keyId) && certificateHashPrefix(der).equals(locator.certificateHash),
  );
  const facts = entry ? readCertificateFacts(entry.der) : undefined;
  const refusal = facts ? notForSigning(facts, request.now) : undefined;
  if (!entry || !facts || refusal) {
    throw new AgentFailure(
      'CERTIFICATE_NOT_FOUND',
      `no valid signing certificate ${request.certificateId} on token "${token.label}"${refusal ? `: ${refusal}` : ''}`,
    );
  }
  return { ...entry, facts };
}

/** The token as the user is shown it. */
const tokenShown = (token: PresentToken) => ({
  label: token.label,
  serialNumber: token.serialNumber,
  module: token.module,
});

/** What the consent window shows for this request and this certificate. */
function consentOf(
  request: SignOnToken,
  token: PresentToken,
  certificate: TokenCertificate,
): SignConsent {
  return {
    origin: request.origin,
    serviceName: request.serviceName,
    documentTitle: request.documentTitle,
    documentDigestHex: request.documentDigest.toString('hex'),
    certificate: {
      subject: certificate.subject,
      issuer: certificate.issuer,
      serialNumber: certificate.serialNumber,
      notAfter: certificate.notAfter,
    },
    token: tokenShown(token),
  };
}

/**
 * The private key of the certificate, looked for once logged in (by CKA_ID, then by public key,
 * see keyObjects.ts). CERTIFICATE_NOT_FOUND when the token holds none.
 */
function privateKeyOf(
  session: Session,
  g: Graphene,
  objects: TokenObjects,
  certificate: { id: Buffer; facts: CertificateFacts },
  label: string,
): { key: PrivateKey; how: KeyMatch } {
  const match = {
    otherCertificateIds: objects.certificates
      .map(({ id }) => id)
      .filter((id) => !id.equals(certificate.id)),
    privateOnly: true,
  };
  // Most tokens pair the two by CKA_ID: one find, before reading every key of the token.
  if (certificate.id.length > 0) {
    const paired = keyOfCertificate(
      readKeyObjects(session, g, 'private', certificate.id),
      certificate,
      match,
    );
    if (paired) return { key: paired.key.object.toType<PrivateKey>(), how: paired.how };
  }
  const privateKeys = readKeyObjects(session, g, 'private');
  const publicKeys = readKeyObjects(session, g, 'public');
  const found = keyOfCertificate([...privateKeys, ...publicKeys], certificate, match);
  if (!found) {
    throw new AgentFailure(
      'CERTIFICATE_NOT_FOUND',
      `token "${label}" holds no private key for ${named(certificate.facts, certificate.id)}: none of its ${privateKeys.length} private keys has its CKA_ID or public key`,
    );
  }
  return { key: found.key.object.toType<PrivateKey>(), how: found.how };
}

/**
 * The token's signature checked with the certificate's public key before it leaves: a key found
 * by anything but its public key, or token firmware that signs wrongly, must not produce a
 * signature that fails later at the server with no word of why.
 */
function assertSignatureMatches(
  signature: Buffer,
  attributes: Uint8Array,
  facts: CertificateFacts,
  how: KeyMatch,
): void {
  const verifies = crypto.verify(
    'sha256',
    attributes,
    { key: facts.x509.publicKey, dsaEncoding: 'der' },
    signature,
  );
  if (!verifies) {
    throw new AgentFailure(
      'TOKEN_ERROR',
      `the token's signature with the key found by ${how} does not verify with the certificate's public key`,
    );
  }
}

/** Ends a session, logged out first when it logged in. */
function closeSession(session: Session, loggedIn: boolean): void {
  try {
    if (loggedIn) session.logout();
    session.close();
  } catch {
    // The token is gone with its session.
  }
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

  /** What the log was told of listed and skipped certificates: each said once, not per list. */
  private readonly noted = new Set<string>();

  private note(token: PresentToken, message: string): void {
    const line = `token "${token.label}": ${message}`;
    if (this.noted.has(line)) return;
    if (this.noted.size >= 1000) this.noted.clear();
    this.noted.add(line);
    this.options.log?.(line);
  }

  /** Signing certificates (usage, validity, a key found for each) on every token present. */
  async listCertificates(now: Date): Promise<TokenCertificate[]> {
    const listed: TokenCertificate[] = [];
    for (const token of await this.registry.refresh()) {
      // A token pulled out meanwhile is simply not listed.
      const found = await this.registry.ifPresent(token, async (slot, g, present) => {
        const session = slot.open(g.SessionFlag.SERIAL_SESSION);
        try {
          return signingCertificatesOf(readObjects(session, g), present, now, (message) =>
            this.note(present, message),
          );
        } finally {
          session.close();
        }
      });
      listed.push(...(found?.value ?? []));
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
      const session = slot.open(g.SessionFlag.SERIAL_SESSION);
      let loggedIn = false;
      try {
        // The certificates only: the key is looked for once logged in (privateKeyOf).
        const objects = readObjects(session, g, false);
        const certificate = certificateToSignWith(objects, locator, request, token);
        const avoided = this.options.avoidedMechanisms?.(token.module) ?? [];
        const mechanisms = mechanismsFor(slot, certificate.facts.keyAlgorithm, avoided);
        assertPinUsable(token);
        const described = describeCertificate(token, certificate.id, certificate.facts);
        if (!(await request.prompts.confirmSign(consentOf(request, token, described)))) {
          throw new AgentFailure('USER_CANCELLED', 'the user declined the signature');
        }
        await logIn(session, slot, request.prompts.askPin, {
          origin: request.origin,
          token: tokenShown(token),
          certificateSubject: described.subject,
        });
        loggedIn = true;
        const { key, how } = privateKeyOf(session, g, objects, certificate, token.label);
        if (how !== 'CKA_ID') {
          this.note(
            token,
            `${named(certificate.facts, certificate.id)}: private key found by ${how}`,
          );
        }
        const attributes = buildSignedAttributes(request.documentDigest, certificate.der);
        const signature = signWithFirstAccepted(session, key, mechanisms, attributes, (message) =>
          this.options.log?.(`token "${token.label}": ${message}`),
        );
        assertSignatureMatches(signature, attributes, certificate.facts, how);
        return {
          signature,
          signer: certificate.der,
          tokenCertificates: objects.certificates.map(({ der }) => der),
        };
      } catch (error) {
        const translated = this.translate(error, slot, token);
        if (translated instanceof AgentFailure && translated.code === 'CERTIFICATE_NOT_FOUND') {
          this.options.log?.(`sign refused, CERTIFICATE_NOT_FOUND: ${translated.message}`);
        }
        throw translated;
      } finally {
        closeSession(session, loggedIn);
      }
    });
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
