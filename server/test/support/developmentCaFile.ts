import fs from 'node:fs';
import type { Db } from '../../src/db/database';

const pem = (der: Buffer) =>
  `-----BEGIN CERTIFICATE-----\n${der
    .toString('base64')
    .replace(/.{1,64}/g, '$&\n')}-----END CERTIFICATE-----\n`;

/**
 * Writes the development CA's root (or its TSA) certificate, as the database holds it, to `file`
 * as PEM (for openssl, pdfsig and NSS); returns `file`. Fails when the database holds no CA.
 */
export async function writeDevelopmentCaPem(
  db: Db,
  file: string,
  which: 'ca' | 'tsa' = 'ca',
): Promise<string> {
  const row = await db.selectFrom('development_ca').selectAll().executeTakeFirstOrThrow();
  fs.writeFileSync(file, pem(which === 'ca' ? row.ca_certificate_der : row.tsa_certificate_der));
  return file;
}
