/**
 * What the server checks of its signing keys on every start. This module stays light (no ASN.1
 * library, nothing that creates keys): creating the development CA and the seal loads
 * @peculiar/x509 and generates RSA keys, which start-up runs in a child process
 * (keyPreparation.ts, startup.ts).
 */

import { developmentCaRecorded } from '../dev/queries';
import { ConfigError } from '../errors/configError';
import { KeyStoreUnavailable } from '../signing/keys/keyStore';
import { keyStoreOf } from '../signing/keys/keyStores';
import { findSealKey } from './queries';
import { type KeyDeps, toSigningKey } from './storedKeys';

/**
 * The key store must be usable (PKCS#11 module loads, token present, PIN right), else the
 * process refuses to start with the store's message (it names the setting).
 */
export async function checkKeyStore(deps: Pick<KeyDeps, 'config' | 'secrets'>): Promise<void> {
  try {
    await keyStoreOf(deps).ready();
  } catch (error) {
    if (error instanceof KeyStoreUnavailable) {
      throw new ConfigError(error.message);
    }
    throw error;
  }
}

/**
 * Readiness: the key store answers (a token present and logged in) and, once the seal exists in
 * it, signs with the seal (software: its sealed key opens under the master secret). Throws the
 * store's error when it cannot.
 */
export async function assertKeyStoreUsable(deps: KeyDeps): Promise<void> {
  const store = keyStoreOf(deps);
  await store.ready();
  const seal = await findSealKey(deps.db);
  if (!seal || seal.store !== store.kind) return;
  const key = toSigningKey(seal);
  await store.sign(key.reference, Buffer.from('readiness'), key.scheme);
}

/** What start-up found: nothing to do, material to create (development, sandbox), or a step for the operator (production). */
export type SigningKeysState =
  | { kind: 'ready' }
  | { kind: 'create'; missing: ('development CA' | 'seal')[] }
  | { kind: 'operator'; message: string };

/** Reads what exists (two rows), creates nothing. */
export async function signingKeysState(deps: KeyDeps): Promise<SigningKeysState> {
  const seal = await findSealKey(deps.db);
  if (deps.config.environment === 'production') {
    if (!seal) {
      return {
        kind: 'operator',
        message:
          'No seal key yet (it signs OTP and image signatures and the audit PDF): run "npm run -s admin -- seal show" to create it and print its certificate request, have your CA sign it, then run "npm run -s admin -- signer-key import-certificate --id <id> --file CERT.pem"',
      };
    }
    if (!seal.certificate_der) {
      return {
        kind: 'operator',
        message: `The seal key (id ${seal.id}) has no certificate yet, so OTP and image signatures and the audit PDF cannot be signed: print its certificate request with "npm run -s admin -- seal show", have your CA sign it, then run "npm run -s admin -- signer-key import-certificate --id ${seal.id} --file CERT.pem"`,
      };
    }
    return { kind: 'ready' };
  }
  const missing: ('development CA' | 'seal')[] = [];
  if (!(await developmentCaRecorded(deps.db))) missing.push('development CA');
  if (!seal?.certificate_der) missing.push('seal');
  return missing.length === 0 ? { kind: 'ready' } : { kind: 'create', missing };
}
