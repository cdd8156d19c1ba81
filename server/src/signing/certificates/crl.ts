import { CodedError } from '@esign/shared';
import { DerError, derBytes, derChildren, derTag, readDerElement } from '@esign/shared/cms';
import { AsnConvert } from '@peculiar/asn1-schema';
import {
  CertificateList,
  CRLReason,
  CRLReasons,
  IssuingDistributionPoint,
  id_ce_authorityKeyIdentifier,
  id_ce_certificateIssuer,
  id_ce_cRLNumber,
  id_ce_cRLReasons,
  id_ce_invalidityDate,
  id_ce_issuingDistributionPoint,
} from '@peculiar/asn1-x509';
import { type CertificateFacts, hasKeyUsage, keyUsageBits, serialHexOf } from './certificate';
import { verifyRevocationSignature } from './revocationSignature';
import type { RevocationDeps } from './revocationTypes';
import type { SourceAnswer } from './sourceAnswer';

export interface CrlQuery {
  certificate: CertificateFacts;
  issuer: CertificateFacts;
  timeoutMs: number;
  maxBytes: number;
  skewMs: number;
}

/** CRL extensions we understand; any other critical one makes the CRL unusable (RFC 5280 §5.2). */
const understoodCrlExtensions = new Set([
  id_ce_authorityKeyIdentifier,
  id_ce_cRLNumber,
  id_ce_issuingDistributionPoint,
]);
const understoodEntryExtensions = new Set([id_ce_cRLReasons, id_ce_invalidityDate]);

/** A CRL served as PEM instead of DER (seen in the wild) is read too. */
function derOf(body: Buffer): Buffer {
  const text = body.subarray(0, 64).toString('latin1');
  if (!text.startsWith('-----BEGIN X509 CRL-----')) return body;
  const base64 = body
    .toString('latin1')
    .replace(/-----(BEGIN|END) X509 CRL-----/g, '')
    .replace(/\s+/g, '');
  return Buffer.from(base64, 'base64');
}

/** The raw issuer Name of a DER CRL (RFC 5280 §5.1); DerError when it is none. */
function crlIssuer(der: Buffer): Buffer {
  const tbs = derChildren(der, readDerElement(der))[0];
  if (tbs === undefined) throw new DerError('not a CRL');
  const fields = derChildren(der, tbs);
  // version INTEGER is optional (v2 CRLs carry it).
  const shift = fields[0]?.tag === derTag.integer ? 1 : 0;
  const issuer = fields[shift + 1];
  if (issuer === undefined) throw new DerError('not a CRL');
  const bytes = derBytes(der, issuer);
  return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
}

/** Whether a stored CRL (a DSS entry) is from the issuer of `certificate`; not judged. */
export function crlConcerns(der: Buffer, certificate: CertificateFacts): boolean {
  try {
    return crlIssuer(der).equals(certificate.parts.issuer);
  } catch {
    return false;
  }
}

/** Judges a CRL for `query.certificate`; exported for tests of hand-made CRLs. */
export function judgeCrl(der: Buffer, query: CrlQuery, now: Date): SourceAnswer {
  let crl: CertificateList;
  let issuerName: Buffer;
  try {
    crl = AsnConvert.parse(der, CertificateList);
    issuerName = crlIssuer(der);
  } catch {
    return { kind: 'unusable', reason: 'the CRL does not parse' };
  }
  const { issuer, certificate } = query;
  if (!issuerName.equals(certificate.parts.issuer)) {
    return { kind: 'unusable', reason: 'the CRL is from another issuer' };
  }
  if (!hasKeyUsage(issuer, keyUsageBits.cRLSign)) {
    return { kind: 'unusable', reason: 'the issuer may not sign CRLs (keyUsage lacks cRLSign)' };
  }
  const signed = crl.tbsCertListRaw;
  const signature =
    signed === undefined
      ? ({ ok: false, reason: 'no signed data' } as const)
      : verifyRevocationSignature(
          signed,
          crl.signatureAlgorithm,
          crl.signature,
          issuer.x509.publicKey,
        );
  if (!signature.ok) return { kind: 'unusable', reason: `CRL refused: ${signature.reason}` };

  const list = crl.tbsCertList;
  for (const extension of list.crlExtensions ?? []) {
    if (extension.critical && !understoodCrlExtensions.has(extension.extnID)) {
      return {
        kind: 'unusable',
        reason: `CRL refused: unknown critical extension ${extension.extnID}`,
      };
    }
    if (extension.extnID === id_ce_issuingDistributionPoint) {
      const scope = AsnConvert.parse(extension.extnValue, IssuingDistributionPoint);
      const isCa = certificate.basicConstraintsCa === true;
      if (
        scope.indirectCRL ||
        scope.onlySomeReasons !== undefined ||
        scope.onlyContainsAttributeCerts ||
        (scope.onlyContainsCACerts && !isCa) ||
        (scope.onlyContainsUserCerts && isCa)
      ) {
        return {
          kind: 'unusable',
          reason: 'the CRL does not cover this certificate (issuingDistributionPoint)',
        };
      }
    }
  }
  const thisUpdate = list.thisUpdate.getTime();
  const nextUpdate = list.nextUpdate?.getTime();
  if (thisUpdate.getTime() > now.getTime() + query.skewMs) {
    return { kind: 'unusable', reason: 'CRL refused: thisUpdate is in the future' };
  }
  if (nextUpdate === undefined || nextUpdate.getTime() < now.getTime() - query.skewMs) {
    return { kind: 'unusable', reason: 'CRL refused: stale (nextUpdate has passed or is missing)' };
  }
  const window = { thisUpdate, nextUpdate };
  const entry = (list.revokedCertificates ?? []).find(
    (e) => serialHexOf(e.userCertificate) === certificate.serialHex,
  );
  if (entry === undefined) return { kind: 'answer', status: 'good', ...window };
  const extensions = entry.crlEntryExtensions ?? [];
  const critical = extensions.find((e) => e.critical && !understoodEntryExtensions.has(e.extnID));
  if (critical !== undefined) {
    // certificateIssuer (indirect CRLs) among them: we cannot tell whose serial this is.
    const what =
      critical.extnID === id_ce_certificateIssuer ? 'certificateIssuer' : critical.extnID;
    return { kind: 'unusable', reason: `CRL refused: entry with critical extension ${what}` };
  }
  const reasonExtension = extensions.find((e) => e.extnID === id_ce_cRLReasons);
  const reason =
    reasonExtension === undefined
      ? undefined
      : AsnConvert.parse(reasonExtension.extnValue, CRLReason).reason;
  if (reason === CRLReasons.removeFromCRL) return { kind: 'answer', status: 'good', ...window };
  return {
    kind: 'answer',
    status: 'revoked',
    revokedAt: entry.revocationDate.getTime(),
    ...(reason === undefined ? {} : { revocationReason: CRLReasons[reason] }),
    ...window,
  };
}

/** Fetches the CRL at `url` and judges it; never throws for network trouble. */
export async function askCrl(
  deps: RevocationDeps,
  query: CrlQuery,
  url: string,
): Promise<{ answer: SourceAnswer; der?: Buffer }> {
  const failed = (detail: string) => ({
    answer: { kind: 'unusable', reason: `CRL download from ${url} failed (${detail})` } as const,
  });
  let der: Buffer;
  try {
    const fetched = await deps.fetcher.fetch({
      url,
      method: 'GET',
      timeoutMs: query.timeoutMs,
      maxResponseBytes: query.maxBytes,
    });
    if (fetched.kind === 'status') {
      return {
        answer: { kind: 'unusable', reason: `the CRL server answered HTTP ${fetched.status}` },
      };
    }
    if (fetched.kind === 'failed') return failed(`${fetched.code}: ${fetched.message}`);
    der = derOf(fetched.body);
  } catch (error) {
    return failed(error instanceof CodedError ? `${error.code}: ${error.message}` : String(error));
  }
  return { answer: judgeCrl(der, query, deps.clock.now()), der };
}
