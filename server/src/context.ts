import type { Db } from './db/database';
import type { ApiKeyKind } from './db/schema';
import type { Clock } from './platform/clock';
import type { Config } from './platform/config';
import type { CredentialCache } from './platform/credentialCache';
import type { Logger } from './platform/logger';
import type { ServiceSecrets } from './platform/secrets';
import type { Fetcher } from './signing/fetcher';
import type { TimestampAuthority, TrustPolicies } from './signing/trustPolicy';
import type { FileStore } from './storage/fileStore';

/** Everything a request handler may use, built once by main.ts (or a test) and passed in. */
export interface AppDeps {
  db: Db;
  config: Config;
  clock: Clock;
  logger: Logger;
  secrets: ServiceSecrets;
  /** API keys' rows, their users and users' permissions, kept between requests. */
  credentials: CredentialCache;
  /** Content-addressed file bytes: under DATA_DIR/files, or in the S3 bucket (FILE_STORE). */
  files: FileStore;
  /** The signing engine's trust policy per tenant (global and tenant anchors; see runtime.ts). */
  trust: TrustPolicies;
  /** How the signing engine reaches OCSP, CRL and TSA URLs: the SSRF-safe outbound client. */
  fetcher: Fetcher;
  /** The timestamp authority signatures ask: TSA_URL, or the development TSA without it. */
  timestamps: TimestampAuthority;
  /**
   * The development CA's OCSP responder, reached in-process by revocation checks (like the
   * development TSA without TSA_URL); absent in production. See RevocationDeps.localOcsp.
   */
  localOcsp?: (issuer: Buffer, request: Buffer) => Promise<Buffer | null>;
}

export interface AppEnv {
  Variables: {
    deps: AppDeps;
    requestId: string;
    logger: Logger;
    principal: Principal;
  };
}

/** The user an operation is done as. */
export interface Actor {
  id: number;
  tenantId: number | null;
  username: string;
  isSuperAdmin: boolean;
}

/** Who is calling, after the credential was checked. */
export type Principal =
  | {
      kind: 'apiKey';
      keyId: number;
      keyKind: Exclude<ApiKeyKind, 'legacy'>;
      tenantId: number | null;
      organizationId: number | null;
      actor: Actor | null;
    }
  | { kind: 'accessToken'; actor: Actor }
  | { kind: 'partnerToken'; actor: Actor };

export type CredentialKind = Principal['kind'];
