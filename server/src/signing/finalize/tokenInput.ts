import { certificateIssuerAndSerial } from '@esign/shared/cms';
import { z } from 'zod';
import { EngineError, engineValidationError } from '../../pdf/engineError';
import { fromSignedAttributesError } from '../cms';
import type { SignatureEvidence } from './checkSignature';
import { finalizeErrors } from './errors';

/** What a token client sends (docs/signing-with-a-token.md "The request"), each value base64. */
export interface TokenSignatureInput {
  signedHash: string;
  certificateChain: string[];
  timestampToken: string;
}

/** Base64 length of n bytes. */
const base64Length = (bytes: number) => Math.ceil(bytes / 3) * 4;

const inputSchema = z.object({
  // RSA-4096 is 512 bytes; room for larger keys, nothing like a document.
  signedHash: z.string().min(1).max(base64Length(1024)),
  certificateChain: z
    .array(
      z
        .string()
        .min(1)
        .max(base64Length(16 * 1024)),
    )
    .min(1)
    .max(10),
  timestampToken: z
    .string()
    .min(1)
    .max(base64Length(64 * 1024)),
});

const base64Pattern = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;

/** Standard padded base64 only; also refused: bits set in the padding (a second spelling). */
function strictBase64(value: string, field: string): Buffer {
  if (!base64Pattern.test(value)) throw finalizeErrors.invalidBase64(field);
  const bytes = Buffer.from(value, 'base64');
  if (bytes.toString('base64') !== value) throw finalizeErrors.invalidBase64(field);
  return bytes;
}

/**
 * A certificate a client names in advance (usb_token `prepare`): strict base64 of one DER
 * certificate, else 400 INVALID_BASE64 or CERTIFICATE_MALFORMED naming `field`.
 */
export function decodeCertificate(value: string, field = 'certificate'): Buffer {
  const der = strictBase64(value, field);
  try {
    certificateIssuerAndSerial(der);
  } catch (error) {
    const mapped = fromSignedAttributesError(error);
    if (mapped instanceof EngineError) {
      throw new EngineError('CERTIFICATE_MALFORMED', `${field}: ${mapped.message}`, { field });
    }
    throw mapped;
  }
  return der;
}

/** The request's bytes: 400 VALIDATION_ERROR for its shape, 400 INVALID_BASE64 naming the field. */
export function decodeTokenInput(input: TokenSignatureInput): SignatureEvidence {
  const parsed = inputSchema.safeParse(input);
  if (!parsed.success) throw engineValidationError(parsed.error);
  const { signedHash, certificateChain, timestampToken } = parsed.data;
  return {
    signature: strictBase64(signedHash, 'signedHash'),
    chain: certificateChain.map((value, index) => strictBase64(value, `certificateChain.${index}`)),
    timestampToken: strictBase64(timestampToken, 'timestampToken'),
  };
}
