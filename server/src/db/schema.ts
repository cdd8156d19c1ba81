import type { Generated } from 'kysely';

/** Row types of every table, as Kysely sees them. Timestamps are ISO 8601 UTC strings. */
export interface TenantsTable {
  id: Generated<number>;
  code: string;
  name: string;
  developer_email: string | null;
  developer_phone: string | null;
  created_at: string;
}

export interface OrganizationsTable {
  id: Generated<number>;
  tenant_id: number;
  parent_id: number | null;
  code: string;
  name: string;
  type: number;
  status: number;
  address: string | null;
  phone: string | null;
  deleted_at: string | null;
  created_at: string;
  updated_at: string;
}

export interface RolesTable {
  id: Generated<number>;
  tenant_id: number;
  organization_id: number;
  code: string;
  name: string;
  is_department_head: number;
  status: number;
  created_at: string;
  updated_at: string;
}

export interface RolePermissionsTable {
  role_id: number;
  permission: string;
}

export type UserType = 'internal' | 'external';

export interface UsersTable {
  id: Generated<number>;
  tenant_id: number | null;
  organization_id: number | null;
  code: string | null;
  username: string;
  username_key: string;
  email: string | null;
  email_key: string | null;
  name: string | null;
  phone: string | null;
  identity_number: string | null;
  tax_code: string | null;
  address: string | null;
  gender: string | null;
  status: number;
  type: UserType;
  is_super_admin: number;
  password_hash: string | null;
  created_at: string;
  updated_at: string;
}

export interface MembershipsTable {
  user_id: number;
  organization_id: number;
  role_id: number;
  created_at: string;
}

export type ApiKeyKind = 'organization' | 'global' | 'legacy';

export interface ApiKeysTable {
  id: Generated<number>;
  public_id: string;
  kind: ApiKeyKind;
  tenant_id: number | null;
  organization_id: number | null;
  user_id: number | null;
  secret_hash: string;
  expires_at: string | null;
  revoked_at: string | null;
  last_used_at: string | null;
  created_at: string;
}

export interface RefreshTokensTable {
  id: Generated<number>;
  user_id: number;
  family_id: string;
  token_hash: string;
  expires_at: string;
  used_at: string | null;
  revoked_at: string | null;
  created_at: string;
}

export interface WebSessionsTable {
  id: Generated<number>;
  token_hash: string;
  user_id: number;
  credential: 'password' | 'accessToken' | 'partnerToken';
  api_key_id: number | null;
  created_at: string;
  last_seen_at: string;
  expires_at: string;
  ended_at: string | null;
}

export interface EmbeddingOriginsTable {
  id: Generated<number>;
  tenant_id: number;
  origin: string;
  created_at: string;
}

export interface WebhookSubscriptionsTable {
  id: string;
  tenant_id: number;
  organization_id: number;
  url: string;
  /** JSON array of event names */
  events: string;
  secret_encrypted: string;
  active: number;
  created_at: string;
  updated_at: string;
  /** The secret before the last rotation, still signing until previous_secret_expires_at. */
  previous_secret_encrypted: string | null;
  previous_secret_expires_at: string | null;
}

export interface ProcessesTable {
  id: Generated<number>;
  tenant_id: number;
  organization_id: number;
  code: string;
  name: string;
  /** JSON array of the ecmClassCode values the process signs */
  document_classes: string;
  created_at: string;
  updated_at: string;
}

export type StepKind = 'guest' | 'phone_guest' | 'internal' | 'role';
export type SignType = 'digital_signature' | 'image_signature' | 'app_submit' | 'notification';

export interface ProcessStepsTable {
  id: Generated<number>;
  process_id: number;
  position: number;
  step_code: string;
  name: string;
  kind: StepKind;
  sign_type: SignType;
  deadline_seconds: number | null;
  approve_label: string;
  reject_label: string;
  role_id: number | null;
  default_user_id: number | null;
}

export interface TemplatesTable {
  id: Generated<number>;
  tenant_id: number;
  organization_id: number;
  code: string;
  name: string;
  sha256: string;
  size: number;
  /** JSON array of the AcroForm field names */
  fields: string;
  created_at: string;
  updated_at: string;
}

export type DossierStatus =
  | 'PENDING'
  | 'PENDING_SIGN'
  | 'IN_PROGRESS'
  | 'COMPLETED'
  | 'REJECTED'
  | 'EXPIRED';

export interface DossiersTable {
  id: Generated<number>;
  uuid: string;
  tenant_id: number;
  organization_id: number;
  document_id: string | null;
  title: string;
  process_id: number;
  ecm_class_code: string | null;
  status: DossierStatus;
  transaction_id: string | null;
  /** JSON object: the caller's metadata plus tenantCode */
  metadata: string;
  created_by_user_id: number | null;
  required_count: number;
  signed_count: Generated<number>;
  created_at: string;
  updated_at: string;
  started_at: string | null;
  completed_at: string | null;
  rejected_at: string | null;
  expired_at: string | null;
  /** Hash of the newest audit event (the genesis hash before the first). */
  audit_head: Generated<string>;
}

export type FileKind = 'MAIN' | 'ATTACHMENT';

export interface DossierFilesTable {
  id: Generated<number>;
  uuid: string;
  dossier_id: number;
  organization_id: number;
  kind: FileKind;
  position: number;
  title: string;
  ecm_class_code: string | null;
  mime_type: string;
  created_at: string;
}

export interface FileVersionsTable {
  id: Generated<number>;
  file_id: number;
  version: number;
  sha256: string;
  size: number;
  created_at: string;
}

/** 1 waiting, 2 approved, 3 rejected, 4 expired (the spec's task status values). */
export type TaskStatusValue = 1 | 2 | 3 | 4;

export interface TasksTable {
  id: Generated<number>;
  code: string;
  tenant_id: number;
  organization_id: number;
  dossier_id: number;
  step_id: number;
  status: TaskStatusValue;
  assigned_at: string;
  expire_at: string | null;
  action_at: string | null;
  comment: string | null;
}

export type TurnStatus = 'WAITING' | 'ACTIVE' | 'SIGNED' | 'REJECTED' | 'EXPIRED' | 'CANCELLED';

export interface TurnsTable {
  id: Generated<number>;
  dossier_id: number;
  step_id: number;
  step_position: number;
  turn_order: number;
  task_id: number | null;
  status: TurnStatus;
  signer_full_name: string | null;
  signer_email: string | null;
  signer_phone: string | null;
  signer_identity_number: string | null;
  signer_tax_code: string | null;
  assignee_user_id: number | null;
  role_id: number | null;
  acted_by_user_id: number | null;
  acted_at: string | null;
  /** 1 while the turn's task is waiting (status 1); kept by triggers (migration 026), never written. */
  task_waiting: Generated<number>;
  /** The task's tenant, organization and assignedAt while task_waiting is 1 (triggers, migration 027). */
  task_tenant_id: Generated<number | null>;
  task_organization_id: Generated<number | null>;
  task_assigned_at: Generated<string | null>;
  comment: string | null;
}

export type HistoryAction = 'NEXT' | 'REJECT' | 'OVERDUE';

export interface HistoryTable {
  id: Generated<number>;
  tenant_id: number;
  dossier_id: number;
  task_id: number;
  turn_id: number;
  action: HistoryAction;
  action_label: string;
  action_at: string;
  comment: string | null;
  actor_user_id: number | null;
  actor_name: string | null;
  actor_username: string | null;
  actor_email: string | null;
  actor_phone: string | null;
}

export interface DelegationsTable {
  id: Generated<number>;
  tenant_id: number;
  from_user_id: number;
  to_user_id: number;
  starts_at: string;
  ends_at: string;
  created_at: string;
  revoked_at: string | null;
}

export type NotifyChannel = 'mail' | 'sms';
/** pending, sent, failed: its job's state; suppressed: no job (sandbox without an address). */
export type NotifyStatus = 'pending' | 'sent' | 'failed' | 'suppressed';
/** configured: the configured transport; dev_file: the development file outbox; none: nobody. */
export type NotifyRoute = 'configured' | 'dev_file' | 'none';

/** A message and its facts; its queue state is its job's (none when suppressed). */
export interface NotifyOutboxTable {
  id: Generated<number>;
  channel: NotifyChannel;
  tenant_id: number;
  kind: string;
  locale: 'vi' | 'en';
  recipient: string;
  recipient_name: string | null;
  send_to: string | null;
  route: NotifyRoute;
  sandbox: number;
  subject: string | null;
  text_body: string | null;
  html_body: string | null;
  sensitive: number;
  discard_after: string | null;
  provider_message_id: string | null;
  created_at: string;
  sent_at: string | null;
  job_id: number | null;
}

export type WebhookDeliveryStatus = 'pending' | 'delivered' | 'failed';

export interface WebhookEventsTable {
  id: string;
  tenant_id: number;
  organization_id: number;
  type: string;
  /** Canonical JSON bytes of the envelope: stored once, sent byte for byte. */
  body: Buffer;
  created_at: string;
}

/** One event for one subscription; its queue state is its job's. */
export interface WebhookDeliveriesTable {
  id: Generated<number>;
  event_id: string;
  subscription_id: string;
  tenant_id: number;
  last_http_status: number | null;
  created_at: string;
  job_id: number;
}

export interface WebhookAttemptsTable {
  id: Generated<number>;
  delivery_id: number;
  number: number;
  started_at: string;
  finished_at: string | null;
  /** 0: no connection or no answer in time. */
  http_status: number | null;
  latency_ms: number | null;
  error: string | null;
  response_excerpt: string | null;
}

/** pending: waiting or leased; done: its handler succeeded; failed: it will not run again. */
export type JobStatus = 'pending' | 'done' | 'failed';

/** The one queue (jobs/): every kind of background work, with its claim and lease. */
export interface JobsTable {
  id: Generated<number>;
  kind: string;
  /** What a kind without a domain row needs (JSON); null when the domain row points here. */
  payload: string | null;
  status: JobStatus;
  /** Counted at claim: a run killed mid-way has used its attempt. */
  attempts: number;
  max_attempts: number;
  /** When it is due; while leased, the lease expiry (an expired lease is due again). */
  run_at: string;
  /** The allocation id of the claim holding it; compared when its result is recorded. */
  lease_id: string | null;
  last_error: string | null;
  created_at: string;
  updated_at: string;
  last_attempt_at: string | null;
  finished_at: string | null;
}

export interface WebhookTestRequestsTable {
  id: Generated<number>;
  tag: string;
  received_at: string;
  remote_address: string | null;
  /** JSON object of the request headers */
  headers: string;
  body: Buffer;
  body_bytes: number;
  truncated: number;
}

export interface TrustAnchorsTable {
  id: Generated<number>;
  /** null: a global anchor, trusted for every tenant. */
  tenant_id: number | null;
  name: string;
  /** DER */
  certificate: Buffer;
  /** The subject DN, for people. */
  subject: string;
  /** SHA-256 of the DER, lowercase hex; unique per scope. */
  fingerprint: string;
  created_at: string;
}

export type SignaturePreparationState = 'open' | 'finalized' | 'abandoned';

export interface SignaturePreparationsTable {
  id: Generated<number>;
  tenant_id: number;
  /** The stored file (file_versions.sha256) the revision was prepared from. */
  source_sha256: string;
  /** The prepared file, placeholder empty, in the FileStore. */
  prepared_sha256: string;
  field_name: string;
  /** JSON `[a, b, c, d]`. */
  byte_range: string;
  /** Offset of the first hex digit of /Contents. */
  contents_offset: number;
  contents_hex_length: number;
  /** SHA-256 over the byte ranges, lowercase hex: the contractHash without `sha256:`. */
  document_digest: string;
  /** The signature dictionary's /M. */
  signing_time: string;
  created_at: string;
  expires_at: string;
  state: SignaturePreparationState;
  finalized_at: string | null;
  signed_sha256: string | null;
  /** JSON SignatureSummary of the finalized signature. */
  signature_summary: string | null;
  /** JSON base64 DER lists (certificates, ocspResponses, crls) finalize obtained; for the next DSS. */
  validation_material: string | null;
  /** The name the visible box and /Name show. */
  shown_name: string | null;
  /** SHA-256 (hex) of the certificate the revision was prepared for: only it may finalize. */
  certificate_sha256: string | null;
}

export interface Database {
  tenants: TenantsTable;
  organizations: OrganizationsTable;
  roles: RolesTable;
  role_permissions: RolePermissionsTable;
  users: UsersTable;
  memberships: MembershipsTable;
  api_keys: ApiKeysTable;
  refresh_tokens: RefreshTokensTable;
  web_sessions: WebSessionsTable;
  embedding_origins: EmbeddingOriginsTable;
  webhook_subscriptions: WebhookSubscriptionsTable;
  processes: ProcessesTable;
  process_steps: ProcessStepsTable;
  templates: TemplatesTable;
  dossiers: DossiersTable;
  dossier_files: DossierFilesTable;
  file_versions: FileVersionsTable;
  tasks: TasksTable;
  turns: TurnsTable;
  history: HistoryTable;
  delegations: DelegationsTable;
  webhook_events: WebhookEventsTable;
  webhook_deliveries: WebhookDeliveriesTable;
  webhook_attempts: WebhookAttemptsTable;
  webhook_test_requests: WebhookTestRequestsTable;
  notify_outbox: NotifyOutboxTable;
  jobs: JobsTable;
  trust_anchors: TrustAnchorsTable;
  signing_keys: SigningKeysTable;
  signature_preparations: SignaturePreparationsTable;
  contract_types: ContractTypesTable;
  contracts: ContractsTable;
  contract_signers: ContractSignersTable;
  contract_file_versions: ContractFileVersionsTable;
  contract_audit_events: ContractAuditEventsTable;
  dossier_audit_events: DossierAuditEventsTable;
  signing_sessions: SigningSessionsTable;
  otp_events: OtpEventsTable;
  development_ca: DevelopmentCaTable;
  development_ca_issued: DevelopmentCaIssuedTable;
  dev_outbox: DevOutboxTable;
  rate_windows: RateWindowsTable;
  scheduled_runs: ScheduledRunsTable;
}

/** The development CA (one row, id 1); private keys sealed under the master secret. */
export interface DevelopmentCaTable {
  id: number;
  ca_certificate_der: Buffer;
  ca_private_key: string;
  tsa_certificate_der: Buffer;
  tsa_private_key: string;
  created_at: string;
}

/** Every certificate the development CA issued, by serial (lower-case hex). */
export interface DevelopmentCaIssuedTable {
  serial_hex: string;
  certificate_der: Buffer;
  issued_at: string;
}

/** What the development mail and SMS transports sent; content sealed (platform/secrets). */
export interface DevOutboxTable {
  id: Generated<number>;
  channel: NotifyChannel;
  provider_message_id: string;
  recipient: string;
  sealed_content: string;
  created_at: string;
}

export type SigningKeyPurpose = 'seal' | 'signer';
export type SigningKeyAlgorithm = 'rsa-2048' | 'ec-p256';
export type SigningKeyStoreKind = 'software' | 'pkcs11';

/** Keys the service signs with (signing/keys). Binary columns are Buffers. */
export interface SigningKeysTable {
  id: Generated<number>;
  tenant_id: number | null;
  purpose: SigningKeyPurpose;
  owner_email: string | null;
  /** NFC, trimmed, lower-case: one signer key per (tenant, e-mail) whatever the spelling. */
  owner_email_key: string | null;
  owner_name: string | null;
  label: string;
  algorithm: SigningKeyAlgorithm;
  store: SigningKeyStoreKind;
  public_key_spki: Buffer;
  encrypted_private_key: string | null;
  /** CKA_ID, hex. */
  pkcs11_id: string | null;
  pkcs11_token_label: string | null;
  certificate_der: Buffer | null;
  /** PEM of the issuers imported with the certificate, nearest first. */
  certificate_chain: string | null;
  certificate_source: 'development_ca' | 'imported' | null;
  created_at: string;
  certificate_at: string | null;
}

/** Contract types of a tenant; `type_number` is the `contractTypeId` partners send. */
export interface ContractTypesTable {
  id: Generated<number>;
  tenant_id: number;
  type_number: number;
  name: string;
  created_at: string;
}

export type ContractStatus =
  | 'draft'
  | 'signing'
  | 'completed'
  | 'rejected'
  | 'expired'
  | 'cancelled';
export type ContractSourceKind = 'pdf' | 'docx';

export interface ContractsTable {
  id: Generated<number>;
  uuid: string;
  tenant_id: number;
  organization_id: number | null;
  contract_type_id: number;
  title: string;
  /** The title folded for search (lower case, no diacritics). */
  search_key: string;
  description: string | null;
  status: ContractStatus;
  /** The uploaded file's name, as sent. */
  source_name: string;
  source_kind: ContractSourceKind;
  created_by_user_id: number;
  expired_at: string;
  created_at: string;
  updated_at: string;
  sent_at: string | null;
  completed_at: string | null;
  rejected_at: string | null;
  cancelled_at: string | null;
  cancel_reason: string | null;
  /** When the contract left draft/signing for good (any final status). */
  ended_at: string | null;
  /** Hash of the newest audit event. */
  audit_head: string;
  /** JSON: the signatures the uploaded PDF carried, as verified at upload (`[]` for none). */
  existing_signatures: Generated<string>;
}

export type ContractSignerRole = 'signer' | 'viewer';
export type ContractSignerStatus = 'waiting' | 'invited' | 'signed' | 'rejected';
export type SigningMethod = 'usb_token' | 'cloud_hsm' | 'otp_sms' | 'image_signature';

export interface ContractSignersTable {
  id: Generated<number>;
  contract_id: number;
  /** Index in the creation input, from 0. */
  position: number;
  signing_order: number;
  role: ContractSignerRole;
  name: string;
  email: string;
  /** NFC, trimmed, lower case: unique per contract. */
  email_key: string;
  phone: string | null;
  status: ContractSignerStatus;
  invited_at: string | null;
  /** SHA-256 (hex) of the signing-page token; the token itself is only in the e-mail. */
  invitation_token_hash: string | null;
  invitation_expires_at: string | null;
  signed_at: string | null;
  method: SigningMethod | null;
  /** JSON `{page?, x, y, width, height}`: the visible signature's box; null for the default. */
  placement: string | null;
  /** CMND/CCCD/passport number as given: compared with the signing certificate's. */
  identity_number: string | null;
  /** Tax code (MST) as given: compared with the signing certificate's. */
  tax_code: string | null;
}

export type ContractFileVersionKind = 'original' | 'signature' | 'archive';

export interface ContractFileVersionsTable {
  id: Generated<number>;
  contract_id: number;
  /** 1 is the original; each signature adds one, and the archive revision a last one. */
  version: number;
  /**
   * `original` (version 1), `signature` (a signer's), `archive` (the DSS and document
   * timestamp the service adds when the last signer has signed: PAdES B-LTA).
   */
  kind: ContractFileVersionKind;
  sha256: string;
  size: number;
  mime_type: string;
  /** Whose signature made this version; null for the original and the archive. */
  signer_id: number | null;
  created_at: string;
}

export type AuditActorKind = 'user' | 'signer' | 'system';

/** What every hash-chained audit event records, whatever its subject (audit/). */
interface AuditEventColumns {
  id: Generated<number>;
  /** 1, 2, … per subject. */
  seq: number;
  action: string;
  at: string;
  actor_user_id: number | null;
  actor_name: string;
  client_address: string | null;
  user_agent: string | null;
  /** Canonical JSON object. */
  details: string;
  prev_hash: string;
  hash: string;
}

export interface ContractAuditEventsTable extends AuditEventColumns {
  contract_id: number;
  actor_kind: AuditActorKind;
  actor_signer_id: number | null;
}

/** The same events for dossiers; a dossier's signers are accounts: no signer column. */
export interface DossierAuditEventsTable extends AuditEventColumns {
  dossier_id: number;
  actor_kind: Exclude<AuditActorKind, 'signer'>;
}

export type SigningSessionState = 'open' | 'signed' | 'rejected' | 'superseded' | 'locked';

/** Signing sessions of contract signers (sessions/). Tokens and the OTP only as keyed hashes. */
export interface SigningSessionsTable {
  id: Generated<number>;
  /** The `sessionId` partners see. */
  public_id: string;
  tenant_id: number;
  /** A contract signer's session: the contract and the signer (null for a task's session). */
  contract_id: number | null;
  signer_id: number | null;
  /** A dossier task's session: the task, the signing user, the MAIN file signed. */
  task_id: number | null;
  user_id: number | null;
  file_id: number | null;
  method: SigningMethod;
  preparation_id: number;
  /** The contract file version the preparation was made from. */
  source_version: number;
  state: SigningSessionState;
  created_at: string;
  expires_at: string;
  ended_at: string | null;
  link_token_hash: string;
  link_expires_at: string;
  link_used_at: string | null;
  page_token_hash: string | null;
  otp_hash: string | null;
  otp_expires_at: string | null;
  otp_sent_at: string | null;
  otp_failures: Generated<number>;
  signature_id: string | null;
  signed_at: string | null;
  /** JSON of the signer certificate's summary once signed. */
  certificate_info: string | null;
}

export type OtpEventKind = 'sent' | 'failed';

/**
 * One code sent or one wrong code, per contract signer or per (task, user), across sessions:
 * the rolling limits of sessions/otpLimits.ts count them.
 */
export interface OtpEventsTable {
  id: Generated<number>;
  signer_id: number | null;
  task_id: number | null;
  user_id: number | null;
  kind: OtpEventKind;
  at: string;
}

/** One caller's requests in one one-minute window of a rate limit (migration 028). */
export interface RateWindowsTable {
  bucket: string;
  caller: string;
  /** The window's first instant, ISO-8601 UTC. */
  window_start: string;
  count: number;
}

/** A pass run once per period across instances: the last period claimed (migration 031). */
export interface ScheduledRunsTable {
  name: string;
  /** The claimed period's first instant, ISO-8601 UTC. */
  period_start: string;
  claimed_at: string;
  /** Periods claimed so far. */
  passes: number;
}
