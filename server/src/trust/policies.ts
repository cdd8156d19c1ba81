import type { AppDeps } from '../context';
import { developmentCa } from '../dev/developmentCa';
import type { TrustPolicies } from '../signing/trustPolicy';
import { trustAnchorsFor } from './service';

/**
 * The service's one trust policy, per tenant: the global and the tenant's trust anchors, for
 * signers and timestamp authorities alike, and outside production the development CA (it issues
 * the seal, cloud_hsm and development TSA certificates there), whose services also accept a
 * signer certificate no anchor vouches for. The engine is given this; it reads no setting.
 */
export function trustPolicies(
  deps: Pick<AppDeps, 'db' | 'config' | 'secrets' | 'clock'>,
): TrustPolicies {
  const development = deps.config.environment !== 'production';
  return async (tenantId) => {
    const anchors = (await trustAnchorsFor(deps.db, tenantId)).map((anchor) => anchor.certificate);
    if (development) anchors.push((await developmentCa(deps)).certificate);
    return {
      signerAnchors: anchors,
      timestampAnchors: anchors,
      acceptUntrustedSigners: development,
    };
  };
}
