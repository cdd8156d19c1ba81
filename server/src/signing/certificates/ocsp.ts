import crypto from 'node:crypto';
import { CodedError } from '@esign/shared';
import { cmsOids, contextTag, derBytes, derChildren, readDerElement } from '@esign/shared/cms';
import {
  BasicOCSPResponse,
  CertID,
  id_kp_OCSPSigning,
  id_pkix_ocsp_basic,
  id_pkix_ocsp_nonce,
  OCSPRequest,
  OCSPResponse,
  OCSPResponseStatus,
  Request,
  TBSRequest,
} from '@peculiar/asn1-ocsp';
import { AsnConvert, OctetString } from '@peculiar/asn1-schema';
import { AlgorithmIdentifier, CRLReasons, Extension } from '@peculiar/asn1-x509';
import { type CertificateFacts, isIssuedBy, readCertificate, serialHexOf } from './certificate';
import { verifyRevocationSignature } from './revocationSignature';
import type { RevocationDeps } from './revocationTypes';
import type { SourceAnswer } from './sourceAnswer';

/** The hashes a CertID may name, by their OIDs. */
const certIdHashes = { sha1: cmsOids.sha1, sha256: cmsOids.sha256 } as const;
type CertIdHash = keyof typeof certIdHashes;

/** An OCSP answer is a few KB; a delegated responder certificate included. */
const maxOcspBytes = 64 * 1024;

export interface OcspQuery {
  certificate: CertificateFacts;
  issuer: CertificateFacts;
  url: string;
  hash: CertIdHash;
  timeoutMs: number;
  skewMs: number;
}

function hashOf(hash: CertIdHash, bytes: Buffer): Buffer {
  return crypto.createHash(hash).update(bytes).digest();
}

type CertIdSubject = Pick<OcspQuery, 'certificate' | 'issuer'>;

function certIdFor(query: CertIdSubject, hash: CertIdHash): CertID {
  return new CertID({
    hashAlgorithm: new AlgorithmIdentifier({ algorithm: certIdHashes[hash], parameters: null }),
    issuerNameHash: new OctetString(hashOf(hash, query.issuer.parts.subject)),
    issuerKeyHash: new OctetString(hashOf(hash, query.issuer.parts.subjectPublicKey)),
    serialNumber: new Uint8Array(query.certificate.asn.tbsCertificate.serialNumber).buffer,
  });
}

/** The nonce extension's value: the nonce as a DER OCTET STRING (RFC 8954 §2.1). */
function nonceValue(nonce: Buffer): Buffer {
  return Buffer.from(AsnConvert.serialize(new OctetString(nonce)));
}

/** An OCSPRequest (RFC 6960 §4.1) for one certificate, unsigned, with a nonce (RFC 8954). */
export function ocspRequest(query: OcspQuery, nonce: Buffer): Buffer {
  const request = new OCSPRequest({
    tbsRequest: new TBSRequest({
      requestList: [new Request({ reqCert: certIdFor(query, query.hash) })],
      requestExtensions: [
        new Extension({
          extnID: id_pkix_ocsp_nonce,
          critical: false,
          extnValue: new OctetString(nonceValue(nonce)),
        }),
      ],
    }),
  });
  return Buffer.from(AsnConvert.serialize(request));
}

function sameCertId(found: CertID, query: CertIdSubject): boolean {
  const hash = (Object.keys(certIdHashes) as CertIdHash[]).find(
    (h) => certIdHashes[h] === found.hashAlgorithm.algorithm,
  );
  if (hash === undefined) return false;
  const ours = certIdFor(query, hash);
  return (
    Buffer.from(found.issuerNameHash.buffer).equals(Buffer.from(ours.issuerNameHash.buffer)) &&
    Buffer.from(found.issuerKeyHash.buffer).equals(Buffer.from(ours.issuerKeyHash.buffer)) &&
    serialHexOf(found.serialNumber) === query.certificate.serialHex
  );
}

/**
 * Who may sign the answer (RFC 6960 §4.2.2.2): the issuer itself, or a responder certificate
 * included in the answer, issued by the issuer, with id-kp-OCSPSigning, valid now. The
 * responderID is not trusted for this: the signature is.
 */
function signerOf(
  basic: BasicOCSPResponse,
  included: Buffer[],
  query: OcspQuery,
  now: Date,
): { ok: true } | { ok: false; reason: string } {
  const signed = basic.tbsResponseDataRaw;
  if (signed === undefined) return { ok: false, reason: 'the answer has no signed data' };
  if (
    verifyRevocationSignature(
      signed,
      basic.signatureAlgorithm,
      basic.signature,
      query.issuer.x509.publicKey,
    ).ok
  ) {
    return { ok: true };
  }
  const problems: string[] = [];
  for (const der of included) {
    let responder: CertificateFacts;
    try {
      responder = readCertificate(der, 'OCSP responder certificate');
    } catch {
      problems.push('an included certificate does not parse');
      continue;
    }
    const check = verifyRevocationSignature(
      signed,
      basic.signatureAlgorithm,
      basic.signature,
      responder.x509.publicKey,
    );
    if (!check.ok) continue;
    if (!isIssuedBy(responder, query.issuer)) {
      problems.push("the responder certificate was not issued by the certificate's issuer");
    } else if (!(responder.extendedKeyUsage ?? []).includes(id_kp_OCSPSigning)) {
      problems.push('the responder certificate lacks id-kp-OCSPSigning');
    } else if (now < responder.notBefore || now > responder.notAfter) {
      problems.push('the responder certificate is outside its validity');
    } else {
      return { ok: true };
    }
  }
  return {
    ok: false,
    reason:
      problems[0] ?? 'the answer is signed neither by the issuer nor by a responder it authorized',
  };
}

/**
 * The certificates a BasicOCSPResponse carries (`certs [0] EXPLICIT SEQUENCE OF Certificate`,
 * RFC 6960 §4.2.1), byte for byte as the responder sent them.
 */
function ocspResponseCertificates(basicResponse: Buffer): Buffer[] {
  const fields = derChildren(basicResponse, readDerElement(basicResponse));
  const certs = fields.find((field) => field.tag === contextTag(0));
  if (certs === undefined) return [];
  const list = derChildren(basicResponse, certs)[0];
  if (list === undefined) return [];
  return derChildren(basicResponse, list).map((certificate) => {
    const bytes = derBytes(basicResponse, certificate);
    return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  });
}

/**
 * Whether a stored OCSP answer (a DSS entry) is about `certificate` from `issuer`: one of its
 * responses names it. Neither signature nor freshness is judged: this only tells which
 * certificates a DSS already has an answer for.
 */
export function ocspResponseConcerns(
  der: Buffer,
  certificate: CertificateFacts,
  issuer: CertificateFacts,
): boolean {
  try {
    const bytes = AsnConvert.parse(der, OCSPResponse).responseBytes;
    if (bytes === undefined || bytes.responseType !== id_pkix_ocsp_basic) return false;
    const basic = AsnConvert.parse(bytes.response.buffer, BasicOCSPResponse);
    return basic.tbsResponseData.responses.some((single) =>
      sameCertId(single.certID, { certificate, issuer }),
    );
  } catch {
    return false;
  }
}

/** Reads and judges an OCSP answer for `query`; exported for tests of hand-made answers. */
export function judgeOcspResponse(
  der: Buffer,
  query: OcspQuery,
  nonce: Buffer | null,
  now: Date,
): SourceAnswer {
  let response: OCSPResponse;
  let basic: BasicOCSPResponse;
  let included: Buffer[];
  try {
    response = AsnConvert.parse(der, OCSPResponse);
    if (response.responseStatus !== OCSPResponseStatus.successful) {
      return {
        kind: 'unusable',
        reason: `the OCSP responder answered ${OCSPResponseStatus[response.responseStatus] ?? response.responseStatus}`,
      };
    }
    const bytes = response.responseBytes;
    if (bytes === undefined || bytes.responseType !== id_pkix_ocsp_basic) {
      return { kind: 'unusable', reason: 'the OCSP answer is not a basic response' };
    }
    const basicDer = Buffer.from(bytes.response.buffer);
    basic = AsnConvert.parse(basicDer, BasicOCSPResponse);
    included = ocspResponseCertificates(basicDer);
  } catch {
    return { kind: 'unusable', reason: 'the OCSP answer does not parse' };
  }
  const signer = signerOf(basic, included, query, now);
  if (!signer.ok) return { kind: 'unusable', reason: `OCSP answer refused: ${signer.reason}` };

  const data = basic.tbsResponseData;
  if (nonce !== null) {
    const echoed = data.responseExtensions?.find((e) => e.extnID === id_pkix_ocsp_nonce);
    // The nonce is optional for responders (pre-produced answers carry none); a wrong one is not.
    if (echoed !== undefined && !Buffer.from(echoed.extnValue.buffer).equals(nonceValue(nonce))) {
      return { kind: 'unusable', reason: 'OCSP answer refused: the nonce is not ours' };
    }
  }
  const single = data.responses.find((r) => sameCertId(r.certID, query));
  if (single === undefined) {
    return { kind: 'unusable', reason: 'the OCSP answer is about another certificate' };
  }
  const skew = query.skewMs;
  if (single.thisUpdate.getTime() > now.getTime() + skew) {
    return { kind: 'unusable', reason: 'OCSP answer refused: thisUpdate is in the future' };
  }
  if (single.nextUpdate !== undefined && single.nextUpdate.getTime() < now.getTime() - skew) {
    return { kind: 'unusable', reason: 'OCSP answer refused: stale (nextUpdate has passed)' };
  }
  // Without nextUpdate the responder always has newer information: only a fresh answer counts.
  if (
    single.nextUpdate === undefined &&
    single.thisUpdate.getTime() < now.getTime() - 24 * 3600_000
  ) {
    return { kind: 'unusable', reason: 'OCSP answer refused: older than a day without nextUpdate' };
  }
  const window = {
    thisUpdate: single.thisUpdate,
    ...(single.nextUpdate === undefined ? {} : { nextUpdate: single.nextUpdate }),
  };
  const status = single.certStatus;
  if (status.revoked !== undefined) {
    const reason = status.revoked.revocationReason?.reason;
    return {
      kind: 'answer',
      status: 'revoked',
      revokedAt: status.revoked.revocationTime,
      ...(reason === undefined ? {} : { revocationReason: CRLReasons[reason] }),
      ...window,
    };
  }
  if (status.unknown !== undefined) {
    return {
      kind: 'answer',
      status: 'unknown',
      note: 'the OCSP responder does not know the certificate',
      ...window,
    };
  }
  return { kind: 'answer', status: 'good', ...window };
}

/**
 * Asks the responder at `query.url` (or this process's own, `deps.localOcsp`, when it answers
 * for the issuer) and judges the answer; never throws for network trouble.
 */
export async function askOcsp(
  deps: RevocationDeps,
  query: OcspQuery,
): Promise<{ answer: SourceAnswer; der?: Buffer }> {
  const nonce = crypto.randomBytes(16);
  const body = ocspRequest(query, nonce);
  const local = await deps.localOcsp?.(query.issuer.der, body);
  if (local)
    return { answer: judgeOcspResponse(local, query, nonce, deps.clock.now()), der: local };
  const failed = (detail: string) => ({
    answer: {
      kind: 'unusable',
      reason: `OCSP request to ${query.url} failed (${detail})`,
    } as const,
  });
  let der: Buffer;
  try {
    const fetched = await deps.fetcher.fetch({
      url: query.url,
      method: 'POST',
      headers: { 'Content-Type': 'application/ocsp-request', Accept: 'application/ocsp-response' },
      body,
      timeoutMs: query.timeoutMs,
      maxResponseBytes: maxOcspBytes,
    });
    if (fetched.kind === 'status') {
      return {
        answer: { kind: 'unusable', reason: `the OCSP responder answered HTTP ${fetched.status}` },
      };
    }
    if (fetched.kind === 'failed') return failed(`${fetched.code}: ${fetched.message}`);
    der = fetched.body;
  } catch (error) {
    return failed(error instanceof CodedError ? `${error.code}: ${error.message}` : String(error));
  }
  return { answer: judgeOcspResponse(der, query, nonce, deps.clock.now()), der };
}
