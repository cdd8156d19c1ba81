/**
 * The USB token of the tests: a SoftHSM2 token driven through PKCS#11 in a child process
 * (SoftHSM2 reads SOFTHSM2_CONF from the real environment, which jest does not give a test
 * file). Usage: node --import tsx tokenProbe.ts '<json>'; prints one JSON object.
 *   {"action":"generate", module, tokenLabel, pin, label} → {ref}
 *   {"action":"sign", module, tokenLabel, pin, ref, data} → {signature} (base64, RSA PKCS#1 v1.5 SHA-256)
 */
import type { KeyReference } from '../../src/signing/keys/keyStore';
import { Pkcs11KeyStore, unloadPkcs11Modules } from '../../src/signing/keys/pkcs11KeyStore';

interface SerializedRef extends Omit<KeyReference, 'publicKeySpki'> {
  publicKeySpki: string;
}

interface Request {
  action: 'generate' | 'sign';
  module: string;
  tokenLabel: string;
  pin: string;
  label?: string;
  ref?: SerializedRef;
  data?: string;
}

async function main() {
  const request = JSON.parse(process.argv[2] ?? '{}') as Request;
  const store = new Pkcs11KeyStore({
    module: request.module,
    tokenLabel: request.tokenLabel,
    pin: () => request.pin,
  });
  let report: Record<string, unknown>;
  if (request.action === 'generate') {
    const ref = await store.generateKey(request.label ?? 'usb-token-key', 'rsa-2048');
    report = { ref: { ...ref, publicKeySpki: ref.publicKeySpki.toString('base64') } };
  } else {
    const serialized = request.ref!;
    const ref: KeyReference = {
      ...serialized,
      publicKeySpki: Buffer.from(serialized.publicKeySpki, 'base64'),
    };
    const signature = await store.sign(
      ref,
      Buffer.from(request.data!, 'base64'),
      'rsa-pkcs1-sha256',
    );
    report = { signature: Buffer.from(signature).toString('base64') };
  }
  await store.close();
  unloadPkcs11Modules();
  process.stdout.write(`${JSON.stringify(report)}\n`);
}

void main();
