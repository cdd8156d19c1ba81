import 'reflect-metadata';
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import * as x509 from '@peculiar/x509';
import type { Clock } from '../../platform/clock';
import type { Config } from '../../platform/config';
import type { TsaSigner } from './responder';

/**
 * The development TSA's identity under DATA_DIR/dev-tsa: an RSA key and a certificate with the
 * critical timeStamping EKU, issued by a small CA of its own whose certificate is a trust anchor
 * in development and sandbox.
 *
 * TO BE REPLACED at integration: the development CA (server/src/signing/ca/) issues the TSA
 * certificate and its key store holds the key; only `developmentTsaSigner` changes, callers
 * keep the TsaSigner interface. Never used in production.
 */

export interface DevelopmentTsa extends TsaSigner {
  /** DER of the CA that issued the TSA certificate: the development trust anchor. */
  caCertificate: Buffer;
}

const files = { key: 'tsa-key.pem', certificate: 'tsa.pem', ca: 'ca.pem' } as const;

const rsa = {
  name: 'RSASSA-PKCS1-v1_5',
  hash: 'SHA-256',
  publicExponent: new Uint8Array([1, 0, 1]),
  modulusLength: 2048,
} as const;

/** The WebCrypto type @peculiar/x509 expects (the DOM's `Crypto`, absent from our lib). */
type WebCrypto = NonNullable<Parameters<typeof x509.X509CertificateGenerator.create>[1]>;

const yearMs = 365 * 24 * 3600 * 1000;

function serial(): string {
  const bytes = crypto.randomBytes(16);
  bytes[0] = (bytes[0]! & 0x7f) | 0x01;
  return bytes.toString('hex');
}

/** Creates the CA and TSA certificates and the TSA key in `directory` (which must not exist). */
async function createIdentity(directory: string, clock: Clock): Promise<void> {
  const webcrypto = crypto.webcrypto as unknown as WebCrypto;
  const now = clock.now();
  // Back-dated a day so a slightly slow clock elsewhere still finds them valid.
  const notBefore = new Date(now.getTime() - 24 * 3600 * 1000);
  const caKeys = await webcrypto.subtle.generateKey(rsa, true, ['sign', 'verify']);
  const ca = await x509.X509CertificateGenerator.createSelfSigned(
    {
      serialNumber: serial(),
      name: 'CN=ESign Development TSA CA (development only), O=ESign',
      notBefore,
      notAfter: new Date(now.getTime() + 20 * yearMs),
      signingAlgorithm: rsa,
      keys: caKeys,
      extensions: [
        new x509.BasicConstraintsExtension(true, 0, true),
        new x509.KeyUsagesExtension(
          x509.KeyUsageFlags.keyCertSign | x509.KeyUsageFlags.cRLSign,
          true,
        ),
        await x509.SubjectKeyIdentifierExtension.create(caKeys.publicKey, false, webcrypto),
      ],
    },
    webcrypto,
  );
  const tsaKeys = await webcrypto.subtle.generateKey(rsa, true, ['sign', 'verify']);
  const tsa = await x509.X509CertificateGenerator.create(
    {
      serialNumber: serial(),
      subject: 'CN=ESign Development TSA (development only), O=ESign',
      issuer: ca.subject,
      notBefore,
      notAfter: new Date(now.getTime() + 10 * yearMs),
      signingAlgorithm: rsa,
      publicKey: tsaKeys.publicKey,
      signingKey: caKeys.privateKey,
      extensions: [
        new x509.BasicConstraintsExtension(false, undefined, true),
        new x509.KeyUsagesExtension(
          x509.KeyUsageFlags.digitalSignature | x509.KeyUsageFlags.nonRepudiation,
          true,
        ),
        // RFC 3161 2.3: timeStamping alone, critical.
        new x509.ExtendedKeyUsageExtension([x509.ExtendedKeyUsage.timeStamping], true),
        await x509.SubjectKeyIdentifierExtension.create(tsaKeys.publicKey, false, webcrypto),
        await x509.AuthorityKeyIdentifierExtension.create(caKeys.publicKey, false, webcrypto),
      ],
    },
    webcrypto,
  );
  const pkcs8 = Buffer.from(await webcrypto.subtle.exportKey('pkcs8', tsaKeys.privateKey));
  const keyPem = crypto.createPrivateKey({ key: pkcs8, format: 'der', type: 'pkcs8' }).export({
    format: 'pem',
    type: 'pkcs8',
  });
  fs.writeFileSync(path.join(directory, files.key), keyPem, { mode: 0o600 });
  fs.writeFileSync(path.join(directory, files.certificate), tsa.toString('pem'));
  fs.writeFileSync(path.join(directory, files.ca), ca.toString('pem'));
}

function readIdentity(directory: string): DevelopmentTsa {
  const der = (file: string) =>
    Buffer.from(
      new x509.X509Certificate(fs.readFileSync(path.join(directory, file), 'utf8')).rawData,
    );
  const key = crypto.createPrivateKey(fs.readFileSync(path.join(directory, files.key)));
  const tsaCertificate = der(files.certificate);
  const caCertificate = der(files.ca);
  return {
    certificateChain: [tsaCertificate, caCertificate],
    caCertificate,
    sign: async (data) => crypto.sign('sha256', data, key),
  };
}

const loaded = new Map<string, Promise<DevelopmentTsa>>();

async function loadOrCreate(directory: string, clock: Clock): Promise<DevelopmentTsa> {
  if (!fs.existsSync(directory)) {
    // Built aside and renamed into place: a server and a CLI starting together cannot both
    // half-write it; the loser of the rename uses the winner's identity.
    fs.mkdirSync(path.dirname(directory), { recursive: true });
    const building = fs.mkdtempSync(`${directory}.building-`);
    try {
      await createIdentity(building, clock);
      fs.renameSync(building, directory);
    } catch (error) {
      fs.rmSync(building, { recursive: true, force: true });
      if (!fs.existsSync(directory)) throw error;
    }
  }
  return readIdentity(directory);
}

/**
 * The development TSA of this DATA_DIR, created on first use. Refused in production: there the
 * operator sets TSA_URL and the development identity must never sign anything.
 */
export function developmentTsa(config: Config, clock: Clock): Promise<DevelopmentTsa> {
  if (config.environment === 'production') {
    throw new Error('The development TSA is never used in production');
  }
  const directory = path.join(config.dataDir, 'dev-tsa');
  let identity = loaded.get(directory);
  if (identity === undefined) {
    identity = loadOrCreate(directory, clock);
    loaded.set(directory, identity);
    identity.catch(() => loaded.delete(directory));
  }
  return identity;
}
