/** Where the development CA lives: no ASN.1 library here, start-up checks it on every start. */
import fs from 'node:fs';
import path from 'node:path';
import type { Config } from '../platform/config';

export const developmentCaFiles = {
  caCert: 'ca.pem',
  caKey: 'ca.key',
  tsaCert: 'tsa.pem',
  tsaKey: 'tsa.key',
  /** Every certificate the CA issued, `<serial hex>.der`: what its OCSP responder knows. */
  issuedDir: 'issued',
} as const;

export function developmentCaDir(config: Pick<Config, 'dataDir'>): string {
  return path.join(config.dataDir, 'dev-ca');
}

/** Whether DATA_DIR/dev-ca holds a CA (it is renamed into place whole, so one file tells). */
export function developmentCaExists(config: Pick<Config, 'dataDir'>): boolean {
  return fs.existsSync(path.join(developmentCaDir(config), developmentCaFiles.caCert));
}
