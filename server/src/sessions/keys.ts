import type { AppDeps } from '../context';
import { findSignerKey } from '../keys/queries';
import { issueSignerCertificate, sealKey, signerEmailKey } from '../keys/signingKeys';
import { toSigningKey } from '../keys/storedKeys';
import type { SigningKey } from '../signing/keys/signingKey';
import { tenantById } from '../tenancy/queries';
import { sessionErrors } from './errors';
import type { SessionRow } from './queries';
import type { SigningSubject } from './subject';

/**
 * A cloud_hsm signer's own key. Development and sandbox: made with its development certificate
 * on first use (when `create`). Production: only a key the operator enrolled and certified,
 * else 409 SIGNER_KEY_NOT_ENROLLED (checked already at initiate, so no code is sent in vain).
 */
export async function enrolledCloudKey(
  deps: AppDeps,
  subject: SigningSubject,
  create: boolean,
): Promise<SigningKey | undefined> {
  const { email, name } = subject.signer;
  // A cloud key is the signer's by e-mail: without one there is none to enrol.
  if (email === null) throw sessionErrors.keyNotEnrolled(name);
  if (deps.config.environment !== 'production') {
    if (!create) return undefined;
    const tenant = await tenantById(deps.db, subject.tenantId);
    return issueSignerCertificate(deps, tenant, { email, name });
  }
  const row = await findSignerKey(deps.db, subject.tenantId, signerEmailKey(email));
  if (!row?.certificate_der) throw sessionErrors.keyNotEnrolled(email);
  return toSigningKey(row);
}

/**
 * Whether the signer can sign with cloud_hsm: an e-mail, and in production a key the operator
 * enrolled and certified (elsewhere one is made on first use).
 */
export async function hasCloudKey(deps: AppDeps, subject: SigningSubject): Promise<boolean> {
  const { email } = subject.signer;
  if (email === null) return false;
  if (deps.config.environment !== 'production') return true;
  const row = await findSignerKey(deps.db, subject.tenantId, signerEmailKey(email));
  return Boolean(row?.certificate_der);
}

/** The key a server-side method signs with: the signer's own (cloud_hsm) or the service seal. */
export async function serverKeyFor(
  deps: AppDeps,
  subject: SigningSubject,
  session: SessionRow,
): Promise<SigningKey> {
  if (session.method === 'cloud_hsm') {
    return (await enrolledCloudKey(deps, subject, true))!;
  }
  return sealKey(deps);
}
