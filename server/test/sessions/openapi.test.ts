import { createHarness, type Harness } from '../support/harness';

let h: Harness;
interface Operation {
  operationId: string;
  tags: string[];
  security: Record<string, string[]>[];
  responses: Record<
    string,
    {
      content?: {
        'application/json'?: {
          schema: { allOf?: [unknown, { properties?: { code?: { enum?: string[] } } }] };
        };
      };
    }
  >;
}
let paths: Record<string, Record<string, Operation>>;
beforeAll(async () => {
  h = createHarness();
  const response = await h.app.request('/api/openapi.json');
  paths = ((await response.json()) as { paths: typeof paths }).paths;
});
afterAll(() => h.close());

/** What preparing a revision answers (a PDF read, a certification that forbids changes). */
const preparation = [
  'PDF_UNREADABLE',
  'PDF_ENCRYPTED',
  'PDF_TOO_COMPLEX',
  'PDF_CHANGES_NOT_ALLOWED',
];

const codes = (operation: Operation, status: string) =>
  operation.responses[status]?.content?.['application/json']?.schema.allOf?.[1].properties?.code
    ?.enum ?? [];

describe('the signing-session API in the OpenAPI document', () => {
  const partner = [{ ApiKey: [] }, { Bearer: [] }];
  // A dossier task's signer may also use a partner token (x-access-token).
  const taskSigner = [...partner, { PartnerToken: [] }];
  const step = [...taskSigner, { SigningPage: [] }];
  it.each([
    ['/api/signing/initiate', 'initiateSigning', partner],
    ['/api/tasks/{taskCode}/signing-session', 'initiateTaskSigning', taskSigner],
    ['/api/signing/page-credential', 'exchangeSigningLink', []],
    ['/api/signing/invitation', 'readSigningInvitation', []],
    ['/api/signing/invitation/session', 'startInvitationSigning', []],
    ['/api/signing/{sessionId}/send-otp', 'sendSigningOtp', step],
    ['/api/signing/{sessionId}/confirm', 'confirmSigning', step],
    ['/api/signing/{sessionId}/sign-with-token', 'signWithToken', step],
    ['/api/signing/{sessionId}/prepare', 'prepareTokenSigning', step],
    ['/api/signing/{sessionId}/reject', 'rejectSigning', step],
  ])('POST %s: %s, its credentials, tag and error codes', (path, operationId, security) => {
    const operation = paths[path]!.post!;
    expect(operation.operationId).toBe(operationId);
    expect(operation.security).toEqual(security);
    expect(operation.tags).toEqual(['Signing sessions']);
    expect(Object.keys(operation.responses)).toContain('200');
  });

  it('GET /api/signing/verify/{contractId}: verifyContractSignatures, partner credentials', () => {
    const operation = paths['/api/signing/verify/{contractId}']!.get!;
    expect(operation.operationId).toBe('verifyContractSignatures');
    expect(operation.security).toEqual(partner);
    expect(operation.tags).toEqual(['Signing sessions']);
    expect(codes(operation, '404')).toEqual(['CONTRACT_NOT_FOUND', 'CONTRACT_NOT_SIGNED']);
  });

  it('lists the codes the steps answer', () => {
    const confirm = paths['/api/signing/{sessionId}/confirm']!.post!;
    expect(codes(confirm, '409')).toEqual(
      expect.arrayContaining([
        'CONTRACT_CANCELLED',
        'SESSION_ALREADY_USED',
        'SESSION_SUPERSEDED',
        'SESSION_LOCKED',
        'OTP_NOT_SENT',
        'DOCUMENT_CHANGED',
        'PREPARATION_NOT_OPEN',
      ]),
    );
    expect(codes(confirm, '410')).toEqual([
      'SESSION_EXPIRED',
      'OTP_EXPIRED',
      'PREPARATION_EXPIRED',
    ]);
    expect(codes(confirm, '422')).toEqual([
      ...preparation,
      'OTP_INVALID',
      'IMAGE_UNREADABLE',
      'SIGNER_IDENTITY_MISMATCH',
    ]);
    expect(codes(confirm, '429')).toEqual(['RATE_LIMITED', 'OTP_FAILURE_LIMIT_REACHED']);
    const sendOtp = paths['/api/signing/{sessionId}/send-otp']!.post!;
    expect(codes(sendOtp, '429')).toEqual([
      'RATE_LIMITED',
      'OTP_RESEND_TOO_SOON',
      'OTP_SEND_LIMIT_REACHED',
      'OTP_FAILURE_LIMIT_REACHED',
    ]);
    const initiate = paths['/api/signing/initiate']!.post!;
    expect(codes(initiate, '409')).toEqual(
      expect.arrayContaining(['NOT_SIGNER_TURN', 'SIGNER_ALREADY_SIGNED', 'CONTRACT_CANCELLED']),
    );
    const invitation = paths['/api/signing/invitation']!.post!;
    expect(codes(invitation, '404')).toEqual(['INVITATION_NOT_FOUND']);
    expect(codes(invitation, '410')).toEqual(['INVITATION_EXPIRED']);
    const fromInvitation = paths['/api/signing/invitation/session']!.post!;
    expect(codes(fromInvitation, '409')).toEqual(
      expect.arrayContaining(['NOT_SIGNER_TURN', 'SIGNER_ALREADY_SIGNED', 'SIGNER_IS_VIEWER']),
    );
    expect(codes(fromInvitation, '410')).toEqual(['INVITATION_EXPIRED']);
    const task = paths['/api/tasks/{taskCode}/signing-session']!.post!;
    expect(codes(task, '409')).toEqual(
      expect.arrayContaining(['NOT_YOUR_TURN', 'TASK_ALREADY_HANDLED', 'MAIN_FILE_NOT_SINGLE']),
    );
    expect(codes(task, '422')).toEqual([
      ...preparation,
      'SIGNATURE_NOT_EXPECTED',
      'SIGNING_METHOD_NOT_ALLOWED',
      'SIGNER_IDENTITY_MISMATCH',
    ]);
    const token = paths['/api/signing/{sessionId}/sign-with-token']!.post!;
    expect(codes(token, '422')).toEqual(
      expect.arrayContaining([
        'DOCUMENT_DIGEST_MISMATCH',
        'SIGNATURE_INVALID',
        'TIMESTAMP_INVALID',
        'SIGNED_ATTRIBUTES_EXTRA',
        'SIGNED_ATTRIBUTES_MISSING',
        'SIGNER_IDENTITY_MISMATCH',
        'CERTIFICATE_NAME_NOT_PREPARED',
      ]),
    );
    expect(codes(token, '409')).toEqual(expect.arrayContaining(['PREPARATION_STALE']));
    const prepare = paths['/api/signing/{sessionId}/prepare']!.post!;
    expect(codes(prepare, '422')).toEqual([
      ...preparation,
      'CERTIFICATE_INVALID',
      'SIGNER_IDENTITY_MISMATCH',
    ]);
    for (const operation of [initiate, fromInvitation, task, confirm, prepare]) {
      expect(codes(operation, '503')).toEqual(['PDF_READER_BUSY', 'DATABASE_BUSY']);
    }
  });
});
