/**
 * Runs the PKCS#11 scenarios in a child process. SoftHSM2 reads SOFTHSM2_CONF from the real
 * environment when the module is initialized, and jest gives each test file only a copy of
 * `process.env`, so the test starts this script with the variable set and checks its report
 * (one JSON object on stdout). Usage: node --import tsx pkcs11Probe.ts <scenario> <json args>
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { CodedError } from '@esign/shared';
import { statusOfCode } from '../../../src/http/errorStatuses';
import { sealKey } from '../../../src/keys/signingKeys';
import { checkKeyStore } from '../../../src/keys/startupState';
import { systemClock } from '../../../src/platform/clock';
import { loadConfig } from '../../../src/platform/config';
import { deriveSecrets } from '../../../src/platform/secrets';
import { openRuntime } from '../../../src/runtime';
import type { KeyAlgorithm } from '../../../src/signing/keys/keyStore';
import { schemeOf } from '../../../src/signing/keys/keyStore';
import { closeKeyStore } from '../../../src/signing/keys/keyStores';
import { Pkcs11KeyStore, unloadPkcs11Modules } from '../../../src/signing/keys/pkcs11KeyStore';
import { signWithKey } from '../../../src/signing/keys/signingKey';
import { testLogger } from '../../support/testLogger';

interface Args {
  module: string;
  tokenLabel: string;
  pin: string;
  otherTokenLabel: string;
}

const b64 = (bytes: Uint8Array) => Buffer.from(bytes).toString('base64');

async function refusal(work: () => Promise<unknown>) {
  try {
    await work();
    return null;
  } catch (error) {
    if (error instanceof CodedError) {
      return { status: statusOfCode(error.code), code: error.code, message: error.message };
    }
    const kind = error instanceof Error ? error.constructor.name : 'thrown';
    return {
      status: null,
      code: kind,
      message: error instanceof Error ? error.message : String(error),
    };
  }
}

async function stores(args: Args) {
  const settings = { module: args.module, tokenLabel: args.tokenLabel, pin: () => args.pin };
  const store = new Pkcs11KeyStore(settings);
  const data = Buffer.from('signed attributes, DER');
  const signed: Record<string, unknown> = {};
  for (const algorithm of ['rsa-2048', 'ec-p256'] as KeyAlgorithm[]) {
    const ref = await store.generateKey(`hsm-${algorithm}`, algorithm);
    const signature = await store.sign(ref, data, schemeOf[algorithm]);
    signed[algorithm] = {
      locator: ref.locator,
      spki: b64(await store.publicKeySpki(ref)),
      data: b64(data),
      signature: b64(signature),
    };
  }
  const protectedKey = await store.generateKey('hsm-attributes', 'ec-p256');
  const attributes = await store.protection(protectedKey);

  const gone = await store.generateKey('hsm-gone', 'rsa-2048');
  await store.discardKey(gone);
  const report = {
    signed,
    attributes,
    schemeMismatch: await refusal(() => store.sign(gone, data, 'ecdsa-sha256')),
    keyNotOnToken: await refusal(() => store.sign(gone, data, 'rsa-pkcs1-sha256')),
    // A token never logged in by this process, so that the PIN is really checked.
    wrongPin: await refusal(() =>
      new Pkcs11KeyStore({
        ...settings,
        tokenLabel: args.otherTokenLabel,
        pin: () => '0000',
      }).ready(),
    ),
    absentToken: await refusal(() =>
      new Pkcs11KeyStore({ ...settings, tokenLabel: 'no-such-token' }).ready(),
    ),
    // At start-up the same problem stops the process with the same sentence.
    startup: await refusal(() =>
      checkKeyStore({
        config: loadConfig({
          APP_ENV: 'production',
          TSA_URL: 'https://tsa.example',
          KEYSTORE: 'pkcs11',
          PKCS11_MODULE: args.module,
          PKCS11_TOKEN_LABEL: args.otherTokenLabel,
          PKCS11_PIN: '0000',
        }),
        secrets: deriveSecrets(Buffer.from('probe')),
      }),
    ),
    missingModule: await refusal(() =>
      new Pkcs11KeyStore({
        ...settings,
        module: path.join(os.tmpdir(), 'no-such-module.so'),
      }).ready(),
    ),
  };
  await store.close();
  return report;
}

/** The seal key through the service with KEYSTORE=pkcs11 (development: with its certificate). */
async function seal(args: Args) {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'esign-probe-'));
  try {
    const config = loadConfig({
      DATA_DIR: dataDir,
      APP_ENV: 'development',
      KEYSTORE: 'pkcs11',
      PKCS11_MODULE: args.module,
      PKCS11_TOKEN_LABEL: args.tokenLabel,
      PKCS11_PIN: args.pin,
    });
    const runtime = openRuntime(config, { logger: testLogger(), clock: systemClock });
    // Two first uses at once: both generate on the token, one row wins, the other key is discarded.
    const [key, again] = await Promise.all([sealKey(runtime.deps), sealKey(runtime.deps)]);
    const data = Buffer.from('audit PDF signed attributes');
    const signature = await signWithKey(runtime.deps, key, data);
    await closeKeyStore(config);
    await runtime.database.close();
    return {
      store: key.store,
      sameKeyAgain: again.id === key.id,
      spki: b64(key.reference.publicKeySpki),
      certificate: key.certificate ? b64(key.certificate) : null,
      issuers: key.issuers.map(b64),
      data: b64(data),
      signature: b64(signature),
    };
  } finally {
    fs.rmSync(dataDir, { recursive: true, force: true });
  }
}

async function main() {
  const [scenario, raw] = process.argv.slice(2);
  const args = JSON.parse(raw ?? '{}') as Args;
  const report = scenario === 'seal' ? await seal(args) : await stores(args);
  unloadPkcs11Modules();
  process.stdout.write(`${JSON.stringify(report)}\n`);
}

void main();
