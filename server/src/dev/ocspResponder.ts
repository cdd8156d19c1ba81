import crypto from 'node:crypto';
import {
  BasicOCSPResponse,
  type CertID,
  CertStatus,
  id_pkix_ocsp_basic,
  id_pkix_ocsp_nonce,
  OCSPRequest,
  OCSPResponse,
  OCSPResponseStatus,
  ResponderID,
  ResponseBytes,
  ResponseData,
  SingleResponse,
} from '@peculiar/asn1-ocsp';
import { AsnConvert, OctetString } from '@peculiar/asn1-schema';
import { AlgorithmIdentifier, Certificate } from '@peculiar/asn1-x509';
import {
  type CertificateFacts,
  readCertificate,
  serialHexOf,
} from '../signing/certificates/certificate';
import { type CaDeps, developmentCa } from './developmentCa';
import { developmentCaRecorded } from './queries';

/**
 * The development CA's OCSP responder (RFC 6960), so that development and sandbox signatures
 * carry revocation answers (B-LT) like those of a real CA. It answers for the certificates the
 * CA issued (development_ca_issued and the TSA's): `good` for those it has a record of,
 * `unknown` for any other serial (it revokes nothing: development keys are never revoked).
 * Answers are signed by the CA itself (RFC 6960 4.2.2.2 allows the issuer), carry the CA's
 * certificate, echo the request's nonce (RFC 8954) and hold for a day. A request about another
 * CA gets `unauthorized`, bytes that are no OCSPRequest `malformedRequest`: always a DER
 * OCSPResponse, never an HTTP error. Never used in production (the CA refuses it there).
 */

/** How long an answer holds (its nextUpdate): caches keep it that long. */
const validityMs = 24 * 3600_000;
/** More requests in one OCSPRequest than any client sends. */
const maxRequests = 16;

const hashes: Record<string, 'sha1' | 'sha256'> = {
  '1.3.14.3.2.26': 'sha1',
  '2.16.840.1.101.3.4.2.1': 'sha256',
};
const sha256WithRsa = '1.2.840.113549.1.1.11';

const digest = (hash: string, bytes: Buffer) => crypto.createHash(hash).update(bytes).digest();

function failure(status: OCSPResponseStatus): Buffer {
  return Buffer.from(AsnConvert.serialize(new OCSPResponse({ responseStatus: status })));
}

/** Whether a CertID names `ca` as the issuer (name and key hashes in the CertID's algorithm). */
function namesIssuer(certId: CertID, ca: CertificateFacts): boolean {
  const hash = hashes[certId.hashAlgorithm.algorithm];
  if (hash === undefined) return false;
  return (
    Buffer.from(certId.issuerNameHash.buffer).equals(digest(hash, ca.parts.subject)) &&
    Buffer.from(certId.issuerKeyHash.buffer).equals(digest(hash, ca.parts.subjectPublicKey))
  );
}

/** The DER OCSPResponse to a DER OCSPRequest, as of the clock's now. */
export async function developmentOcspResponse(deps: CaDeps, requestDer: Buffer): Promise<Buffer> {
  let request: OCSPRequest;
  try {
    request = AsnConvert.parse(requestDer, OCSPRequest);
  } catch {
    return failure(OCSPResponseStatus.malformedRequest);
  }
  const asked = request.tbsRequest.requestList;
  if (asked.length === 0 || asked.length > maxRequests) {
    return failure(OCSPResponseStatus.malformedRequest);
  }
  const ca = await developmentCa(deps);
  const caFacts = readCertificate(ca.certificate, 'development CA certificate');
  if (!asked.every((one) => namesIssuer(one.reqCert, caFacts))) {
    return failure(OCSPResponseStatus.unauthorized);
  }
  const issued = await Promise.all(
    asked.map((one) => ca.hasIssued(serialHexOf(one.reqCert.serialNumber))),
  );
  // Whole seconds: GeneralizedTime in DER carries no fraction here.
  const now = new Date(Math.floor(deps.clock.now().getTime() / 1000) * 1000);
  const nonce = request.tbsRequest.requestExtensions?.find((e) => e.extnID === id_pkix_ocsp_nonce);
  const data = new ResponseData({
    responderID: new ResponderID({
      byKey: new OctetString(digest('sha1', caFacts.parts.subjectPublicKey)),
    }),
    producedAt: now,
    responses: asked.map(
      (one, index) =>
        new SingleResponse({
          certID: one.reqCert,
          certStatus: new CertStatus(issued[index] ? { good: null } : { unknown: null }),
          thisUpdate: now,
          nextUpdate: new Date(now.getTime() + validityMs),
        }),
    ),
    ...(nonce ? { responseExtensions: [nonce] } : {}),
  });
  const signed = Buffer.from(AsnConvert.serialize(data));
  const basic = new BasicOCSPResponse({
    tbsResponseData: data,
    signatureAlgorithm: new AlgorithmIdentifier({ algorithm: sha256WithRsa, parameters: null }),
    signature: new Uint8Array(ca.sign(signed)).buffer,
    certs: [AsnConvert.parse(ca.certificate, Certificate)],
  });
  return Buffer.from(
    AsnConvert.serialize(
      new OCSPResponse({
        responseStatus: OCSPResponseStatus.successful,
        responseBytes: new ResponseBytes({
          responseType: id_pkix_ocsp_basic,
          response: new OctetString(AsnConvert.serialize(basic)),
        }),
      }),
    ),
  );
}

/**
 * The responder as the revocation checks reach it without the network (see
 * RevocationDeps.localOcsp): the answer when `issuer` is the development CA, else null.
 */
export async function localDevelopmentOcsp(
  deps: CaDeps,
  issuer: Buffer,
  requestDer: Buffer,
): Promise<Buffer | null> {
  // No CA yet: it issued nothing (and asking about another CA's certificate creates none).
  if (!(await developmentCaRecorded(deps.db))) return null;
  const ca = await developmentCa(deps);
  if (!ca.certificate.equals(issuer)) return null;
  return developmentOcspResponse(deps, requestDer);
}
