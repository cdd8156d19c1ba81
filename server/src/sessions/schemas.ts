import { z } from '@hono/zod-openapi';
import { contractLimits, requiredText, signingMethods } from '../contracts/schemas';
import { envelope, isoDateTime } from '../http/openapi';

/** Signing-session API inputs and outputs (spec 03, "Signing session"). */

export const SessionIdParam = z.object({
  sessionId: z
    .string()
    .max(64)
    .openapi({ param: { name: 'sessionId', in: 'path' }, description: 'The session id' }),
});

export const VerifyParam = z.object({
  contractId: z
    .string()
    .max(64)
    .openapi({ param: { name: 'contractId', in: 'path' }, description: 'The contract id' }),
});

export const InitiateBody = z
  .object({
    contractId: requiredText(64),
    signerEmail: requiredText(254),
    signingMethod: z.enum(signingMethods),
    origin: z.string().max(2048).optional().openapi({
      description:
        'usb_token: the origin of the page that will talk to the desktop agent, named in the signing ticket. Default: the signing page (APP_URL’s origin); otherwise one of the tenant’s embedding origins (admin domain add), else 400 ORIGIN_NOT_REGISTERED. Ignored for other methods.',
      example: 'https://partner.example',
    }),
  })
  .openapi('SigningInitiateBody');

export const SessionStarted = z
  .object({
    sessionId: z.string().openapi({ description: '256 random bits, base64url' }),
    contractHash: z.string().openapi({
      description:
        'sha256:<hex>: the digest of the prepared revision (what a USB token signs over)',
      example: `sha256:${'0'.repeat(64)}`,
    }),
    expiresAt: isoDateTime.openapi({ description: '30 minutes, never past the contract deadline' }),
    signingUrl: z.string().openapi({
      description:
        'Opens the signing page without login: {APP_URL}/ky-so/phien/<token>; single use, valid until expiresAt. The page exchanges the token at POST /api/signing/page-credential.',
    }),
    tsaUrl: z.string().optional().openapi({
      description: 'usb_token only: the RFC 3161 TSA the client timestamps the signature with',
    }),
    ticket: z.string().optional().openapi({
      description:
        'usb_token only: the signing ticket the page passes to the desktop agent with sign: a compact JWS (ES256, typ esign-agent-ticket+jwt) over {iss, aud "esign-agent", origin, sid, contractHash, tsaUrl, nonce, iat, exp ≤ expiresAt}, verifiable with GET /.well-known/esign-agent-keys.json. Good for one signature.',
    }),
  })
  .openapi('SigningSession');

export const ExchangeBody = z
  .object({ token: requiredText(128).openapi({ description: 'The token of the signing link' }) })
  .openapi('SigningLinkExchangeBody');

export const PageCredential = z
  .object({
    sessionId: z.string(),
    pageCredential: z.string().openapi({
      description: 'Send as X-Signing-Token with this session’s steps; valid until expiresAt',
    }),
    expiresAt: isoDateTime,
    signingMethod: z.enum(signingMethods),
    contractHash: z.string(),
    contract: z
      .object({ id: z.string(), title: z.string() })
      .optional()
      .openapi({ description: 'A contract session: the contract' }),
    task: z
      .object({ id: z.string(), title: z.string() })
      .optional()
      .openapi({ description: 'A dossier task session: the task code and the dossier title' }),
    signer: z.object({ name: z.string(), email: z.string().nullable() }),
    tsaUrl: z.string().optional(),
    ticket: z.string().optional().openapi({
      description: 'usb_token only: a signing ticket for the signing page’s own origin',
    }),
  })
  .openapi('SigningPageCredential');

export const InvitationBody = z
  .object({
    token: requiredText(128).openapi({
      description: 'The token of the invitation link {APP_URL}/ky-so/<token>',
    }),
  })
  .openapi('SigningInvitationBody');

export const InvitationStartBody = z
  .object({
    token: requiredText(128).openapi({
      description: 'The token of the invitation link {APP_URL}/ky-so/<token>',
    }),
    signingMethod: z.enum(signingMethods),
  })
  .openapi('SigningInvitationStartBody');

export const Invitation = z
  .object({
    contract: z.object({ id: z.string(), title: z.string(), expiredAt: isoDateTime }),
    signer: z.object({
      name: z.string(),
      email: z.string(),
      role: z.enum(['signer', 'viewer']),
      status: z.enum(['waiting', 'invited', 'signed', 'rejected']),
    }),
    yourTurn: z.boolean().openapi({
      description: 'A signer who has not signed and whose earlier orders have all signed',
    }),
    waitingForOrder: z.number().int().nullable().openapi({
      description: 'Not the turn yet: the earliest order still to sign',
    }),
    signingMethods: z.array(z.enum(signingMethods)).openapi({
      description:
        'What the signer may pick: all four (a contract sets no method), cloud_hsm only with an enrolled key; empty for a viewer or once signed',
    }),
  })
  .openapi('SigningInvitation');

export const OtpSent = z
  .object({
    otpExpiredAt: isoDateTime,
    channel: z
      .enum(['sms', 'email'])
      .openapi({ description: 'email when the signer has no phone' }),
    to: z.string().openapi({ description: 'The masked number or address', example: '09******78' }),
  })
  .openapi('OtpSent');

export const ConfirmBody = z
  .object({
    otp: z
      .string()
      .regex(/^\d{6}$/, 'must be 6 digits')
      .optional()
      .openapi({ description: 'otp_sms and cloud_hsm: the code from send-otp' }),
    signatureImage: z
      .string()
      .max(800 * 1024)
      .optional()
      .openapi({
        description:
          'image_signature: data:image/png;base64,… or data:image/jpeg;base64,…, at most 512 KB decoded',
      }),
  })
  .openapi('SigningConfirmBody');

export const TokenSignatureBody = z
  .object({
    signedHash: z.string().openapi({ description: 'base64 signature over the signed attributes' }),
    certificateChain: z
      .array(z.string())
      .openapi({ description: 'base64 DER certificates, the signer first' }),
    timestampToken: z
      .string()
      .openapi({ description: 'base64 DER TimeStampToken over SHA-256 of the signature value' }),
  })
  .openapi('SigningTokenBody');

export const TokenPrepareBody = z
  .object({
    certificate: z
      .string()
      .max(24 * 1024)
      .optional()
      .openapi({
        description:
          'base64 DER of the certificate the token will sign with: its common name is shown in the box, its identity checked now (422 SIGNER_IDENTITY_MISMATCH), and only it may finalize the revision',
      }),
    origin: z.string().max(2048).optional().openapi({
      description:
        'The origin of the page that will talk to the desktop agent, as at initiate (default: the signing page)',
    }),
  })
  .openapi('SigningTokenPrepareBody');

export const TokenPrepared = z
  .object({
    contractHash: z.string().openapi({
      description: 'sha256:<hex>: the digest of the revision just prepared, what the token signs',
      example: `sha256:${'0'.repeat(64)}`,
    }),
    expiresAt: isoDateTime,
    tsaUrl: z.string(),
    ticket: z.string().openapi({ description: 'The signing ticket for this contractHash' }),
  })
  .openapi('SigningTokenPrepared');

export const RejectBody = z
  .object({ reason: requiredText(contractLimits.reason) })
  .openapi('SigningRejectBody');

/** Where a dossier task stands after its turn was signed or rejected through a session. */
export const TaskOutcome = z
  .object({
    taskCode: z.string(),
    taskStatus: z.enum(['PENDING', 'APPROVED', 'REJECTED', 'EXPIRED']),
    documentId: z.string().nullable(),
    dossierStatus: z.string(),
    signedCount: z.number().int(),
    requiredCount: z.number().int(),
    nextTaskCode: z.string().nullable(),
  })
  .openapi('SigningTaskOutcome');

/** The signing certificate as a signature result shows it (and a session keeps it). */
export const CertificateInfo = z.object({
  subject: z.string().openapi({ example: 'CN=Nguyễn Văn A, O=ACME, C=VN' }),
  issuer: z.string(),
  validFrom: isoDateTime,
  validTo: isoDateTime,
});
export type CertificateInfo = z.output<typeof CertificateInfo>;

const signatureFields = {
  signatureId: z.string(),
  signedAt: isoDateTime,
  certificateInfo: CertificateInfo,
};

export const SignatureResult = z
  .union([
    z.object({ ...signatureFields, contractStatus: z.enum(['signing', 'completed']) }),
    z.object({ ...signatureFields, task: TaskOutcome }),
  ])
  .openapi('SignatureResult', {
    description: 'A contract session answers contractStatus; a dossier task session task',
  });

export const Rejected = z
  .union([
    z.object({ contractId: z.string(), contractStatus: z.literal('rejected') }),
    z.object({ task: TaskOutcome }),
  ])
  .openapi('SigningRejected');

export const TaskSessionParam = z.object({
  taskCode: z
    .string()
    .max(64)
    .openapi({ param: { name: 'taskCode', in: 'path' }, description: 'The task code' }),
});

export const TaskSessionBody = z
  .object({ signingMethod: z.enum(signingMethods) })
  .openapi('TaskSigningSessionBody');

export const TaskSessionStartedEnvelope = envelope(
  SessionStarted.extend({ taskCode: z.string() }).openapi('TaskSigningSession'),
);

export const SessionStartedEnvelope = envelope(SessionStarted);
export const PageCredentialEnvelope = envelope(PageCredential);
export const InvitationEnvelope = envelope(Invitation);
export const OtpSentEnvelope = envelope(OtpSent);
export const SignatureResultEnvelope = envelope(SignatureResult);
export const RejectedEnvelope = envelope(Rejected);
export const TokenPreparedEnvelope = envelope(TokenPrepared);

export const Verification = z
  .object({
    isValid: z.boolean().openapi({
      description: 'At least one signature, every one valid, nothing disallowed after any',
    }),
    signatures: z.array(
      z.object({
        signerName: z.string().nullable().openapi({
          description: 'The contract signer whose signature this is (else the certificate CN)',
        }),
        signerEmail: z.string().nullable(),
        signedAt: isoDateTime.nullable().openapi({ description: 'The timestamp’s time' }),
        isValid: z.boolean(),
        integrityCheck: z.enum(['passed', 'failed']),
        certificateStatus: z.enum(['valid', 'expired', 'revoked', 'untrusted', 'unknown']),
        timestampVerified: z.boolean(),
        fieldName: z.string(),
        subFilter: z.string().nullable().openapi({
          description:
            'The signature’s /SubFilter: ETSI.CAdES.detached for a signature, ETSI.RFC3161 for the archive’s document timestamp',
        }),
        level: z.enum(['B-B', 'B-T', 'B-LT', 'B-LTA']).openapi({
          description:
            'PAdES baseline level the file proves: B-B no valid signature timestamp; B-T a valid one; B-LT the file (DSS or CMS) also holds every certificate of the signer’s chain but the trust anchor, each with an OCSP or CRL answer; B-LTA a valid document timestamp also covers that data. A document timestamp’s own entry says B-T.',
        }),
        coversWholeDocument: z.boolean(),
        modifiedAfterSigning: z.enum(['none', 'allowed', 'disallowed']),
        certificate: z
          .object({
            subject: z.string(),
            issuer: z.string(),
            serialNumber: z.string(),
            validFrom: isoDateTime,
            validTo: isoDateTime,
            identifiers: z.array(z.string()).openapi({
              description:
                'The kinds of identifiers the certificate names its subject by: CCCD, CMND, PID, HC (passport), UID (unlabelled personal number), MST, MNS, BHXH, email (docs/signing-with-a-token.md)',
            }),
          })
          .nullable(),
        problems: z.array(z.string()),
        changes: z
          .array(
            z.object({
              revision: z.number().int().openapi({
                description: 'The revision (0 the original, 1 the first incremental update ...)',
              }),
              object: z.string().openapi({ description: 'The object changed, e.g. `7 0 R`' }),
              what: z.string().openapi({
                description:
                  'What was done, e.g. "changes object 7 (the content stream of page 1)"',
              }),
            }),
          )
          .openapi({
            description:
              'Each change after this signature that it does not allow (modifiedAfterSigning "disallowed")',
          }),
        identity: z
          .object({
            status: z.enum(['bound', 'not_bound', 'service', 'unknown']),
            by: z.enum(['identityNumber', 'taxCode', 'email']).optional(),
            reason: z.enum(['certificate_carries_none', 'signer_has_none']).optional(),
          })
          .openapi('SignatureIdentity', {
            description:
              'Whether the certificate named the contract signer when the service made the signature: bound (by which identifier), not_bound (nothing to compare, and why), service (sealed by the service for an OTP or drawn signature), unknown (a signature the service did not make)',
          }),
      }),
    ),
  })
  .openapi('SignatureVerification');

export const VerificationEnvelope = envelope(Verification);

export const AgentTicketKeySet = z
  .object({
    keys: z.array(
      z.object({
        kty: z.literal('EC'),
        crv: z.literal('P-256'),
        x: z.string(),
        y: z.string(),
        kid: z.string().openapi({ description: 'RFC 7638 thumbprint; the ticket header’s kid' }),
        alg: z.literal('ES256'),
        use: z.literal('sig'),
      }),
    ),
  })
  .openapi('AgentTicketKeySet');
