import crypto from 'node:crypto';
import type { TokenCertificate } from '@esign/shared';
import { buildSignedAttributes } from '@esign/shared/cms';
import type { PrivateKey, Session, Slot } from 'graphene-pk11';
import {
  type CertificateFacts,
  type CertificateLocator,
  certificateHashPrefix,
  describeCertificate,
  isSigningCertificate,
  parseCertificateId,
  readCertificateFacts,
} from './certificates';
import { AgentFailure } from './errors';
import { assertPinUsable, logIn } from './pkcs11/login';
import { mechanismsFor, signWithFirstAccepted } from './pkcs11/mechanisms';
import { ckr, pkcs11Code, tokenGone } from './pkcs11/returnValues';
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

/** One certificate of a token as the page sees it: a key pair with it, valid for signing now. */
function signingCertificatesOf(
  objects: TokenObjects,
  token: PresentToken,
  now: Date,
): TokenCertificate[] {
  return objects.certificates.flatMap(({ der, id }) => {
    const facts = readCertificateFacts(der);
    if (!facts || !isSigningCertificate(facts, now)) return [];
    // Tokens that hide private keys before login show the public key of the pair.
    if (id.length === 0 || !objects.keyIds.has(id.toString('hex'))) return [];
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
  if (!entry || !facts || !isSigningCertificate(facts, request.now)) {
    throw new AgentFailure(
      'CERTIFICATE_NOT_FOUND',
      `no valid signing certificate ${request.certificateId} on token "${token.label}"`,
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

/** The private key with this CKA_ID (visible once logged in). */
function privateKeyOf(session: Session, g: Graphene, keyId: Buffer, label: string): PrivateKey {
  const keys = session.find({ class: g.ObjectClass.PRIVATE_KEY, id: keyId });
  if (keys.length === 0) {
    throw new AgentFailure(
      'CERTIFICATE_NOT_FOUND',
      `token "${label}" has no private key with CKA_ID ${keyId.toString('hex')}`,
    );
  }
  return keys.items(0).toType<PrivateKey>();
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

  /** Signing certificates (usage, validity, a key with their CKA_ID) on every token present. */
  async listCertificates(now: Date): Promise<TokenCertificate[]> {
    const listed: TokenCertificate[] = [];
    for (const token of await this.registry.refresh()) {
      // A token pulled out meanwhile is simply not listed.
      const found = await this.registry.ifPresent(token, async (slot, g, present) => {
        const session = slot.open(g.SessionFlag.SERIAL_SESSION);
        try {
          return signingCertificatesOf(readObjects(session, g), present, now);
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
        const objects = readObjects(session, g);
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
        const key = privateKeyOf(session, g, locator.keyId, token.label);
        const attributes = buildSignedAttributes(request.documentDigest, certificate.der);
        const signature = signWithFirstAccepted(session, key, mechanisms, attributes, (message) =>
          this.options.log?.(`token "${token.label}": ${message}`),
        );
        return {
          signature,
          signer: certificate.der,
          tokenCertificates: objects.certificates.map(({ der }) => der),
        };
      } catch (error) {
        throw this.translate(error, slot, token);
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
