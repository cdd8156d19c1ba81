import fs from 'node:fs';
import { z } from 'zod';
import { developmentCa } from '../../dev/developmentCa';
import { importCertificate, listSignerKeyListings } from '../../keys/certificates';
import {
  createSignerKey,
  sealCertificateRequest,
  sealKey,
  signerEmail,
} from '../../keys/signingKeys';
import { toPem } from '../../signing/certificates/pem';
import type { SigningKey } from '../../signing/keys/signingKey';
import { tenantByCode } from '../../tenancy/resolveTenant';
import { type Command, checked, command, listCommand, option } from '../command';
import { existingFile } from './process';

/** One PEM block without the final newline: a JSON field or one printed line. */
function pem(der: Buffer): string {
  return toPem(der).trimEnd();
}

function certificateFields(key: SigningKey) {
  return {
    id: key.id,
    certificate: key.certificate ? pem(key.certificate) : null,
    chain: key.issuers.map(pem),
    certificateSource: key.certificateSource,
  };
}

const noOptions = z.object({});

/** The development CA, the service seal and cloud_hsm signer keys. */
export const signingKeyCommands: Command[] = [
  command({
    name: 'ca export',
    options: noOptions,
    prepare: () => async (deps) => {
      const ca = await developmentCa(deps);
      return { json: { certificate: ca.certificatePem }, lines: [ca.certificatePem.trim()] };
    },
  }),
  command({
    name: 'seal show',
    options: noOptions,
    prepare: () => async (deps) => {
      const key = await sealKey(deps);
      if (key.certificate) {
        return { json: certificateFields(key), lines: [pem(key.certificate)] };
      }
      // Production before the import: the request to have signed is what the operator needs.
      const request = await sealCertificateRequest(deps, key);
      return {
        json: { ...certificateFields(key), certificateRequest: request },
        lines: [request.trim()],
        warnings: [
          `The seal key (id ${key.id}) has no certificate yet. Have this request signed by your CA, then run: admin signer-key import-certificate --id ${key.id} --file CERT.pem`,
        ],
      };
    },
  }),
  command({
    name: 'signer-key create',
    options: z.object({ tenant: option.text, email: checked(option.text, signerEmail) }),
    prepare: ({ tenant: tenantCode, email }) => {
      return async (deps) => {
        const tenant = await tenantByCode(deps.db, tenantCode);
        const { key, certificateRequest } = await createSignerKey(deps, tenant, { email });
        const head = `Created signer key ${key.id} (${key.algorithm}, ${key.store}) for ${key.ownerEmail} in tenant ${tenant.code}.`;
        if (certificateRequest) {
          return {
            json: { ...certificateFields(key), certificateRequest },
            lines: [
              head,
              `Have this request signed by your CA, then run: admin signer-key import-certificate --id ${key.id} --file CERT.pem`,
              certificateRequest.trim(),
            ],
          };
        }
        return {
          json: { ...certificateFields(key), certificateRequest: null },
          lines: [
            `${head} Certificate from the development CA:`,
            key.certificate ? pem(key.certificate) : '-',
          ],
        };
      };
    },
  }),
  command({
    name: 'signer-key import-certificate',
    options: z.object({ id: option.positiveInteger, file: existingFile }),
    prepare: ({ id, file }) => {
      return async (deps) => {
        const key = await importCertificate(deps, id, fs.readFileSync(file, 'utf8'));
        const issuers = key.issuers.length;
        return {
          json: certificateFields(key),
          lines: [
            `Imported the certificate of ${key.purpose === 'seal' ? 'the seal key' : `signer key ${key.id} (${key.ownerEmail})`}${issuers > 0 ? ` with ${issuers} issuer certificate${issuers > 1 ? 's' : ''}` : ''}.`,
          ],
        };
      };
    },
  }),
  listCommand({
    name: 'signer-key list',
    key: 'signerKeys',
    header: ['ID', 'TENANT', 'EMAIL', 'NAME', 'ALGORITHM', 'STORE', 'CERTIFICATE', 'VALID TO'],
    list: listSignerKeyListings,
    row: (key) => [
      key.id,
      key.tenantCode,
      key.email,
      key.name,
      key.algorithm,
      key.store,
      key.certificateSource === null ? 'none (CSR pending)' : key.certificateSource,
      key.certificateValidTo,
    ],
  }),
];
