import crypto from 'node:crypto';
import type { TimestampAuthority } from '../signing/trustPolicy';
import { type CaDeps, developmentTsaCredentials } from './developmentCa';
import { type TsaSigner, timestampResponse } from './tsaResponder';

/**
 * The development TSA's identity: the TSA certificate (critical timeStamping EKU) and key that
 * the development CA keeps in the database (development_ca), whose root is the development trust anchor in
 * development and sandbox. Never used in production (the development CA refuses it there).
 */
export interface DevelopmentTsa extends TsaSigner {
  /** DER of the development CA: the anchor its tokens chain to. */
  caCertificate: Buffer;
}

export async function developmentTsa(deps: CaDeps): Promise<DevelopmentTsa> {
  const { privateKey, chain } = await developmentTsaCredentials(deps);
  return {
    certificateChain: chain,
    caCertificate: chain.at(-1)!,
    // RSA PKCS#1 v1.5 with SHA-256, as the TSA certificate's key and the responder expect.
    sign: async (data) => crypto.sign('sha256', data, privateKey),
  };
}

/** The development TSA as the engine asks a timestamp authority: answered in-process. */
export function developmentTimestampAuthority(deps: CaDeps): TimestampAuthority {
  return {
    exchange: async (request) =>
      timestampResponse({ clock: deps.clock, tsaSigner: await developmentTsa(deps) }, request),
  };
}
