import crypto from 'node:crypto';
import { buildSignedAttributes } from '@esign/shared/cms';
import type { KeyStoreInputs } from '../keys/keyStores';
import { certifiedKey, type SigningKey, signWithKey } from '../keys/signingKey';
import { requestTimestamp } from '../timestamps/client';
import type { FinalizeDeps, SignatureEvidence } from './checkSignature';

/**
 * What signs a PDF: a certificate chain (signer first, then its issuers, DER) and a function
 * that signs the DER signed attributes with the signer's key (SHA-256; RSA PKCS#1 v1.5, or
 * ECDSA as DER or raw r||s). A key store's key (`keySigner`), a node:crypto key, an HSM.
 */
export interface PdfSigner {
  chain: Buffer[];
  sign(signedAttributes: Uint8Array): Promise<Buffer>;
}

/** A service key of a key store as a PdfSigner (the seal, a cloud_hsm signer's own key). */
export function keySigner(deps: KeyStoreInputs, key: SigningKey): PdfSigner {
  const { chain } = certifiedKey(key);
  return { chain, sign: (signedAttributes) => signWithKey(deps, key, signedAttributes) };
}

/** A signer's signature over the attributes of `documentDigest`, with its timestamp. */
export async function signerEvidence(
  deps: Pick<FinalizeDeps, 'clock' | 'timestamps' | 'trust'>,
  signer: PdfSigner,
  documentDigest: Buffer,
  scope: number | null,
): Promise<SignatureEvidence> {
  const { chain } = signer;
  const signedAttributes = buildSignedAttributes(documentDigest, chain[0]!);
  const signature = await signer.sign(signedAttributes);
  const timestamp = await requestTimestamp(
    deps,
    crypto.createHash('sha256').update(signature).digest(),
    { trustAnchors: (await deps.trust(scope)).timestampAnchors },
  );
  return { signature, chain, timestampToken: timestamp.token };
}

/** A service key's signature over the attributes of `documentDigest`, with its timestamp. */
export async function serverKeyEvidence(
  deps: FinalizeDeps,
  key: SigningKey,
  documentDigest: Buffer,
  tenantId: number | null,
): Promise<SignatureEvidence> {
  return signerEvidence(deps, keySigner(deps, key), documentDigest, tenantId);
}
