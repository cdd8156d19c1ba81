import crypto, { X509Certificate } from 'node:crypto';
import { buildSignedAttributes, certificateIssuerAndSerial } from '@esign/shared/cms';
import { EngineError } from '../../pdf/engineError';
import type { DssMaterial } from '../../pdf/signing';
import {
  type ChainRevocation,
  checkChainRevocation,
  checkSignerCertificate,
  type RevocationDeps,
  signerCertificateError,
} from '../certificates';
import { readCertificate } from '../certificates/certificate';
import {
  assembleSignedData,
  cmsErrors,
  fromSignedAttributesError,
  type VerifiedSignature,
  verifyRawSignature,
} from '../cms';
import type { KeyStoreInputs } from '../keys/keyStores';
import { TimestampInvalid } from '../timestamps/errors';
import { type VerifiedTimestamp, verifyTimestampToken } from '../timestamps/verifyToken';
import type { TimestampAuthority, TrustPolicies } from '../trustPolicy';
import { levelChain, padesLevel, signatureMaterial } from '../verification/level';
import { finalizeErrors, type MistakenDigest } from './errors';
import { refusalFor } from './explainRefusal';
import { certificateSummary, contractHashOf, type SignatureSummary } from './summary';

/**
 * What checking a signature needs, engine inputs only: a clock, the trust policy per scope, and
 * the fetcher (and cache) of the revocation checks.
 */
export type CheckDeps = RevocationDeps & { trust: TrustPolicies };

/**
 * What signing with a service key, sealing and archiving need besides `CheckDeps`: the key
 * store's inputs, the timestamp authority, and a directory for temp files.
 */
export type FinalizeDeps = CheckDeps &
  KeyStoreInputs & {
    /** Where signatures get their timestamps. */
    timestamps: TimestampAuthority;
    /** Where the prepared and signed temp files go (`init` creates it). */
    files: { tempDir: string; init(): Promise<void> };
  };

/** What a signer hands in: the signature, its chain (signer first), the timestamp token. */
export interface SignatureEvidence {
  /** Over the signed attributes; ECDSA as DER or raw r||s. */
  signature: Buffer;
  chain: Buffer[];
  timestampToken: Buffer;
}

export interface RevisionToSign {
  fieldName: string;
  documentDigest: Buffer;
  /** A timestamp older than this (less the skew) is not for this revision. */
  notBefore: Date;
  tenantId: number | null;
  /** Digests a client may have signed by mistake, asked only to explain a refusal. */
  mistakenDigests?: () => Promise<MistakenDigest[]>;
  /** The DSS of the prepared revision: with the CMS, what the level is judged on. */
  preparedDss: DssMaterial;
}

export interface CheckedSignature {
  /** The CMS SignedData for /Contents. */
  cms: Buffer;
  /**
   * Validation material obtained (chains, answers), when there are revocation answers: for the
   * DSS of the next revision (or a later DSS update), never appended after the signature.
   */
  dss: DssMaterial | undefined;
  summary: Omit<SignatureSummary, 'signedSha256'>;
}

/** How far a timestamp's genTime may stray from the preparation and our clock. */
const timestampSkewMs = 60_000;
/** How many earlier preparations of the same document a refusal is explained against. */
export const explainedRevisions = 20;

/**
 * Every check of a signature over a prepared revision, in the order a client can act on, and
 * the CMS that goes into the PDF: the attributes are rebuilt from the stored digest and the
 * signer certificate, the signature must verify over them, the timestamp must cover the
 * signature value from an anchored TSA after the preparation, the signer certificate must be
 * usable and (in production) trusted at genTime and not revoked then. Throws a 4xx EngineError.
 */
export async function checkSignature(
  deps: CheckDeps,
  revision: RevisionToSign,
  evidence: SignatureEvidence,
): Promise<CheckedSignature> {
  const { chain } = evidence;
  checkParses(chain);
  const signer = chain[0]!;
  const signedAttributes = attributesFor(revision.documentDigest, signer);
  const verified = await verifiedSignature(deps, revision, evidence, signedAttributes);

  const trust = await deps.trust(revision.tenantId);
  const timestamp = checkedTimestamp(evidence.timestampToken, verified.signature, {
    trustAnchors: trust.timestampAnchors,
    notBefore: revision.notBefore,
    notAfter: deps.clock.now(),
  });
  const at = timestamp.genTime;

  checkLinked(chain);
  const check = checkSignerCertificate({
    chain,
    at,
    anchors: [...trust.signerAnchors],
  });
  const refusal = signerCertificateError(check, trust);
  if (refusal) throw refusal;
  // Accepted untrusted (development, sandbox): the chain as given, which links.
  const path = check.status === 'valid' ? check.chain : chain;

  const revocation = await checkChainRevocation(deps, path, at);
  if (revocation.status === 'revoked') throw revokedError(path, revocation);
  // A CA without OCSP or CRL pointers leaves only a reason.
  const signerRevocation = revocation.certificates[0] ?? { status: 'unknown' as const };

  const cms = assembleSignedData({
    signedAttributes,
    signature: verified.signature,
    signatureAlgorithm: verified.signatureAlgorithm,
    certificates: path,
    timestampToken: evidence.timestampToken,
  });
  const dss = dssOf(path, timestamp.tsaChain, revocation);
  return {
    cms,
    dss,
    summary: {
      fieldName: revision.fieldName,
      signer: certificateSummary(signer),
      signatureAlgorithm: verified.signatureAlgorithm,
      trusted: check.status === 'valid',
      timestamp: {
        genTime: at.toISOString(),
        tsa: certificateSummary(timestamp.tsaCertificate).subject,
        serialNumber: timestamp.serialNumber,
      },
      documentDigest: contractHashOf(revision.documentDigest),
      // What the signed file will prove: the prepared revision's DSS (nothing is appended after
      // the signature) and the CMS, which carries `path`. Verification decides it the same way.
      level: padesLevel({
        timestamped: true,
        ...levelChain(readCertificate(signer), check.status === 'valid' ? check.chain : undefined, [
          ...path,
          ...revision.preparedDss.certificates,
        ]),
        material: signatureMaterial(revision.preparedDss, { certificates: path }),
        archived: [],
        at,
      }),
      revocation: {
        status: signerRevocation.status === 'good' ? 'good' : 'unknown',
        chainStatus: revocation.status === 'good' ? 'good' : 'unknown',
        reasons: revocation.certificates.flatMap((result, index) =>
          result.reasons.map((reason) => `${certificateSummary(path[index]!).subject}: ${reason}`),
        ),
      },
    },
  };
}

/** Every certificate of the chain must be DER X.509: 400 CERTIFICATE_MALFORMED naming which. */
function checkParses(chain: Buffer[]): void {
  if (chain.length === 0) throw cmsErrors.certificateMalformed('The certificate chain is empty');
  for (const [index, certificate] of chain.entries()) {
    try {
      certificateIssuerAndSerial(certificate);
    } catch (error) {
      const mapped = fromSignedAttributesError(error);
      if (mapped instanceof EngineError) {
        throw cmsErrors.certificateMalformed(`certificateChain[${index}]: ${mapped.message}`);
      }
      throw mapped;
    }
  }
}

function attributesFor(documentDigest: Buffer, certificate: Buffer): Uint8Array {
  try {
    return buildSignedAttributes(documentDigest, certificate);
  } catch (error) {
    throw fromSignedAttributesError(error);
  }
}

/**
 * The signature over the rebuilt attributes; when it does not verify, the refusal names the
 * likely mistake (explainRefusal.ts).
 */
async function verifiedSignature(
  deps: CheckDeps,
  revision: RevisionToSign,
  evidence: SignatureEvidence,
  signedAttributes: Uint8Array,
): Promise<VerifiedSignature> {
  const { signature, chain } = evidence;
  try {
    return verifyRawSignature({ signedAttributes, signature, certificate: chain[0]! });
  } catch (error) {
    if (!(error instanceof EngineError)) throw error;
    throw await refusalFor(
      {
        documentDigest: revision.documentDigest,
        signature,
        chain,
        timestampToken: evidence.timestampToken,
        now: deps.clock.now(),
        mistakenDigests: revision.mistakenDigests ?? (async () => []),
      },
      signedAttributes,
      error,
    );
  }
}

/**
 * The token as evidence for this signature: over SHA-256 of the signature value (DER for
 * ECDSA), from a TSA chaining to an anchor, genTime after the preparation and not in the future.
 */
function checkedTimestamp(
  token: Buffer,
  signature: Buffer,
  window: { trustAnchors: readonly Buffer[]; notBefore: Date; notAfter: Date },
): VerifiedTimestamp {
  try {
    return verifyTimestampToken(token, {
      imprint: crypto.createHash('sha256').update(signature).digest(),
      ...window,
      clockSkewMs: timestampSkewMs,
    });
  } catch (error) {
    if (!(error instanceof TimestampInvalid)) throw error;
    switch (error.reason) {
      case 'IMPRINT_MISMATCH':
        throw cmsErrors.timestampImprintMismatch(
          'The timestamp token is not over SHA-256 of this signature value (of its DER form for ECDSA)',
        );
      case 'MALFORMED':
      case 'NOT_TST_INFO':
        throw cmsErrors.timestampTokenMalformed(error.message);
      default:
        throw new EngineError('TIMESTAMP_INVALID', error.message, {
          field: 'timestampToken',
          detailCode: error.reason,
        });
    }
  }
}

/** The chain as sent goes from the signer to each issuer in turn (docs/signing-with-a-token.md). */
function checkLinked(chain: Buffer[]): void {
  const certificates = chain.map((der) => new X509Certificate(der));
  for (let index = 0; index + 1 < certificates.length; index += 1) {
    const child = certificates[index]!;
    const parent = certificates[index + 1]!;
    let linked = false;
    try {
      linked = child.checkIssued(parent) && child.verify(parent.publicKey);
    } catch {
      linked = false;
    }
    if (!linked) throw finalizeErrors.chainNotLinked(index);
  }
}

function revokedError(path: Buffer[], revocation: ChainRevocation): EngineError {
  const index = revocation.certificates.findIndex((result) => result.status === 'revoked');
  const result = revocation.certificates[index]!;
  const which = index === 0 ? 'The signer certificate' : `Chain certificate ${index}`;
  return finalizeErrors.certificateRevoked(
    `${which} "${certificateSummary(path[index]!).subject}" was revoked at ${result.revokedAt?.toISOString() ?? 'an unknown time'}${result.revocationReason ? ` (${result.revocationReason})` : ''}, before the signature`,
  );
}

/** The DSS material: both chains, and every OCSP answer and CRL obtained; none, no DSS. */
function dssOf(
  path: Buffer[],
  tsaChain: Buffer[],
  revocation: ChainRevocation,
): DssMaterial | undefined {
  const ocspResponses = revocation.certificates.flatMap((r) =>
    r.ocspResponse ? [r.ocspResponse] : [],
  );
  const crls = revocation.certificates.flatMap((r) => (r.crl ? [r.crl] : []));
  if (ocspResponses.length === 0 && crls.length === 0) return undefined;
  return { certificates: [...path, ...tsaChain], ocspResponses, crls };
}
