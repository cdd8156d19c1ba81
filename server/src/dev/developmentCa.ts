import 'reflect-metadata';
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import * as x509 from '@peculiar/x509';
import type { AppDeps } from '../context';
import { DomainError } from '../errors/domainError';
import type { Config } from '../platform/config';
import { readCertificate } from '../signing/certificates/certificate';
import { pemCertificates } from '../signing/certificates/pem';
import { openPrivateKey, sealPrivateKey } from '../signing/keys/sealedKey';
import {
  type CertificateProfile,
  caSigningAlgorithm,
  profileExtensions,
  randomSerialNumber,
  subjectOf,
  utf8Name,
  validityDays,
  validityFrom,
  webcrypto,
} from './certificateProfiles';
import { developmentCaDir, developmentCaExists, developmentCaFiles } from './developmentCaFiles';

/** What the development CA needs of the runtime. */
export type CaDeps = Pick<AppDeps, 'config' | 'secrets' | 'clock'>;

/**
 * The development CA of `development` and `sandbox`: a root under DATA_DIR/dev-ca that issues
 * the seal certificate, cloud_hsm signer certificates and the development TSA's certificate, so
 * that signing works from `npm start` with no setup. Files:
 *
 * - `ca.pem`, `tsa.pem`: the certificates;
 * - `ca.key`, `tsa.key`: PKCS#8 sealed (AES-256-GCM) under the master secret's signing-keys key,
 *   mode 0600 in a 0700 directory: a copy of DATA_DIR/dev-ca alone does not sign;
 * - `issued/<serial>.der`: every certificate it issued (the TSA's included), which its OCSP
 *   responder (`/api/dev/ocsp`, named in each certificate's authorityInfoAccess) answers for.
 *
 * Production never creates nor uses it: there certificates are imported (CSR flow).
 */
export interface DevelopmentCa {
  /** The root certificate, DER. */
  certificate: Buffer;
  certificatePem: string;
  /** Issues a certificate of `profile` for a public key (DER SPKI); returns DER. */
  issue(profile: CertificateProfile, subjectPublicKeySpki: Buffer): Promise<Buffer>;
  /** RSA PKCS#1 v1.5 with SHA-256 over `data` with the CA's key (its OCSP answers). */
  sign(data: Buffer): Buffer;
  /** Whether it issued the certificate of this serial (lower-case hex, no leading zero byte). */
  hasIssued(serialHex: string): boolean;
}

/** The development TSA's signing material (the TSA itself is served elsewhere). */
export interface DevelopmentTsaCredentials {
  privateKey: crypto.KeyObject;
  signatureScheme: 'rsa-pkcs1-sha256';
  /** The TSA certificate (extendedKeyUsage timeStamping, critical), DER. */
  certificate: Buffer;
  /** TSA certificate first, then the development CA, DER. */
  chain: Buffer[];
}

export const developmentCaName = 'ESign Development CA';
const caValidityDays = 10 * 365;
const files = developmentCaFiles;
/** Labels binding each sealed key file to its role (additional data of the encryption). */
const labels = { ca: 'development-ca', tsa: 'development-tsa' };

export { developmentCaDir };

/** Refuses outside development and sandbox, naming what production does instead. */
export function assertDevelopmentCaAllowed(config: Pick<Config, 'environment'>): void {
  if (config.environment !== 'production') return;
  throw new DomainError(
    'DEVELOPMENT_CA_DISABLED',
    'The development CA is never used in production (APP_ENV=production): import a CA-issued certificate for each key with "admin signer-key import-certificate"',
  );
}

/** The development CA, created under DATA_DIR/dev-ca on first use. */
export async function developmentCa(deps: CaDeps): Promise<DevelopmentCa> {
  const dir = await caDirectory(deps);
  const certificatePem = fs.readFileSync(path.join(dir, files.caCert), 'utf8');
  const certificate = new x509.X509Certificate(certificatePem);
  const caKey = () =>
    openPrivateKey(
      deps.secrets.signingKeyEncryptionKey,
      labels.ca,
      fs.readFileSync(path.join(dir, files.caKey), 'utf8'),
    );
  return {
    certificate: Buffer.from(certificate.rawData),
    certificatePem: certificate.toString('pem'),
    issue: async (profile, subjectPublicKeySpki) => {
      const signingKey = await importSigningKey(caKey());
      const issued = await issueCertificate(certificate, signingKey, profile, {
        spki: subjectPublicKeySpki,
        now: deps.clock.now(),
        ocspUrl: developmentOcspUrl(deps.config),
      });
      const der = Buffer.from(issued.rawData);
      recordIssued(dir, der);
      return der;
    },
    sign: (data) => {
      const pkcs8 = caKey();
      try {
        const key = crypto.createPrivateKey({ key: pkcs8, format: 'der', type: 'pkcs8' });
        return crypto.sign('sha256', data, key);
      } finally {
        pkcs8.fill(0);
      }
    },
    hasIssued: (serialHex) => hasIssued(dir, serialHex),
  };
}

/** Where the development CA's OCSP responder answers: named in every certificate it issues. */
export function developmentOcspUrl(config: Pick<Config, 'publicUrl'>): string {
  return `${config.publicUrl}/api/dev/ocsp`;
}

/** Keeps a copy of an issued certificate as `issued/<serial>.der` (created on first use). */
function recordIssued(dir: string, der: Buffer): void {
  const issuedDir = path.join(dir, files.issuedDir);
  fs.mkdirSync(issuedDir, { recursive: true, mode: 0o700 });
  fs.writeFileSync(path.join(issuedDir, `${readCertificate(der).serialHex}.der`), der, {
    mode: 0o644,
  });
}

/** A record under `issued/`, or the TSA's certificate (a CA made before `issued/` has only it). */
function hasIssued(dir: string, serialHex: string): boolean {
  if (!/^[0-9a-f]{1,40}$/.test(serialHex)) return false;
  if (fs.existsSync(path.join(dir, files.issuedDir, `${serialHex}.der`))) return true;
  const [tsa] = pemCertificates(fs.readFileSync(path.join(dir, files.tsaCert), 'utf8'));
  return tsa !== undefined && readCertificate(tsa).serialHex === serialHex;
}

/** The development TSA's key and certificate chain (created with the CA). */
export async function developmentTsaCredentials(deps: CaDeps): Promise<DevelopmentTsaCredentials> {
  const dir = await caDirectory(deps);
  const read = (name: string) => fs.readFileSync(path.join(dir, name), 'utf8');
  const pkcs8 = openPrivateKey(
    deps.secrets.signingKeyEncryptionKey,
    labels.tsa,
    read(files.tsaKey),
  );
  try {
    const [certificate] = pemCertificates(read(files.tsaCert));
    const [ca] = pemCertificates(read(files.caCert));
    if (certificate === undefined || ca === undefined) {
      throw new Error(`${developmentCaDir(deps.config)} holds no TSA or CA certificate`);
    }
    return {
      privateKey: crypto.createPrivateKey({ key: pkcs8, format: 'der', type: 'pkcs8' }),
      signatureScheme: 'rsa-pkcs1-sha256',
      certificate,
      chain: [certificate, ca],
    };
  } finally {
    pkcs8.fill(0);
  }
}

// --- Creation --------------------------------------------------------------------------------

type WebCryptoKey = crypto.webcrypto.CryptoKey;

/** Creations under way in this process, so that concurrent first uses create once. */
const creating = new Map<string, Promise<void>>();

/** DATA_DIR/dev-ca, created on first use. */
async function caDirectory(deps: CaDeps): Promise<string> {
  assertDevelopmentCaAllowed(deps.config);
  const dir = developmentCaDir(deps.config);
  if (!developmentCaExists(deps.config)) {
    let pending = creating.get(dir);
    if (!pending) {
      pending = createCa(deps, dir).finally(() => creating.delete(dir));
      creating.set(dir, pending);
    }
    await pending;
  }
  return dir;
}

/**
 * Everything is written to a fresh directory that is then renamed into place, so a server and a
 * CLI starting together end with one complete CA (the loser of the rename discards its own).
 */
async function createCa(deps: CaDeps, dir: string): Promise<void> {
  fs.mkdirSync(deps.config.dataDir, { recursive: true });
  const staging = fs.mkdtempSync(path.join(deps.config.dataDir, '.dev-ca-'));
  try {
    fs.chmodSync(staging, 0o700);
    const now = deps.clock.now();
    const key = deps.secrets.signingKeyEncryptionKey;
    const caKeys = generateRsaKey();
    // Sealed before importSigningKey wipes the PKCS#8 bytes.
    const sealedCaKey = sealPrivateKey(key, labels.ca, caKeys.pkcs8);
    const caSigningKey = await importSigningKey(caKeys.pkcs8);
    const caPublicKey = await crypto.webcrypto.subtle.importKey(
      'spki',
      caKeys.spki,
      caSigningAlgorithm,
      true,
      ['verify'],
    );
    const caCertificate = await x509.X509CertificateGenerator.createSelfSigned(
      {
        serialNumber: randomSerialNumber(),
        name: utf8Name([
          ['CN', developmentCaName],
          ['O', deps.config.serviceName],
        ]),
        ...validityFrom(now, caValidityDays),
        signingAlgorithm: caSigningAlgorithm,
        keys: { privateKey: caSigningKey, publicKey: caPublicKey },
        extensions: [
          new x509.BasicConstraintsExtension(true, undefined, true),
          new x509.KeyUsagesExtension(
            x509.KeyUsageFlags.keyCertSign | x509.KeyUsageFlags.cRLSign,
            true,
          ),
          await x509.SubjectKeyIdentifierExtension.create(caKeys.spki, false, webcrypto),
        ],
      },
      webcrypto,
    );
    const tsaKeys = generateRsaKey();
    const sealedTsaKey = sealPrivateKey(key, labels.tsa, tsaKeys.pkcs8);
    tsaKeys.pkcs8.fill(0);
    const tsaCertificate = await issueCertificate(
      caCertificate,
      caSigningKey,
      { kind: 'tsa', serviceName: deps.config.serviceName },
      { spki: tsaKeys.spki, now, ocspUrl: developmentOcspUrl(deps.config) },
    );
    const write = (name: string, text: string, mode: number) =>
      fs.writeFileSync(path.join(staging, name), text, { mode, flag: 'wx' });
    write(files.caKey, sealedCaKey, 0o600);
    write(files.tsaKey, sealedTsaKey, 0o600);
    write(files.caCert, caCertificate.toString('pem'), 0o644);
    write(files.tsaCert, tsaCertificate.toString('pem'), 0o644);
    recordIssued(staging, Buffer.from(tsaCertificate.rawData));
    try {
      fs.renameSync(staging, dir);
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      // Another process renamed its CA into place first: keep that one.
      if (code !== 'ENOTEMPTY' && code !== 'EEXIST') throw error;
    }
  } finally {
    fs.rmSync(staging, { recursive: true, force: true });
  }
}

/** Creates the development CA now if it does not exist (start-up of development and sandbox). */
export async function ensureDevelopmentCa(deps: CaDeps): Promise<void> {
  await caDirectory(deps);
}

function generateRsaKey(): { spki: Buffer; pkcs8: Buffer } {
  const { publicKey, privateKey } = crypto.generateKeyPairSync('rsa', { modulusLength: 2048 });
  return {
    spki: publicKey.export({ format: 'der', type: 'spki' }),
    pkcs8: privateKey.export({ format: 'der', type: 'pkcs8' }),
  };
}

/** A non-extractable WebCrypto key for @peculiar/x509; the PKCS#8 bytes are wiped. */
async function importSigningKey(pkcs8: Buffer): Promise<WebCryptoKey> {
  try {
    return await crypto.webcrypto.subtle.importKey('pkcs8', pkcs8, caSigningAlgorithm, false, [
      'sign',
    ]);
  } finally {
    pkcs8.fill(0);
  }
}

async function issueCertificate(
  issuer: x509.X509Certificate,
  signingKey: WebCryptoKey,
  profile: CertificateProfile,
  subject: { spki: Buffer; now: Date; ocspUrl: string },
): Promise<x509.X509Certificate> {
  const issuerKeyId = issuer.getExtension(x509.SubjectKeyIdentifierExtension);
  return x509.X509CertificateGenerator.create(
    {
      serialNumber: randomSerialNumber(),
      subject: subjectOf(profile),
      issuer: issuer.subjectName,
      ...validityFrom(subject.now, validityDays[profile.kind]),
      publicKey: subject.spki,
      signingKey,
      signingAlgorithm: caSigningAlgorithm,
      extensions: [
        new x509.BasicConstraintsExtension(false, undefined, true),
        ...profileExtensions(profile),
        await x509.SubjectKeyIdentifierExtension.create(subject.spki, false, webcrypto),
        ...(issuerKeyId ? [new x509.AuthorityKeyIdentifierExtension(issuerKeyId.keyId)] : []),
        // Where relying parties ask about it (RFC 5280 4.2.2.1): the CA's own responder.
        new x509.AuthorityInfoAccessExtension({ ocsp: subject.ocspUrl }),
      ],
    },
    webcrypto,
  );
}
