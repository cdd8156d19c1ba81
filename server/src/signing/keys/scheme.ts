import { EngineError } from '../../pdf/engineError';
import { type KeyReference, type SignatureScheme, schemeOf } from './keyStore';

/** A key signs with the one scheme of its algorithm; anything else is refused before signing. */
export function checkScheme(ref: KeyReference, scheme: SignatureScheme): void {
  if (schemeOf[ref.algorithm] === scheme) return;
  throw new EngineError(
    'SIGNATURE_SCHEME_MISMATCH',
    `Key ${ref.label} (${ref.algorithm}) signs with ${schemeOf[ref.algorithm]}, not ${scheme}`,
    { field: 'scheme' },
  );
}

/** A row made under the other KEYSTORE setting. */
export function otherStore(ref: KeyReference): EngineError {
  return new EngineError(
    'SIGNING_KEY_IN_OTHER_STORE',
    `Key ${ref.label} lives in the ${ref.locator.store} key store, not the configured one (KEYSTORE)`,
  );
}
