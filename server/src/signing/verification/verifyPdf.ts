import crypto from 'node:crypto';
import { cmsOids, hashOf } from '@esign/shared/cms';
import { EngineError } from '../../pdf/engineError';
import {
  type DssMaterial,
  digestByteRange,
  type PdfSignatureInfo,
  type UnreadableSignatureInfo,
} from '../../pdf/signing';
import { runPdfTask } from '../../pdf/worker/pool';
import { readDssTask, readSignaturesTask } from '../../pdf/worker/tasks';
import type { RevocationDeps } from '../certificates';
import {
  type CertificateFacts,
  readCertificate,
  readCertificateIfAny,
  subjectName,
} from '../certificates/certificate';
import { certificateIdentity, identifierKinds } from '../certificates/identity';
import { checkSignerCertificate } from '../certificates/signerCheck';
import {
  type ParsedSignedData,
  parseSignedData,
  readSignedAttributes,
  signingCertificateMatches,
  verifyRawSignature,
} from '../cms';
import { TimestampInvalid } from '../timestamps/errors';
import { verifyTimestampToken } from '../timestamps/verifyToken';
import type { TrustPolicies, TrustPolicy } from '../trustPolicy';
import { type DisallowedChange, judgeLaterRevisions } from './changes';
import { levelChain, type PadesLevel, padesLevel, signatureMaterial } from './level';
import { chainRevocationAt } from './revocation';

/** What verifying needs: a clock, the fetcher and cache of the revocation checks, the trust policy. */
export type VerificationDeps = RevocationDeps & { trust: TrustPolicies };

export interface VerifyPdfOptions {
  /** The tenant whose trust anchors apply, with the global ones. */
  tenantId: number | null;
  /** The validation time: "now" for signatures without a timestamp. Default: the clock's now. */
  at?: Date;
}

export type CertificateStatus = 'valid' | 'expired' | 'revoked' | 'untrusted' | 'unknown';

export interface SignatureVerification {
  fieldName: string;
  signerName: string | null;
  /** The timestamp's genTime, else the signature dictionary's /M (ISO 8601); null with neither. */
  signedAt: string | null;
  isValid: boolean;
  integrityCheck: 'passed' | 'failed';
  certificateStatus: CertificateStatus;
  timestampVerified: boolean;
  coversWholeDocument: boolean;
  modifiedAfterSigning: 'none' | 'allowed' | 'disallowed';
  subFilter: string | null;
  /** What the file proves (see padesLevel); a document timestamp's own entry says B-T. */
  level: PadesLevel;
  certificate: {
    subject: string;
    issuer: string;
    serialNumber: string;
    validFrom: string;
    validTo: string;
    /** The kinds of identifiers the certificate names its subject by (CCCD, MST, email…). */
    identifiers: string[];
  } | null;
  /** Why the signature is not valid (or what is worth knowing), in English. */
  problems: string[];
  /** Each change after the signature that it does not allow (also listed in `problems`). */
  changes: DisallowedChange[];
}

export interface PdfVerification {
  /** At least one signature, every one valid, and nothing disallowed after any of them. */
  isValid: boolean;
  signatures: SignatureVerification[];
}

const sha256 = (bytes: Buffer) => crypto.createHash('sha256').update(bytes).digest();
const messageOf = (error: unknown) => (error instanceof Error ? error.message : String(error));

/** A 4xx from a checking library is a finding about the signature; anything else is a bug. */
function finding(error: unknown): string {
  if (error instanceof EngineError) return error.message;
  throw error;
}

function commonName(facts: CertificateFacts): string | undefined {
  return facts.x509.subject
    .split('\n')
    .find((line) => line.startsWith('CN='))
    ?.slice(3);
}

function certificateSummary(facts: CertificateFacts): SignatureVerification['certificate'] {
  return {
    subject: subjectName(facts),
    issuer: facts.x509.issuer.replaceAll('\n', ', '),
    serialNumber: facts.serialHex,
    validFrom: facts.notBefore.toISOString(),
    validTo: facts.notAfter.toISOString(),
    identifiers: identifierKinds(certificateIdentity(facts.der)),
  };
}

/** The CMS signature over the signed attributes, with the certificate named by the SignerInfo. */
function cmsSignatureProblem(
  parsed: ParsedSignedData,
  signedAttributes: Buffer,
  certificate: CertificateFacts,
  hashName: string,
): string | undefined {
  if (hashName === 'sha256' && parsed.signatureAlgorithm !== undefined) {
    try {
      const scheme = {
        rsaPkcs1Sha256: 'pkcs1',
        rsaPssSha256: 'pss',
        ecdsaSha256: undefined,
      } as const;
      const wanted = scheme[parsed.signatureAlgorithm];
      verifyRawSignature({
        signedAttributes,
        signature: parsed.signature,
        certificate: certificate.der,
        ...(wanted === undefined ? {} : { scheme: wanted }),
      });
      return undefined;
    } catch (error) {
      return `The CMS signature does not verify: ${finding(error)}`;
    }
  }
  // Other tools' choices (SHA-1, SHA-384 ...): RSA PKCS#1 v1.5 or DER ECDSA, as Node reads them.
  try {
    const key = certificate.x509.publicKey;
    const ok = crypto.verify(
      hashName,
      signedAttributes,
      { key, dsaEncoding: 'der' },
      parsed.signature,
    );
    return ok ? undefined : 'The CMS signature does not verify over the signed attributes';
  } catch (error) {
    return `The CMS signature cannot be checked: ${messageOf(error)}`;
  }
}

interface IntegrityResult {
  integrity: 'passed' | 'failed';
  /** ESS binding missing where PAdES requires it: not an integrity failure, still not valid. */
  essMissing: boolean;
  parsed: ParsedSignedData | undefined;
  signer: CertificateFacts | undefined;
  problems: string[];
}

/** ByteRange, digest, CMS signature and signing-certificate binding, as pyHanko orders them. */
async function checkIntegrity(
  pdfPath: string,
  signature: PdfSignatureInfo,
): Promise<IntegrityResult> {
  const problems: string[] = [];
  const result = (integrity: 'passed' | 'failed', extra: Partial<IntegrityResult> = {}) => ({
    integrity,
    essMissing: false,
    parsed: undefined,
    signer: undefined,
    problems,
    ...extra,
  });
  if (signature.byteRange[0] !== 0)
    problems.push('The byte range does not start at the beginning of the file');
  if (!signature.holeIsContents)
    problems.push("The unsigned gap of the byte range is not exactly the signature's /Contents");
  if (signature.revisionIndex === undefined)
    problems.push('The byte range does not end where a revision of the file ends');
  let parsed: ParsedSignedData;
  try {
    parsed = parseSignedData(signature.contents);
  } catch (error) {
    problems.push(finding(error));
    return result('failed');
  }
  const signer = parsed.signerCertificate
    ? readCertificateIfAny(parsed.signerCertificate, 'signer certificate')
    : undefined;
  const hashName = hashOf(parsed.digestAlgorithmOid);
  if (hashName === undefined) {
    problems.push(`The digest algorithm ${parsed.digestAlgorithmOid} is not supported`);
    return result('failed', { parsed, signer });
  }
  if (parsed.signedAttributes === undefined) {
    problems.push('The CMS signature has no signed attributes (PAdES requires them)');
    return result('failed', { parsed, signer });
  }
  let digest: Buffer;
  try {
    digest = await digestByteRange(pdfPath, signature.byteRange, hashName);
  } catch (error) {
    problems.push(finding(error));
    return result('failed', { parsed, signer });
  }
  let attributes: ReturnType<typeof readSignedAttributes>;
  try {
    attributes = readSignedAttributes(parsed.signedAttributes);
  } catch (error) {
    problems.push(finding(error));
    return result('failed', { parsed, signer });
  }
  if (attributes.contentType !== cmsOids.data)
    problems.push('The content-type signed attribute is not id-data');
  if (attributes.messageDigest === undefined || !attributes.messageDigest.equals(digest))
    problems.push(
      'The document digest does not match the signature (the signed bytes were changed)',
    );
  if (signer === undefined) {
    problems.push('The CMS signature does not carry the certificate of its signer');
    return result('failed', { parsed });
  }
  const signatureProblem = cmsSignatureProblem(parsed, parsed.signedAttributes, signer, hashName);
  if (signatureProblem) problems.push(signatureProblem);
  const reference = attributes.signingCertificateV2 ?? attributes.signingCertificateV1;
  let essMissing = false;
  if (reference && !signingCertificateMatches(reference, signer.der)) {
    problems.push('The signing-certificate attribute names another certificate than the signer');
  } else if (!reference && signature.subFilter === 'ETSI.CAdES.detached') {
    essMissing = true;
  }
  const integrity = problems.length === 0 ? 'passed' : 'failed';
  if (essMissing)
    problems.push('The signature has no signing-certificate attribute (PAdES requires one)');
  return { integrity, essMissing, parsed, signer, problems };
}

interface TrustResult {
  status: CertificateStatus;
  /** The path to a trust anchor, when one was built (signer first). */
  chain: Buffer[] | undefined;
  problems: string[];
}

/**
 * The signer's path to an anchor and its certificates' validity and revocation, at `at`, from
 * `held` (what the file holds for the signature: DSS and CMS) first, else online. The CMS's
 * own certificates (`carried`) come first: a chain given with another end-entity certificate
 * in front (the DSS holds every signer's) does not end at this signer.
 */
async function checkTrust(
  deps: VerificationDeps,
  signer: CertificateFacts,
  carried: Buffer[],
  anchors: readonly Buffer[],
  held: DssMaterial,
  at: Date,
): Promise<TrustResult> {
  // The DSS and the CMS are anyone's to write: what does not parse as a certificate is no link.
  const others = [...carried, ...held.certificates].filter(
    (der) => !der.equals(signer.der) && readCertificateIfAny(der) !== undefined,
  );
  let check: ReturnType<typeof checkSignerCertificate>;
  try {
    check = checkSignerCertificate({ chain: [signer.der, ...others], at, anchors: [...anchors] });
  } catch (error) {
    return { status: 'untrusted', chain: undefined, problems: [finding(error)] };
  }
  switch (check.status) {
    case 'expired':
    case 'not_yet_valid':
      return { status: 'expired', chain: undefined, problems: [check.message] };
    case 'wrong_key_usage':
    case 'untrusted':
      return { status: 'untrusted', chain: undefined, problems: [check.message] };
    case 'valid':
      break;
  }
  const revocation = await chainRevocationAt(deps, check.chain, at, held);
  const status = revocation.status === 'good' ? 'valid' : revocation.status;
  return { status, chain: check.chain, problems: revocation.problems };
}

/** A document timestamp (/DocTimeStamp): its token's imprint is the byte range's digest. */
async function verifyDocumentTimestamp(
  pdfPath: string,
  signature: PdfSignatureInfo,
  anchors: readonly Buffer[],
): Promise<
  Omit<
    SignatureVerification,
    'fieldName' | 'coversWholeDocument' | 'modifiedAfterSigning' | 'changes'
  >
> {
  const problems: string[] = [];
  let integrity: 'passed' | 'failed' = 'passed';
  let status: CertificateStatus = 'valid';
  let genTime: Date | undefined;
  let tsa: CertificateFacts | undefined;
  try {
    const digest = await digestByteRange(pdfPath, signature.byteRange);
    const verified = verifyTimestampToken(signature.contents, {
      imprint: digest,
      trustAnchors: anchors,
      clockSkewMs: 0,
    });
    genTime = verified.genTime;
    tsa = readCertificate(verified.tsaCertificate);
  } catch (error) {
    problems.push(finding(error));
    const code = error instanceof TimestampInvalid ? error.reason : undefined;
    if (code === 'TSA_UNTRUSTED' || code === 'TSA_ISSUER_NOT_CA') status = 'untrusted';
    else if (code === 'TSA_CERTIFICATE_NOT_VALID') status = 'expired';
    else integrity = 'failed';
  }
  return {
    signerName: (tsa && commonName(tsa)) ?? null,
    signedAt: genTime?.toISOString() ?? null,
    isValid: problems.length === 0,
    integrityCheck: integrity,
    certificateStatus: status,
    timestampVerified: problems.length === 0,
    subFilter: signature.subFilter ?? null,
    level: 'B-T',
    certificate: tsa ? certificateSummary(tsa) : null,
    problems,
  };
}

/** What the signatures of one file are judged with. */
interface FileContext {
  policy: TrustPolicy;
  /** The newest DSS. */
  dss: DssMaterial;
  /** Each valid document timestamp: where its signed bytes end and the DSS they hold. */
  archives: { end: number; dss: DssMaterial }[];
  validationTime: Date;
}

async function verifySignature(
  deps: VerificationDeps,
  pdfPath: string,
  signature: PdfSignatureInfo,
  context: FileContext,
): Promise<
  Omit<
    SignatureVerification,
    'fieldName' | 'coversWholeDocument' | 'modifiedAfterSigning' | 'changes'
  >
> {
  const { policy, dss, validationTime } = context;
  const integrity = await checkIntegrity(pdfPath, signature);
  const { parsed, signer } = integrity;
  const problems = [...integrity.problems];

  let genTime: Date | undefined;
  const token = parsed?.timestampToken;
  if (parsed && token) {
    try {
      genTime = verifyTimestampToken(token, {
        imprint: sha256(parsed.signature),
        trustAnchors: policy.timestampAnchors,
        notAfter: validationTime,
        clockSkewMs: 60_000,
      }).genTime;
    } catch (error) {
      problems.push(`The signature timestamp is not valid: ${finding(error)}`);
    }
  }
  // Without a proven time the signer's /M is only a claim: judge at the validation time (EU DSS).
  const at = genTime ?? validationTime;
  let trust: TrustResult = { status: 'unknown', chain: undefined, problems: [] };
  let level: PadesLevel = 'B-B';
  if (signer) {
    const cms = { certificates: parsed?.certificates ?? [], ...parsed?.revocationValues };
    const held = signatureMaterial(dss, cms);
    trust = await checkTrust(deps, signer, cms.certificates, policy.signerAnchors, held, at);
    problems.push(...trust.problems);
    level = padesLevel({
      timestamped: genTime !== undefined,
      ...levelChain(signer, trust.chain, [...cms.certificates, ...dss.certificates]),
      material: held,
      archived: context.archives
        .filter((archive) => archive.end > signature.signedRevisionEnd)
        .map((archive) => signatureMaterial(archive.dss, cms)),
      at,
    });
  }
  const timestampOk = token === undefined || genTime !== undefined;
  const signedAt = genTime ?? signature.signingTime;
  return {
    signerName: (signer && commonName(signer)) ?? signature.signerName ?? null,
    signedAt: signedAt?.toISOString() ?? null,
    isValid:
      integrity.integrity === 'passed' &&
      !integrity.essMissing &&
      trust.status === 'valid' &&
      timestampOk,
    integrityCheck: integrity.integrity,
    certificateStatus: trust.status,
    timestampVerified: token !== undefined && genTime !== undefined,
    subFilter: signature.subFilter ?? null,
    level,
    certificate: signer ? certificateSummary(signer) : null,
    problems,
  };
}

/**
 * Verifies every signature of a PDF, streaming it (the signed bytes are hashed once per
 * signature, never loaded whole): byte range, digest, CMS signature, signing-certificate
 * binding, signature timestamp, the signer's chain to the tenant's and global trust anchors
 * (and the development CA outside production), validity and revocation at the timestamp's
 * time (DSS first, else online), and what later revisions changed. Bad PDFs: 415/422 as
 * pdfErrors; anything wrong with a signature is a finding in its `problems`, never an error.
 */
export async function verifyPdfSignatures(
  deps: VerificationDeps,
  pdfPath: string,
  options: VerifyPdfOptions,
): Promise<PdfVerification> {
  const report = await runPdfTask(readSignaturesTask, pdfPath);
  const { dss } = report;
  const policy = await deps.trust(options.tenantId);
  const validationTime = options.at ?? deps.clock.now();
  // Document timestamps first: a valid one makes the signatures before it B-LTA (see padesLevel).
  const stamps = new Map<PdfSignatureInfo, Awaited<ReturnType<typeof verifyDocumentTimestamp>>>();
  const archives: FileContext['archives'] = [];
  for (const signature of report.signatures) {
    if (signature.type !== 'timestamp') continue;
    const stamp = await verifyDocumentTimestamp(pdfPath, signature, policy.timestampAnchors);
    stamps.set(signature, stamp);
    if (stamp.isValid && signature.revisionIndex !== undefined) {
      const end = signature.signedRevisionEnd;
      archives.push({ end, dss: await runPdfTask(readDssTask, pdfPath, { upTo: end }) });
    }
  }
  const context: FileContext = { policy, dss, archives, validationTime };
  // The certification signature's DocMDP governs every change after it (ISO 32000-2 12.8.2.2).
  const certification = report.signatures.find((s) => s.docMdpPermission !== undefined);
  const signatures: (SignatureVerification & { order: number })[] = [];
  for (const signature of report.signatures) {
    const verified =
      stamps.get(signature) ?? (await verifySignature(deps, pdfPath, signature, context));
    const permission =
      certification && certification.signedRevisionEnd <= signature.signedRevisionEnd
        ? certification.docMdpPermission
        : undefined;
    const verdict = judgeLaterRevisions(signature, permission);
    const problems = [...verified.problems, ...verdict.problems];
    const isLast = signature === report.signatures.at(-1);
    if (isLast && report.trailingBytes > 0) {
      problems.push(
        `${report.trailingBytes} bytes after the last revision belong to no revision; PDF readers ignore them`,
      );
    }
    signatures.push({
      ...verified,
      fieldName: signature.fieldName,
      coversWholeDocument: signature.coversWholeFile,
      modifiedAfterSigning: verdict.modifiedAfterSigning,
      isValid: verified.isValid && verdict.modifiedAfterSigning !== 'disallowed',
      problems,
      changes: verdict.changes,
      order: signature.order,
    });
  }
  for (const unreadable of report.unreadableSignatures) {
    signatures.push({ ...unreadableVerification(unreadable), order: unreadable.order });
  }
  signatures.sort((a, b) => a.order - b.order);
  return {
    isValid: signatures.length > 0 && signatures.every((s) => s.isValid),
    signatures: signatures.map(({ order: _order, ...signature }) => signature),
  };
}

/** A signature field whose signature cannot be read: an invalid signature, saying why. */
function unreadableVerification(signature: UnreadableSignatureInfo): SignatureVerification {
  return {
    fieldName: signature.fieldName,
    signerName: null,
    signedAt: null,
    isValid: false,
    integrityCheck: 'failed',
    certificateStatus: 'unknown',
    timestampVerified: false,
    coversWholeDocument: false,
    modifiedAfterSigning: 'none',
    subFilter: signature.subFilter ?? null,
    level: 'B-B',
    certificate: null,
    problems: [signature.problem],
    changes: [],
  };
}
