import { ContentInfo, id_signedData } from '@peculiar/asn1-cms';
import { OCSPResponse } from '@peculiar/asn1-ocsp';
import { AsnConvert } from '@peculiar/asn1-schema';
import { CertificateList } from '@peculiar/asn1-x509';
import type { DssItem } from '../../pdf/signing';
import { readCertificate } from '../certificates/certificate';

const nouns: Record<DssItem['type'], string> = {
  certificate: 'a certificate',
  ocsp: 'an OCSP response',
  crl: 'a CRL',
  timestamp: 'a timestamp token',
};

/** Whether DER `bytes` parse whole as `T`: a re-encoding of the parsed value gives the same bytes length. */
function parsesAs<T>(bytes: Buffer, type: new () => T): T | undefined {
  try {
    return AsnConvert.parse(bytes, type);
  } catch {
    return undefined;
  }
}

function isWhat(type: DssItem['type'], bytes: Buffer): boolean {
  switch (type) {
    case 'certificate':
      try {
        readCertificate(bytes, 'DSS certificate');
        return true;
      } catch {
        return false;
      }
    case 'ocsp':
      return parsesAs(bytes, OCSPResponse) !== undefined;
    case 'crl':
      return parsesAs(bytes, CertificateList) !== undefined;
    case 'timestamp':
      return parsesAs(bytes, ContentInfo)?.contentType === id_signedData;
  }
}

/**
 * Why a new /DSS entry is not what its list says (a certificate under /Certs, an OCSP response
 * under /OCSPs, a CRL under /CRLs, a timestamp token as a VRI /TS), or undefined when it is.
 * "which is not a certificate" completes "adds to /DSS object 9, ".
 */
export function dssItemProblem(item: DssItem): string | undefined {
  if (item.problem) return `which ${item.problem}`;
  if (!item.data) return `which cannot be read`;
  const bytes = Buffer.from(item.data.buffer, item.data.byteOffset, item.data.byteLength);
  return isWhat(item.type, bytes) ? undefined : `which is not ${nouns[item.type]}`;
}
