import 'reflect-metadata';
import crypto from 'node:crypto';
import * as x509 from '@peculiar/x509';
import type { AppDeps } from '../context';
import type { Db } from '../db/database';
import { DomainError } from '../errors/domainError';
import { isoNow } from '../platform/clock';
import type { Config } from '../platform/config';
import { readCertificate } from '../signing/certificates/certificate';
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
import { readLegacyCa, retireLegacyCa } from './legacyCaFiles';
import {
  type DevelopmentCaRow,
  findDevelopmentCa,
  insertDevelopmentCa,
  insertIssuedCertificates,
  issuedCertificateExists,
} from './queries';

/** What the development CA needs of the runtime. */
export type CaDeps = Pick<AppDeps, 'db' | 'config' | 'secrets' | 'clock'>;

/**
 * The development CA of `development` and `sandbox`: a root that issues the seal certificate,
 * cloud_hsm signer certificates and the development TSA's certificate, so that signing works
 * from `npm start` with no setup. It lives in the database, so every instance on one database
 * signs and trusts alike (table development_ca, migration 029):
 *
 * - the root and the TSA certificates, DER;
 * - their private keys, PKCS#8 sealed (AES-256-GCM) under the master secret's signing-keys key,
 *   as software signing keys are: a copy of the database alone does not sign;
 * - `development_ca_issued`: every certificate it issued (the TSA's included), which its OCSP
 *   responder (`/api/dev/ocsp`, named in each certificate's authorityInfoAccess) answers for.
 *
 * The first start after an upgrade imports DATA_DIR/dev-ca (legacyCaFiles.ts). Production never
 * creates nor uses it: there certificates are imported (CSR flow).
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
  hasIssued(serialHex: string): Promise<boolean>;
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
/** Labels binding each sealed key to its role (additional data of the encryption). */
const labels = { ca: 'development-ca', tsa: 'development-tsa' };

/** Refuses outside development and sandbox, naming what production does instead. */
export function assertDevelopmentCaAllowed(config: Pick<Config, 'environment'>): void {
  if (config.environment !== 'production') return;
  throw new DomainError(
    'DEVELOPMENT_CA_DISABLED',
    'The development CA is never used in production (APP_ENV=production): import a CA-issued certificate for each key with "admin signer-key import-certificate"',
  );
}

/** The development CA, created (or imported from DATA_DIR/dev-ca) on first use. */
export async function developmentCa(deps: CaDeps): Promise<DevelopmentCa> {
  const row = await caRecord(deps);
  const certificate = new x509.X509Certificate(row.ca_certificate_der);
  const caKey = () =>
    openPrivateKey(deps.secrets.signingKeyEncryptionKey, labels.ca, row.ca_private_key);
  return {
    certificate: Buffer.from(row.ca_certificate_der),
    certificatePem: certificate.toString('pem'),
    issue: async (profile, subjectPublicKeySpki) => {
      const signingKey = await importSigningKey(caKey());
      const issued = await issueCertificate(certificate, signingKey, profile, {
        spki: subjectPublicKeySpki,
        now: deps.clock.now(),
        ocspUrl: developmentOcspUrl(deps.config),
      });
      const der = Buffer.from(issued.rawData);
      await recordIssued(deps, [der]);
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
    hasIssued: (serialHex) => hasIssued(deps.db, row, serialHex),
  };
}

/** Where the development CA's OCSP responder answers: named in every certificate it issues. */
export function developmentOcspUrl(config: Pick<Config, 'publicUrl'>): string {
  return `${config.publicUrl}/api/dev/ocsp`;
}

/** Records issued certificates by serial (a serial recorded already keeps its row). */
async function recordIssued(deps: Pick<CaDeps, 'db' | 'clock'>, ders: Buffer[]): Promise<void> {
  const at = isoNow(deps.clock);
  // Small statements: an old CA may have issued thousands (SQLite binds 32,766 values at most).
  for (let from = 0; from < ders.length; from += 500) {
    await insertIssuedCertificates(
      deps.db,
      ders.slice(from, from + 500).map((der) => ({
        serial_hex: readCertificate(der).serialHex,
        certificate_der: der,
        issued_at: at,
      })),
    );
  }
}

/** A recorded issue, or the TSA's certificate (a CA made before `issued/` has only it). */
async function hasIssued(db: Db, row: DevelopmentCaRow, serialHex: string): Promise<boolean> {
  if (!/^[0-9a-f]{1,40}$/.test(serialHex)) return false;
  if (await issuedCertificateExists(db, serialHex)) return true;
  return readCertificate(row.tsa_certificate_der).serialHex === serialHex;
}

/** The development TSA's key and certificate chain (created with the CA). */
export async function developmentTsaCredentials(deps: CaDeps): Promise<DevelopmentTsaCredentials> {
  const row = await caRecord(deps);
  const pkcs8 = openPrivateKey(
    deps.secrets.signingKeyEncryptionKey,
    labels.tsa,
    row.tsa_private_key,
  );
  try {
    const certificate = Buffer.from(row.tsa_certificate_der);
    return {
      privateKey: crypto.createPrivateKey({ key: pkcs8, format: 'der', type: 'pkcs8' }),
      signatureScheme: 'rsa-pkcs1-sha256',
      certificate,
      chain: [certificate, Buffer.from(row.ca_certificate_der)],
    };
  } finally {
    pkcs8.fill(0);
  }
}

// --- Creation --------------------------------------------------------------------------------

type WebCryptoKey = crypto.webcrypto.CryptoKey;

/** Creations under way in this process (per database), so that concurrent first uses create once. */
const creating = new WeakMap<Db, Promise<DevelopmentCaRow>>();

/** The CA's row, created or imported on first use. */
async function caRecord(deps: CaDeps): Promise<DevelopmentCaRow> {
  assertDevelopmentCaAllowed(deps.config);
  const found = await findDevelopmentCa(deps.db);
  if (found) return found;
  let pending = creating.get(deps.db);
  if (!pending) {
    pending = createOrImport(deps).finally(() => creating.delete(deps.db));
    creating.set(deps.db, pending);
  }
  return pending;
}

/**
 * DATA_DIR/dev-ca when this instance has one (the first start after the upgrade), else a new
 * CA. Either is inserted with ON CONFLICT DO NOTHING: when instances (or a server and the CLI)
 * start together, one row wins and every one reads back that row.
 */
async function createOrImport(deps: CaDeps): Promise<DevelopmentCaRow> {
  const legacy = readLegacyCa(deps.config);
  if (legacy) {
    const won = await insertDevelopmentCa(deps.db, {
      ca_certificate_der: legacy.caCertificate,
      ca_private_key: legacy.caPrivateKey,
      tsa_certificate_der: legacy.tsaCertificate,
      tsa_private_key: legacy.tsaPrivateKey,
      created_at: legacy.createdAt.toISOString(),
    });
    if (won) await recordIssued(deps, [legacy.tsaCertificate, ...legacy.issued.map((i) => i.der)]);
    retireLegacyCa(deps.config);
  } else {
    await createCa(deps);
  }
  const row = await findDevelopmentCa(deps.db);
  if (!row) throw new Error('the development CA vanished after a conflicting insert');
  return row;
}

/** A new CA and TSA certificate, recorded unless another process recorded its own first. */
async function createCa(deps: CaDeps): Promise<void> {
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
  const tsaDer = Buffer.from(tsaCertificate.rawData);
  const won = await insertDevelopmentCa(deps.db, {
    ca_certificate_der: Buffer.from(caCertificate.rawData),
    ca_private_key: sealedCaKey,
    tsa_certificate_der: tsaDer,
    tsa_private_key: sealedTsaKey,
    created_at: now.toISOString(),
  });
  // The loser's CA never signed anything anyone keeps: it is dropped.
  if (won) await recordIssued(deps, [tsaDer]);
}

/** Creates the development CA now if it does not exist (start-up of development and sandbox). */
export async function ensureDevelopmentCa(deps: CaDeps): Promise<void> {
  await caRecord(deps);
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
