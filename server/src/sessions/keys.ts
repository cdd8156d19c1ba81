import type { AppDeps } from '../context';
import type { ContractRow, ContractSignerRow } from '../contracts/queries';
import { findSignerKey } from '../signing/keys/queries';
import { type SigningKey, toSigningKey } from '../signing/keys/signingKey';
import { issueSignerCertificate, sealKey, signerEmailKey } from '../signing/keys/signingKeys';
import { tenantById } from '../tenancy/queries';
import { sessionErrors } from './errors';
import type { SessionRow } from './queries';

/**
 * A cloud_hsm signer's own key. Development and sandbox: made with its development certificate
 * on first use (when `create`). Production: only a key the operator enrolled and certified,
 * else 409 SIGNER_KEY_NOT_ENROLLED (checked already at initiate, so no code is sent in vain).
 */
export async function enrolledCloudKey(
  deps: AppDeps,
  contract: ContractRow,
  signer: ContractSignerRow,
  create: boolean,
): Promise<SigningKey | undefined> {
  if (deps.config.environment !== 'production') {
    if (!create) return undefined;
    const tenant = await tenantById(deps.db, contract.tenant_id);
    return issueSignerCertificate(deps, tenant, { email: signer.email, name: signer.name });
  }
  const row = await findSignerKey(deps.db, contract.tenant_id, signerEmailKey(signer.email));
  if (!row?.certificate_der) throw sessionErrors.keyNotEnrolled(signer.email);
  return toSigningKey(row);
}

/** The key a server-side method signs with: the signer's own (cloud_hsm) or the service seal. */
export async function serverKeyFor(
  deps: AppDeps,
  contract: ContractRow,
  signer: ContractSignerRow,
  session: SessionRow,
): Promise<SigningKey> {
  if (session.method === 'cloud_hsm') {
    return (await enrolledCloudKey(deps, contract, signer, true))!;
  }
  return sealKey(deps);
}
