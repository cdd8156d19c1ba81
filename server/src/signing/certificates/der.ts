/**
 * The few exact DER bytes the checks need (names, the subject public key) read straight from
 * the certificate, so that hashes and comparisons use the bytes the CA signed, not a
 * re-encoding by an ASN.1 library.
 */

interface Element {
  /** The whole TLV. */
  readonly raw: Buffer;
  /** The value only. */
  readonly content: Buffer;
  readonly tag: number;
}

function elementAt(der: Buffer, offset: number): Element {
  if (offset + 2 > der.length) throw new Error('DER: truncated element');
  const tag = der[offset]!;
  if ((tag & 0x1f) === 0x1f) throw new Error('DER: multi-byte tags are not used here');
  let length = der[offset + 1]!;
  let header = 2;
  if (length & 0x80) {
    const count = length & 0x7f;
    if (count === 0 || count > 4) throw new Error('DER: unsupported length');
    length = 0;
    for (let i = 0; i < count; i += 1) length = length * 256 + der[offset + 2 + i]!;
    header += count;
  }
  const end = offset + header + length;
  if (end > der.length) throw new Error('DER: element runs past the end');
  return {
    raw: der.subarray(offset, end),
    content: der.subarray(offset + header, end),
    tag,
  };
}

/** The elements inside a constructed element (SEQUENCE, SET, explicit tag). */
function children(element: Element): Element[] {
  const found: Element[] = [];
  let offset = 0;
  while (offset < element.content.length) {
    const child = elementAt(element.content, offset);
    found.push(child);
    offset += child.raw.length;
  }
  return found;
}

export interface CertificateParts {
  issuer: Buffer;
  subject: Buffer;
  subjectPublicKeyInfo: Buffer;
  /** The subjectPublicKey BIT STRING's bits (without the unused-bits byte): what OCSP hashes. */
  subjectPublicKey: Buffer;
}

/** Raw issuer, subject and key of a DER certificate (RFC 5280 §4.1). */
export function certificateParts(der: Buffer): CertificateParts {
  const certificate = elementAt(der, 0);
  const tbs = children(certificate)[0];
  if (tbs === undefined) throw new Error('DER: not a certificate');
  const fields = children(tbs);
  // version [0] EXPLICIT is optional; it shifts the other fields by one.
  const shift = fields[0]?.tag === 0xa0 ? 1 : 0;
  const issuer = fields[shift + 2];
  const subject = fields[shift + 4];
  const spki = fields[shift + 5];
  if (issuer === undefined || subject === undefined || spki === undefined) {
    throw new Error('DER: not a certificate');
  }
  const bits = children(spki)[1];
  if (bits === undefined || bits.tag !== 0x03) throw new Error('DER: no subject public key');
  return {
    issuer: issuer.raw,
    subject: subject.raw,
    subjectPublicKeyInfo: spki.raw,
    subjectPublicKey: bits.content.subarray(1),
  };
}

/** The raw issuer Name of a DER CRL (RFC 5280 §5.1). */
export function crlIssuer(der: Buffer): Buffer {
  const tbs = children(elementAt(der, 0))[0];
  if (tbs === undefined) throw new Error('DER: not a CRL');
  const fields = children(tbs);
  // version INTEGER is optional (v2 CRLs carry it).
  const shift = fields[0]?.tag === 0x02 ? 1 : 0;
  const issuer = fields[shift + 1];
  if (issuer === undefined) throw new Error('DER: not a CRL');
  return issuer.raw;
}

/**
 * The certificates a BasicOCSPResponse carries (`certs [0] EXPLICIT SEQUENCE OF Certificate`,
 * RFC 6960 §4.2.1), byte for byte as the responder sent them.
 */
export function ocspResponseCertificates(basicResponse: Buffer): Buffer[] {
  const fields = children(elementAt(basicResponse, 0));
  const certs = fields.find((field) => field.tag === 0xa0);
  if (certs === undefined) return [];
  const list = children(certs)[0];
  return list === undefined ? [] : children(list).map((certificate) => certificate.raw);
}
