import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { CodedError } from '@esign/shared';
import { issueCertificate } from '../../../../test/support/openssl';
import {
  bindIdentity,
  certificateIdentity,
  type ExpectedSigner,
  foldedName,
  identifierKinds,
} from '../../../src/signing/certificates/identity';

/**
 * What a signer certificate names, read from certificates made by `openssl req` with the
 * subjects Vietnamese CAs write (UID "CCCD:…", "MST:…-NNN", bare digits, passport "HC:…",
 * serialNumber "CMND:…", emailAddress, subjectAltName e-mail), and how it is compared with the
 * signer a dossier or a contract names.
 */
let dir: string;
let serial = 0;
beforeAll(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'identity-'));
});
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

function certificate(subject: string, extensions: string[] = []): Buffer {
  serial += 1;
  return issueCertificate(dir, {
    name: `c${serial}`,
    key: 'ec',
    subject,
    extensions: ['basicConstraints=critical,CA:false', ...extensions],
    days: 1,
  }).der;
}

const signer = (fields: Partial<ExpectedSigner>): ExpectedSigner => ({
  identityNumber: null,
  taxCode: null,
  email: null,
  ...fields,
});

function refusal(run: () => unknown): CodedError {
  try {
    run();
  } catch (error) {
    if (error instanceof CodedError) return error;
    throw error;
  }
  throw new Error('expected a refusal');
}

describe('certificateIdentity', () => {
  it('reads labelled UIDs, a labelled serialNumber, the e-mails of the subject and of subjectAltName', () => {
    const der = certificate(
      '/C=VN/ST=Hà Nội/CN=Nguyễn Văn Ánh/UID=MST:0100686209-199/UID=CCCD:001099012345/emailAddress=Anh@Partner.example/serialNumber=CMND:012345678',
      ['subjectAltName=email:anh.work@partner.example'],
    );
    expect(certificateIdentity(der)).toEqual({
      commonName: 'Nguyễn Văn Ánh',
      personalIds: [
        { kind: 'CCCD', value: '001099012345' },
        { kind: 'CMND', value: '012345678' },
      ],
      taxCodes: ['0100686209199'],
      otherIds: [],
      emails: ['anh@partner.example', 'anh.work@partner.example'],
    });
    expect(identifierKinds(certificateIdentity(der))).toEqual(['CCCD', 'CMND', 'MST', 'email']);
  });

  it('bare digits in UID by their length; a passport; MNS and BHXH are kept, never compared; an unlabelled serialNumber is ignored', () => {
    const der = certificate(
      '/C=VN/CN=CÔNG TY CỔ PHẦN MISA/UID=0101243150/UID=HC:E 0085-1967/UID=MNS:1047665/UID=BHXH:0123456789/serialNumber=987654321012',
    );
    expect(certificateIdentity(der)).toMatchObject({
      personalIds: [{ kind: 'HC', value: 'E00851967' }],
      taxCodes: ['0101243150'],
      otherIds: [
        { kind: 'MNS', value: '1047665' },
        { kind: 'BHXH', value: '0123456789' },
      ],
      emails: [],
    });
    const person = certificate('/C=VN/CN=Trần Thị Bình/UID=079083011315');
    expect(certificateIdentity(person).personalIds).toEqual([
      { kind: 'UNLABELLED', value: '079083011315' },
    ]);
  });
});

describe('bindIdentity', () => {
  let vnpt: Buffer;
  let mobifone: Buffer;
  let bare: Buffer;
  beforeAll(() => {
    vnpt = certificate('/C=VN/ST=Quảng Nam/CN=Nguyễn Văn Ánh/UID=CCCD:001099012345');
    mobifone = certificate(
      '/C=VN/O=MobiFone IT/UID=MST:0100686209-199/UID=CCCD:001099012345/CN=NGUYEN VAN ANH/emailAddress=anh@mobifone.example',
    );
    bare = certificate('/C=VN/O=Đối tác/CN=Nguyễn Văn Ánh');
  });

  it('the same identity number binds, whatever its spacing; the e-mail is not asked then', () => {
    expect(bindIdentity(signer({ identityNumber: '001 099 012 345' }), vnpt)).toEqual({
      status: 'bound',
      by: 'identityNumber',
    });
    // The number matches: a different e-mail of the same person is no refusal.
    expect(
      bindIdentity(
        signer({ identityNumber: '001099012345', email: 'anh@partner.example' }),
        mobifone,
      ),
    ).toEqual({ status: 'bound', by: 'identityNumber' });
  });

  it('another person is refused naming what differs, never the values', () => {
    const other = refusal(() => bindIdentity(signer({ identityNumber: '001099099999' }), vnpt));
    expect(other).toMatchObject({
      code: 'SIGNER_IDENTITY_MISMATCH',
      field: 'certificateChain',
      detailCode: 'IDENTITYNUMBER',
    });
    expect(other.message).toContain('identity number');
    expect(other.message).not.toContain('001099');
    // An old CMND against a new CCCD: a mismatch unless equal.
    expect(refusal(() => bindIdentity(signer({ identityNumber: '012345678' }), vnpt)).code).toBe(
      'SIGNER_IDENTITY_MISMATCH',
    );
    const tax = refusal(() => bindIdentity(signer({ taxCode: '0100686209' }), mobifone));
    expect(tax).toMatchObject({ code: 'SIGNER_IDENTITY_MISMATCH', detailCode: 'TAXCODE' });
    expect(bindIdentity(signer({ taxCode: '0100686209-199' }), mobifone)).toEqual({
      status: 'bound',
      by: 'taxCode',
    });
    const mail = refusal(() => bindIdentity(signer({ email: 'someone@else.example' }), mobifone));
    expect(mail).toMatchObject({ code: 'SIGNER_IDENTITY_MISMATCH', detailCode: 'EMAIL' });
    expect(mail.message).not.toContain('mobifone');
  });

  it('e-mail compared case-insensitively when no number can be', () => {
    expect(bindIdentity(signer({ email: 'ANH@MobiFone.example' }), mobifone)).toEqual({
      status: 'bound',
      by: 'email',
    });
  });

  it('nothing to compare: not bound, saying on which side', () => {
    expect(
      bindIdentity(signer({ identityNumber: '001099012345', email: 'anh@partner.example' }), bare),
    ).toEqual({ status: 'not_bound', reason: 'certificate_carries_none' });
    expect(bindIdentity(signer({}), vnpt)).toEqual({
      status: 'not_bound',
      reason: 'signer_has_none',
    });
  });

  it('names compare without diacritics, case or extra spaces', () => {
    expect(foldedName('NGUYEN  VAN ANH')).toBe(foldedName('Nguyễn Văn Ánh'));
    expect(foldedName('Đỗ Thị Hà')).toBe('do thi ha');
    expect(foldedName('Văn Ánh Nguyễn')).not.toBe(foldedName('Nguyễn Văn Ánh'));
  });
});
