import { cmsOids } from '@esign/shared/cms';
import { AsnConvert } from '@peculiar/asn1-schema';
import { id_ce_subjectAltName, SubjectAlternativeName } from '@peculiar/asn1-x509';
import { EngineError } from '../../pdf/engineError';
import { readCertificate } from './certificate';

/**
 * Who a signer certificate names, as Vietnamese CAs write it, and whether that is the person a
 * signature is expected from (docs/signing-with-a-token.md "Whose certificate").
 *
 * Read from the subject: every `UID` (0.9.2342.19200300.100.1.1) value, labelled `CMND:`,
 * `CCCD:`, `PID:` (personal identity numbers), `HC:` (passport), `MST:` (tax code, a branch
 * suffix `-NNN` included), `MNS:` (budget unit code), `BHXH:` (social insurance), or bare digits
 * (9 or 12: a personal number; 10 or 13: a tax code, as MISA and others write it); a
 * `serialNumber` (2.5.4.5) value only when labelled the same way (some CAs keep their own
 * numbers there); the e-mail of the subject's `emailAddress` (1.2.840.113549.1.9.1) and of the
 * subjectAltName's rfc822Name entries; the common name (CN).
 */

export type PersonalIdKind = 'CMND' | 'CCCD' | 'PID' | 'HC';

export interface CertificateIdentity {
  commonName: string | null;
  /** Personal numbers: digits only, a passport's letters upper-case. */
  personalIds: { kind: PersonalIdKind | 'UNLABELLED'; value: string }[];
  /** Tax codes (MST), digits only. */
  taxCodes: string[];
  /** Other labelled numbers (MNS, BHXH): shown, never compared. */
  otherIds: { kind: 'MNS' | 'BHXH'; value: string }[];
  /** Lower case, NFC. */
  emails: string[];
}

const digits = (value: string) => value.replace(/\D/g, '');
const emailKey = (value: string) => value.normalize('NFC').trim().toLowerCase();

/** Reads one labelled or bare identifier into `into`; `bare` says whether unlabelled digits count. */
function readIdentifier(raw: string, into: CertificateIdentity, bare: boolean): void {
  const value = raw.normalize('NFKC').trim();
  const labelled = /^([A-Za-z]{2,5})\s*[:=]\s*(.+)$/.exec(value);
  if (labelled) {
    const label = labelled[1]!.toUpperCase();
    const rest = labelled[2]!;
    switch (label) {
      case 'CMND':
      case 'CCCD':
      case 'PID':
        if (digits(rest)) into.personalIds.push({ kind: label, value: digits(rest) });
        return;
      case 'HC': {
        const passport = rest.replace(/[^A-Za-z0-9]/g, '').toUpperCase();
        if (passport) into.personalIds.push({ kind: 'HC', value: passport });
        return;
      }
      case 'MST':
        if (digits(rest)) into.taxCodes.push(digits(rest));
        return;
      case 'MNS':
      case 'BHXH':
        if (digits(rest)) into.otherIds.push({ kind: label, value: digits(rest) });
        return;
      default:
        return;
    }
  }
  if (!bare || !/^\d[\d\s.-]*$/.test(value)) return;
  const number = digits(value);
  if (number.length === 9 || number.length === 12) {
    into.personalIds.push({ kind: 'UNLABELLED', value: number });
  } else if (number.length === 10 || number.length === 13) {
    into.taxCodes.push(number);
  }
}

/** What a DER certificate says about its subject (a certificate that does not parse: 422). */
export function certificateIdentity(der: Buffer): CertificateIdentity {
  const { asn } = readCertificate(der, 'signer certificate');
  const identity: CertificateIdentity = {
    commonName: null,
    personalIds: [],
    taxCodes: [],
    otherIds: [],
    emails: [],
  };
  for (const rdn of asn.tbsCertificate.subject) {
    for (const attribute of rdn) {
      const text = attribute.value.anyValue ? '' : attribute.value.toString();
      if (!text) continue;
      switch (attribute.type) {
        case cmsOids.commonName:
          identity.commonName ??= text.normalize('NFC').trim();
          break;
        case cmsOids.userId:
          readIdentifier(text, identity, true);
          break;
        case cmsOids.serialNumberAttribute:
          readIdentifier(text, identity, false);
          break;
        case cmsOids.emailAddress:
          identity.emails.push(emailKey(text));
          break;
      }
    }
  }
  const san = asn.tbsCertificate.extensions?.find((e) => e.extnID === id_ce_subjectAltName);
  if (san) {
    try {
      for (const name of AsnConvert.parse(san.extnValue, SubjectAlternativeName)) {
        if (name.rfc822Name) identity.emails.push(emailKey(name.rfc822Name));
      }
    } catch {
      // An unreadable subjectAltName names no e-mail; the chain checks judge the certificate.
    }
  }
  identity.emails = [...new Set(identity.emails)];
  return identity;
}

/** What the certificate carries, as kinds only (what verification shows). */
export function identifierKinds(identity: CertificateIdentity): string[] {
  const kinds = [
    ...identity.personalIds.map((id) => (id.kind === 'UNLABELLED' ? 'UID' : id.kind)),
    ...identity.taxCodes.map(() => 'MST'),
    ...identity.otherIds.map((id) => id.kind),
    ...identity.emails.map(() => 'email'),
  ];
  return [...new Set(kinds)];
}

/** Who a signature is expected from: what the dossier or contract knows of the signer. */
export interface ExpectedSigner {
  /** CMND, CCCD or passport number as given (compared digits only; a passport by letters and digits). */
  identityNumber: string | null;
  taxCode: string | null;
  email: string | null;
}

/**
 * Whether a signature is tied to the expected person. `bound`: the certificate carries an
 * identifier of the same kind as one the signer has, and they are equal (`by` says which).
 * `not_bound`: nothing to compare (the certificate carries no identifier the signer has, or the
 * signer has none). `service`: sealed by the service's own certificate (otp_sms,
 * image_signature): the person is known by the OTP or the picture, not by a certificate.
 */
export type IdentityBinding =
  | { status: 'bound'; by: 'identityNumber' | 'taxCode' | 'email' }
  | { status: 'not_bound'; reason: 'certificate_carries_none' | 'signer_has_none' }
  | { status: 'service' };

export type IdentityField = 'identityNumber' | 'taxCode' | 'email';

const fieldWording: Record<IdentityField, string> = {
  identityNumber: "the certificate's identity number (CMND/CCCD/passport) is not the signer's",
  taxCode: "the certificate's tax code (MST) is not the signer's",
  email: "the certificate's e-mail address is not the signer's",
};

export const identityErrors = {
  mismatch: (field: IdentityField) =>
    new EngineError(
      'SIGNER_IDENTITY_MISMATCH',
      `The certificate names another person than the signer: ${fieldWording[field]}; sign with the signer's own certificate`,
      { field: 'certificateChain', detailCode: field.toUpperCase() },
    ),
};

/** The signer's personal number as certificates write it: digits, or a passport's letters too. */
function personalKey(value: string): string {
  return /[A-Za-z]/.test(value) ? value.replace(/[^A-Za-z0-9]/g, '').toUpperCase() : digits(value);
}

/**
 * Compares the signer with the certificate: numbers first (an identity number with CMND, CCCD,
 * PID, passport or unlabelled personal numbers; a tax code with MST), then, only when no number
 * could be compared, the e-mail (people use several addresses, a number names one person).
 * Every comparable number must match: an old CMND against a new CCCD is a mismatch unless
 * equal. Throws 422 SIGNER_IDENTITY_MISMATCH naming the kind that differs (never the values).
 */
export function bindIdentity(expected: ExpectedSigner, certificate: Buffer): IdentityBinding {
  const identity = certificateIdentity(certificate);
  const bound: ('identityNumber' | 'taxCode')[] = [];
  if (expected.identityNumber && identity.personalIds.length > 0) {
    const mine = personalKey(expected.identityNumber);
    if (!identity.personalIds.some((id) => id.value === mine)) {
      throw identityErrors.mismatch('identityNumber');
    }
    bound.push('identityNumber');
  }
  if (expected.taxCode && identity.taxCodes.length > 0) {
    if (!identity.taxCodes.includes(digits(expected.taxCode))) {
      throw identityErrors.mismatch('taxCode');
    }
    bound.push('taxCode');
  }
  if (bound[0]) return { status: 'bound', by: bound[0] };
  if (expected.email && identity.emails.length > 0) {
    if (!identity.emails.includes(emailKey(expected.email))) throw identityErrors.mismatch('email');
    return { status: 'bound', by: 'email' };
  }
  const signerHasOne = Boolean(expected.identityNumber || expected.taxCode || expected.email);
  return {
    status: 'not_bound',
    reason: signerHasOne ? 'certificate_carries_none' : 'signer_has_none',
  };
}

/** A name as a comparison sees it: no diacritics (đ as d), lower case, single spaces. */
export function foldedName(name: string): string {
  return name
    .normalize('NFD')
    .replace(/\p{M}/gu, '')
    .replace(/[\u0111\u0110]/g, 'd')
    .toLowerCase()
    .replace(/\s+/g, ' ')
    .trim();
}
