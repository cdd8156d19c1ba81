import type { Clock, Fetcher } from '../fetcher';
import type { RevocationCache } from './revocationCache';
import type { RevocationStatus } from './sourceAnswer';

export type { RevocationStatus } from './sourceAnswer';

export interface RevocationDeps {
  clock: Clock;
  /** Reaches OCSP responders and CRL distribution points (the caller says where it may go). */
  fetcher: Fetcher;
  /** Keeps definitive answers until their nextUpdate; one per process is enough. */
  revocationCache?: RevocationCache;
  /**
   * Answers OCSP requests this process can answer itself, asked before the network: the
   * development CA's responder (runtime.ts sets it outside production). Given the issuer (DER)
   * and the DER OCSPRequest, the DER OCSPResponse, or null when the issuer is not its CA. Its
   * answers are judged like any other (signature, nonce, freshness).
   */
  localOcsp?: (issuer: Buffer, request: Buffer) => Promise<Buffer | null>;
}

export interface RevocationOptions {
  /** Deadline per fetch (OCSP, then each CRL URL). Default 5 000 ms. */
  timeoutMs?: number;
  /** Hash of the OCSP CertID. sha1 is what every responder understands (RFC 5019). */
  certIdHash?: 'sha1' | 'sha256';
  /** Largest CRL read. Default 10 MiB. */
  maxCrlBytes?: number;
  /** Clock difference tolerated on thisUpdate/nextUpdate. Default 5 minutes. */
  skewMs?: number;
}

export interface RevocationResult {
  status: RevocationStatus;
  /** Where the answer came from; 'none' when neither source gave a usable one. */
  source: 'ocsp' | 'crl' | 'none';
  /** Set when the source lists the certificate as revoked (even if after `at`). */
  revokedAt?: Date;
  /** RFC 5280 reason name when the source gave one (keyCompromise, ...). */
  revocationReason?: string;
  /** The whole OCSPResponse, DER, as received: for the DSS /OCSPs. */
  ocspResponse?: Buffer;
  /** The CRL, DER, as received: for the DSS /CRLs. */
  crl?: Buffer;
  /** thisUpdate/nextUpdate of the answer used. */
  thisUpdate?: Date;
  nextUpdate?: Date;
  /** Why a source was skipped or not believed, in the order tried (empty when all went well). */
  reasons: string[];
}
