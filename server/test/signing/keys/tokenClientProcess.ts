/**
 * A token client in a child process (SoftHSM2 reads SOFTHSM2_CONF from the real environment,
 * which jest does not give a test file): one JSON request a line on stdin, one JSON answer a
 * line on stdout. Keys are generated on the token and sign there, the private key never leaves:
 * - {"op":"generate","label":L,"algorithm":"rsa-2048"|"ec-p256","commonName":CN} → {spki, csr}
 * - {"op":"sign","label":L,"data":base64} → {signature}: RSA PKCS#1 v1.5 by CKM_SHA256_RSA_PKCS
 *   over the data, ECDSA by CKM_ECDSA over SHA-256 of the data as raw r||s (what the token
 *   returns; our key store wraps it in DER, unwrapped here again).
 * Usage: node --import tsx tokenClientProcess.ts <json {module, tokenLabel, pin}>
 */
import 'reflect-metadata';
import readline from 'node:readline';
import * as x509 from '@peculiar/x509';
import { certificateRequest } from '../../../src/signing/keys/csr';
import { ecdsaDerToRaw } from '../../../src/signing/keys/ecdsa';
import { type KeyReference, schemeOf } from '../../../src/signing/keys/keyStore';
import { Pkcs11KeyStore, unloadPkcs11Modules } from '../../../src/signing/keys/pkcs11KeyStore';

interface Settings {
  module: string;
  tokenLabel: string;
  pin: string;
}

type Request =
  | { op: 'generate'; label: string; algorithm: KeyReference['algorithm']; commonName: string }
  | { op: 'sign'; label: string; data: string };

async function main() {
  const settings = JSON.parse(process.argv[2] ?? '{}') as Settings;
  const store = new Pkcs11KeyStore({ ...settings, pin: () => settings.pin });
  const keys = new Map<string, KeyReference>();
  const answer = async (request: Request): Promise<Record<string, string>> => {
    if (request.op === 'generate') {
      const ref = await store.generateKey(request.label, request.algorithm);
      keys.set(request.label, ref);
      const csr = await certificateRequest(
        store,
        ref,
        new x509.Name(`CN=${request.commonName}`),
        [],
      );
      return { spki: ref.publicKeySpki.toString('base64'), csr: csr.toString('pem') };
    }
    const ref = keys.get(request.label);
    if (!ref) throw new Error(`no key ${request.label} on the token`);
    const signature = await store.sign(
      ref,
      Buffer.from(request.data, 'base64'),
      schemeOf[ref.algorithm],
    );
    const sent = ref.algorithm === 'ec-p256' ? ecdsaDerToRaw(signature, 32) : signature;
    return { signature: Buffer.from(sent).toString('base64') };
  };
  for await (const line of readline.createInterface({ input: process.stdin })) {
    if (line.trim() === '') continue;
    try {
      const reply = await answer(JSON.parse(line) as Request);
      process.stdout.write(`${JSON.stringify({ ok: true, ...reply })}\n`);
    } catch (error) {
      const message = error instanceof Error ? error.message : String(error);
      process.stdout.write(`${JSON.stringify({ ok: false, error: message })}\n`);
    }
  }
  await store.close();
  unloadPkcs11Modules();
}

void main();
