import fs from 'node:fs';
import { dataOf, json, openSessionWorld, type SessionWorld, signingPath } from '../sessions/world';
import { pdfsig, pdfsigSignatures } from '../signing/pdf/corpus';
import { strokePng } from '../signing/pdf/pngs';
import { contractsPath } from './fixtures';

/**
 * A contract PDF that already carries signatures: they are verified at upload and shown with
 * the contract; an invalid one refuses the upload unless `acceptInvalidSignatures=true`. The
 * signed PDF is a real one: a contract signed through the API (image_signature, the seal of
 * the development CA), downloaded, then uploaded again.
 */

jest.setTimeout(180_000);

let world: SessionWorld;
/** A contract signed once through the API, as downloaded. */
let signed: Buffer;

const signer = { name: 'Nguyễn Văn Ánh', email: 'anh@partner.example', order: 1 };
const picture = `data:image/png;base64,${strokePng().toString('base64')}`;

interface ExistingSignatureView {
  fieldName: string;
  signerName: string | null;
  signedAt: string | null;
  isValid: boolean;
  integrityCheck: string;
  certificateStatus: string;
  modifiedAfterSigning: string;
  certificateSubject: string | null;
  problems: string[];
}

/** Signs `contractId` as `email` with image_signature, the partner's credential. */
async function signOnce(contractId: string, email: string): Promise<void> {
  const session = await dataOf<{ sessionId: string }>(
    await world.initiate(contractId, email, 'image_signature'),
  );
  await dataOf(await world.step(session.sessionId, 'confirm', { signatureImage: picture }));
}

function upload(bytes: Buffer, fields: Record<string, string> = {}) {
  return world.upload(world.acme.orgKey, {
    file: { name: 'da-ky.pdf', bytes },
    signers: [{ name: 'Trần Thị Bình', email: 'binh@partner.example', order: 1 }],
    fields,
  });
}

async function existingOf(contractId: string): Promise<ExistingSignatureView[]> {
  const detail = await dataOf<{ existingSignatures: ExistingSignatureView[] }>(
    await world.request('GET', `${contractsPath}/${contractId}`, world.acme.orgKey),
  );
  return detail.existingSignatures;
}

/** The signed file with one byte of its signed part changed: the page a point taller. */
function tampered(): Buffer {
  const copy = Buffer.from(signed);
  const at = copy.indexOf('595 842', 0, 'latin1');
  expect(at).toBeGreaterThan(0);
  copy.write('595 843', at, 'latin1');
  return copy;
}

beforeAll(async () => {
  world = await openSessionWorld();
  const contractId = await world.sentContract([signer]);
  await signOnce(contractId, signer.email);
  signed = fs.readFileSync(await world.signedFile(contractId, 'signed-once.pdf'));
});
afterAll(async () => {
  await world?.close();
});

describe('uploading a PDF that already carries signatures', () => {
  it('verifies them: the contract shows the signature, valid', async () => {
    const response = await upload(signed);
    expect(response.status).toBe(201);
    const { data } = await json<{ data: { id: string } }>(response);
    // The contract's signature, and the document timestamp of its archive revision (B-LTA).
    const [existing, ...more] = await existingOf(data.id);
    expect(more.map((s) => [s.fieldName, s.isValid])).toEqual([['DocumentTimestamp1', true]]);
    expect(existing).toMatchObject({
      isValid: true,
      integrityCheck: 'passed',
      certificateStatus: 'valid',
      // The archive revision (DSS, document timestamp) follows it: an allowed change.
      modifiedAfterSigning: 'allowed',
      problems: [],
    });
    expect(existing!.fieldName).toMatch(/^Signature\d+$/);
    expect(existing!.signedAt).not.toBeNull();
    expect(existing!.certificateSubject).toContain('CN=');
    // The audit trail's creation event counts them.
    const detail = await dataOf<{
      auditTrail: { action: string; details: Record<string, unknown> }[];
    }>(await world.request('GET', `${contractsPath}/${data.id}`, world.acme.orgKey));
    expect(detail.auditTrail[0]).toMatchObject({
      action: 'created',
      details: { existingSignatures: 2, invalidExistingSignatures: 0 },
    });
  });

  it('signed once more, verify names the earlier signature by its certificate and ours by the signer', async () => {
    const contractId = await world.sentContract(
      [{ name: 'Trần Thị Bình', email: 'binh@partner.example', order: 1 }],
      { file: { name: 'da-ky.pdf', bytes: signed } },
    );
    await signOnce(contractId, 'binh@partner.example');
    const verification = await dataOf<{
      isValid: boolean;
      signatures: { signerName: string; signerEmail: string | null; isValid: boolean }[];
    }>(await world.request('GET', `${signingPath}/verify/${contractId}`, world.acme.orgKey));
    expect(verification.isValid).toBe(true);
    // The earlier signature and its archive's document timestamp, ours, our archive's.
    expect(verification.signatures.map((s) => [s.signerEmail, s.isValid])).toEqual([
      [null, true],
      [null, true],
      ['binh@partner.example', true],
      [null, true],
    ]);
    expect(verification.signatures[2]!.signerName).toBe('Trần Thị Bình');
    // pdfsig, independently: both signatures valid (poppler 22 lists document timestamps
    // without validating them).
    const file = await world.signedFile(contractId, 'signed-twice.pdf');
    const theirs = pdfsigSignatures(pdfsig(file));
    expect(theirs.filter((s) => !/DocumentTimestamp/.test(s.text)).map((s) => s.valid)).toEqual([
      true,
      true,
    ]);
  });

  it('a signature that no longer verifies: 422 EXISTING_SIGNATURE_INVALID, details.field file', async () => {
    const before = (await world.h.deps.db.selectFrom('contracts').select('id').execute()).length;
    const response = await upload(tampered());
    const body = await json<{ code: string; message: string; details: { field: string } }>(
      response,
    );
    expect([response.status, body.code, body.details.field]).toEqual([
      422,
      'EXISTING_SIGNATURE_INVALID',
      'file',
    ]);
    expect(body.message).toContain('document digest does not match');
    expect(body.message).toContain('acceptInvalidSignatures=true');
    const after = (await world.h.deps.db.selectFrom('contracts').select('id').execute()).length;
    expect(after).toBe(before);
  });

  it('accepted with acceptInvalidSignatures=true: the contract shows the signature as invalid', async () => {
    const response = await upload(tampered(), { acceptInvalidSignatures: 'true' });
    expect(response.status).toBe(201);
    const { data } = await json<{ data: { id: string } }>(response);
    const [existing] = await existingOf(data.id);
    expect(existing).toMatchObject({ isValid: false, integrityCheck: 'failed' });
    expect(existing!.problems.join(' ')).toContain('document digest does not match');
  });

  it('acceptInvalidSignatures takes "true" or "false" only', async () => {
    const response = await upload(signed, { acceptInvalidSignatures: 'yes' });
    const body = await json<{ code: string; details: { field: string } }>(response);
    expect([response.status, body.code, body.details.field]).toEqual([
      400,
      'VALIDATION_ERROR',
      'acceptInvalidSignatures',
    ]);
    expect((await upload(signed, { acceptInvalidSignatures: 'false' })).status).toBe(201);
  });

  it('a PDF without signatures shows existingSignatures []', async () => {
    const id = await world.create();
    expect(await existingOf(id)).toEqual([]);
  });
});
