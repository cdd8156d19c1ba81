import util from 'node:util';
import { ConfigError, loadConfig } from '../../../src/platform/config';

const pkcs11 = {
  KEYSTORE: 'pkcs11',
  PKCS11_MODULE: '/usr/lib/softhsm/libsofthsm2.so',
  PKCS11_TOKEN_LABEL: 'esign',
  PKCS11_PIN: 'pin-1234-secret',
};

describe('key store settings (KEYSTORE, PKCS11_*)', () => {
  it('defaults to software keys', () => {
    expect(loadConfig({}).keyStore).toEqual({ kind: 'software' });
    expect(loadConfig({ KEYSTORE: '' }).keyStore).toEqual({ kind: 'software' });
  });

  it('reads the PKCS#11 module, token label and PIN', () => {
    const settings = loadConfig(pkcs11).keyStore;
    expect(settings).toMatchObject({
      kind: 'pkcs11',
      module: pkcs11.PKCS11_MODULE,
      tokenLabel: 'esign',
    });
    expect(settings.kind === 'pkcs11' && settings.pin()).toBe(pkcs11.PKCS11_PIN);
  });

  it('never shows the PIN when the configuration is serialized or inspected', () => {
    const config = loadConfig(pkcs11);
    expect(JSON.stringify(config)).not.toContain(pkcs11.PKCS11_PIN);
    expect(util.inspect(config, { depth: 10 })).not.toContain(pkcs11.PKCS11_PIN);
  });

  it.each(['PKCS11_MODULE', 'PKCS11_TOKEN_LABEL', 'PKCS11_PIN'])(
    'KEYSTORE=pkcs11 requires %s, naming it',
    (name) => {
      expect(() => loadConfig({ ...pkcs11, [name]: '' })).toThrow(
        new ConfigError(`${name} is required when KEYSTORE=pkcs11`),
      );
    },
  );

  it('refuses a relative PKCS11_MODULE and an unknown KEYSTORE', () => {
    expect(() => loadConfig({ ...pkcs11, PKCS11_MODULE: 'libsofthsm2.so' })).toThrow(
      'PKCS11_MODULE must be an absolute path to the PKCS#11 library',
    );
    expect(() => loadConfig({ KEYSTORE: 'hsm' })).toThrow(
      'KEYSTORE must be software or pkcs11, got "hsm"',
    );
  });
});
