import type { AuthenticateOptions } from './authenticate';

/**
 * Which credentials each area accepts, as the spec's table says. Routes authenticate with one
 * of these, never with an ad-hoc list, so the table lives in one place.
 */
export const credentialAreas = {
  /** Contract API and signing API: `Authorization: Bearer` or `X-API-Key`. */
  contracts: { accepts: ['apiKey', 'accessToken'] },
  /**
   * Signing a dossier task: the web app's access token, a partner token of the person, or an
   * organization key bound to them.
   */
  taskSigning: { accepts: ['apiKey', 'accessToken', 'partnerToken'] },
  /** Integration API, dossiers, files, tasks, history: `X-API-Key` or `x-access-token`. */
  integration: { accepts: ['apiKey', 'partnerToken'] },
  /** Directory: `X-API-Key` only; global keys allowed with `tenantCode`. */
  directory: { accepts: ['apiKey'], globalKeys: true },
  /**
   * Webhook test: organization key only. A global key passes here and gets the route's 400; a
   * valid access or partner token gets 403 (document 1, "Webhook test: 403 with an access token").
   */
  webhookTest: { accepts: ['apiKey'], globalKeys: true, refusesTokens: true },
  /** Partner login: `x-api-key` header only, organization or global key. */
  partnerLogin: { accepts: ['apiKey'], globalKeys: true },
} as const satisfies Record<string, AuthenticateOptions>;

export type CredentialArea = keyof typeof credentialAreas;

/** OpenAPI security of the integration area: `X-API-Key` or `x-access-token`. */
export const integrationSecurity: Record<string, string[]>[] = [
  { ApiKey: [] },
  { PartnerToken: [] },
];

/**
 * OpenAPI security of the contract and signing API: `Authorization: Bearer` or `X-API-Key`
 * (spec 01, "Which credentials").
 */
export const contractSecurity: Record<string, string[]>[] = [{ ApiKey: [] }, { Bearer: [] }];
