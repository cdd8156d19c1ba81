import crypto from 'node:crypto';
import { buildSignedAttributes } from '@esign/shared/cms';
import { certifiedKey, type SigningKey, signWithKey } from '../keys/signingKey';
import { requestTimestamp } from '../timestamps/client';
import type { FinalizeDeps, SignatureEvidence } from './checkSignature';

/** A service key's signature over the attributes of `documentDigest`, with its timestamp. */
export async function serverKeyEvidence(
  deps: FinalizeDeps,
  key: SigningKey,
  documentDigest: Buffer,
  tenantId: number | null,
): Promise<SignatureEvidence> {
  const { chain } = certifiedKey(key);
  const signedAttributes = buildSignedAttributes(documentDigest, chain[0]!);
  const signature = await signWithKey(deps, key, signedAttributes);
  const timestamp = await requestTimestamp(
    deps,
    crypto.createHash('sha256').update(signature).digest(),
    { trustAnchors: (await deps.trust(tenantId)).timestampAnchors },
  );
  return { signature, chain, timestampToken: timestamp.token };
}
