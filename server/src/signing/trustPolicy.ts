/**
 * What the engine trusts, given to it by its caller (pyHanko's validation context is the
 * model): the anchors a signer's and a TSA's certificate may chain to, and whether a signer
 * certificate that chains to none is still accepted. The engine reads no configuration and no
 * database; the server builds its policies in one place (runtime.ts).
 */
export interface TrustPolicy {
  /** DER certificates a signer's chain may end at. */
  signerAnchors: readonly Buffer[];
  /** DER certificates a timestamp authority's chain may end at. */
  timestampAnchors: readonly Buffer[];
  /**
   * Accept a signer certificate that chains to no anchor (a development or sandbox service,
   * whose signers bring test certificates); a broken, expired or revoked chain is refused anyway.
   */
  acceptUntrustedSigners: boolean;
}

/**
 * The policy for a scope the caller names (the server: a tenant, or null for the global
 * anchors alone). The engine passes the scope through and never reads it.
 */
export type TrustPolicies = (scope: number | null) => Promise<TrustPolicy>;

/**
 * A timestamp authority as the engine asks it: one DER TimeStampReq in, the DER TimeStampResp
 * out (RFC 3161). The engine builds the request and verifies the answer (status, nonce, imprint,
 * signature, chain, time); the authority only carries them (`httpTimestampAuthority`, or an
 * in-process responder for development). A failure to get an answer throws TIMESTAMP_FAILED.
 */
export interface TimestampAuthority {
  exchange(request: Buffer): Promise<Buffer>;
}
