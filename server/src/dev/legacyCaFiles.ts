/**
 * The development CA as versions before issue 19 kept it, in DATA_DIR/dev-ca: read once by the
 * first start after the upgrade, imported into the database (development_ca), then renamed to
 * DATA_DIR/dev-ca.imported so that nobody takes it for the CA in use.
 */
import fs from 'node:fs';
import path from 'node:path';
import type { Config } from '../platform/config';
import { pemCertificates } from '../signing/certificates/pem';

export const legacyCaFiles = {
  caCert: 'ca.pem',
  caKey: 'ca.key',
  tsaCert: 'tsa.pem',
  tsaKey: 'tsa.key',
  /** Every certificate the CA issued, `<serial hex>.der`. */
  issuedDir: 'issued',
} as const;

/** The folder name under DATA_DIR (and in backups made before issue 19). */
export const legacyCaFolder = 'dev-ca';
/** Where the folder goes once imported. */
export const importedCaFolder = 'dev-ca.imported';

export function legacyCaDir(config: Pick<Config, 'dataDir'>): string {
  return path.join(config.dataDir, legacyCaFolder);
}

export interface LegacyCa {
  caCertificate: Buffer;
  /** Sealed PKCS#8 as written (`v1.<iv>.<tag>.<ciphertext>`), imported verbatim. */
  caPrivateKey: string;
  tsaCertificate: Buffer;
  tsaPrivateKey: string;
  /** DER certificates under issued/, with their file names' serials. */
  issued: { serialHex: string; der: Buffer }[];
  /** When the CA files were written (the CA certificate's modification time). */
  createdAt: Date;
}

/** DATA_DIR/dev-ca when it holds a complete CA (it was renamed into place whole), else undefined. */
export function readLegacyCa(config: Pick<Config, 'dataDir'>): LegacyCa | undefined {
  const dir = legacyCaDir(config);
  const file = (name: string) => path.join(dir, name);
  if (!fs.existsSync(file(legacyCaFiles.caCert))) return undefined;
  const read = (name: string) => fs.readFileSync(file(name), 'utf8');
  const [caCertificate] = pemCertificates(read(legacyCaFiles.caCert));
  const [tsaCertificate] = pemCertificates(read(legacyCaFiles.tsaCert));
  if (caCertificate === undefined || tsaCertificate === undefined) {
    throw new Error(`${dir} holds no CA or TSA certificate: move it aside or restore it`);
  }
  const issuedDir = file(legacyCaFiles.issuedDir);
  const issued = fs.existsSync(issuedDir)
    ? fs
        .readdirSync(issuedDir)
        .filter((name) => /^[0-9a-f]{1,40}\.der$/.test(name))
        .map((name) => ({
          serialHex: name.slice(0, -'.der'.length),
          der: fs.readFileSync(path.join(issuedDir, name)),
        }))
    : [];
  return {
    caCertificate,
    caPrivateKey: read(legacyCaFiles.caKey).trim(),
    tsaCertificate,
    tsaPrivateKey: read(legacyCaFiles.tsaKey).trim(),
    issued,
    createdAt: fs.statSync(file(legacyCaFiles.caCert)).mtime,
  };
}

/**
 * Renames DATA_DIR/dev-ca to dev-ca.imported once its CA is in the database. Another process
 * that imported the same folder at once may have renamed it first; a dev-ca.imported already
 * there leaves it in place (it is read no more either way: the database row comes first).
 */
export function retireLegacyCa(config: Pick<Config, 'dataDir'>): void {
  try {
    fs.renameSync(legacyCaDir(config), path.join(config.dataDir, importedCaFolder));
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code !== 'ENOENT' && code !== 'ENOTEMPTY' && code !== 'EEXIST') throw error;
  }
}
