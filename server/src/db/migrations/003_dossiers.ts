import { postgresOf } from './sqlParts';

/**
 * Signing dossiers and their workflow: process definitions (ordered steps), templates, dossiers,
 * files with versions (every signature adds a version), turns (one per signer in a step),
 * tasks (one per step instance, holding its turns), history and delegations.
 *
 * Task-list queries start from the caller (turns by assignee or role, history by actor), so
 * those columns lead their indexes; the deadline scheduler reads a partial index of waiting
 * tasks with a deadline.
 */
export const dossiers = `
CREATE TABLE processes (
  id INTEGER PRIMARY KEY,
  tenant_id INTEGER NOT NULL REFERENCES tenants(id),
  organization_id INTEGER NOT NULL REFERENCES organizations(id),
  code TEXT NOT NULL,
  name TEXT NOT NULL,
  document_classes TEXT NOT NULL,
  created_at TEXT NOT NULL,
  updated_at TEXT NOT NULL,
  UNIQUE (organization_id, code)
);

CREATE TABLE process_steps (
  id INTEGER PRIMARY KEY,
  process_id INTEGER NOT NULL REFERENCES processes(id),
  position INTEGER NOT NULL,
  step_code TEXT NOT NULL,
  name TEXT NOT NULL,
  kind TEXT NOT NULL CHECK (kind IN ('guest', 'phone_guest', 'internal', 'role')),
  sign_type TEXT NOT NULL CHECK (sign_type IN ('digital_signature', 'image_signature', 'app_submit', 'notification')),
  deadline_seconds INTEGER,
  approve_label TEXT NOT NULL,
  reject_label TEXT NOT NULL,
  role_id INTEGER REFERENCES roles(id),
  default_user_id INTEGER REFERENCES users(id),
  UNIQUE (process_id, step_code),
  UNIQUE (process_id, position)
);

CREATE TABLE templates (
  id INTEGER PRIMARY KEY,
  tenant_id INTEGER NOT NULL REFERENCES tenants(id),
  organization_id INTEGER NOT NULL REFERENCES organizations(id),
  code TEXT NOT NULL,
  name TEXT NOT NULL,
  sha256 TEXT NOT NULL,
  size INTEGER NOT NULL,
  fields TEXT NOT NULL,
  created_at TEXT NOT NULL,
  updated_at TEXT NOT NULL,
  UNIQUE (organization_id, code)
);

CREATE TABLE dossiers (
  id INTEGER PRIMARY KEY,
  uuid TEXT NOT NULL UNIQUE,
  tenant_id INTEGER NOT NULL REFERENCES tenants(id),
  organization_id INTEGER NOT NULL REFERENCES organizations(id),
  document_id TEXT,
  title TEXT NOT NULL,
  process_id INTEGER NOT NULL REFERENCES processes(id),
  ecm_class_code TEXT,
  status TEXT NOT NULL CHECK (status IN ('PENDING', 'PENDING_SIGN', 'IN_PROGRESS', 'COMPLETED', 'REJECTED', 'EXPIRED')),
  transaction_id TEXT,
  metadata TEXT NOT NULL,
  created_by_user_id INTEGER REFERENCES users(id),
  required_count INTEGER NOT NULL,
  signed_count INTEGER NOT NULL DEFAULT 0,
  created_at TEXT NOT NULL,
  updated_at TEXT NOT NULL,
  started_at TEXT,
  completed_at TEXT,
  rejected_at TEXT,
  expired_at TEXT
);
-- The idempotency key: two concurrent creations with one documentId cannot both commit.
CREATE UNIQUE INDEX dossiers_document_id ON dossiers(organization_id, document_id) WHERE document_id IS NOT NULL;
CREATE INDEX dossiers_tenant_created ON dossiers(tenant_id, created_at);

CREATE TABLE dossier_files (
  id INTEGER PRIMARY KEY,
  uuid TEXT NOT NULL UNIQUE,
  dossier_id INTEGER NOT NULL REFERENCES dossiers(id),
  organization_id INTEGER NOT NULL REFERENCES organizations(id),
  kind TEXT NOT NULL CHECK (kind IN ('MAIN', 'ATTACHMENT')),
  position INTEGER NOT NULL,
  title TEXT NOT NULL,
  ecm_class_code TEXT,
  mime_type TEXT NOT NULL,
  created_at TEXT NOT NULL
);
CREATE INDEX dossier_files_dossier ON dossier_files(dossier_id, kind, position);

CREATE TABLE file_versions (
  id INTEGER PRIMARY KEY,
  file_id INTEGER NOT NULL REFERENCES dossier_files(id),
  version INTEGER NOT NULL,
  sha256 TEXT NOT NULL,
  size INTEGER NOT NULL,
  created_at TEXT NOT NULL,
  UNIQUE (file_id, version)
);

CREATE TABLE tasks (
  id INTEGER PRIMARY KEY,
  code TEXT NOT NULL UNIQUE,
  tenant_id INTEGER NOT NULL REFERENCES tenants(id),
  organization_id INTEGER NOT NULL REFERENCES organizations(id),
  dossier_id INTEGER NOT NULL REFERENCES dossiers(id),
  step_id INTEGER NOT NULL REFERENCES process_steps(id),
  status INTEGER NOT NULL CHECK (status IN (1, 2, 3, 4)),
  assigned_at TEXT NOT NULL,
  expire_at TEXT,
  action_at TEXT,
  comment TEXT
);
CREATE INDEX tasks_dossier ON tasks(dossier_id);
CREATE INDEX tasks_waiting_deadline ON tasks(expire_at) WHERE status = 1 AND expire_at IS NOT NULL;

CREATE TABLE turns (
  id INTEGER PRIMARY KEY,
  dossier_id INTEGER NOT NULL REFERENCES dossiers(id),
  step_id INTEGER NOT NULL REFERENCES process_steps(id),
  step_position INTEGER NOT NULL,
  turn_order INTEGER NOT NULL,
  task_id INTEGER REFERENCES tasks(id),
  status TEXT NOT NULL CHECK (status IN ('WAITING', 'ACTIVE', 'SIGNED', 'REJECTED', 'EXPIRED', 'CANCELLED')),
  signer_full_name TEXT,
  signer_email TEXT,
  signer_phone TEXT,
  signer_identity_number TEXT,
  signer_tax_code TEXT,
  assignee_user_id INTEGER REFERENCES users(id),
  role_id INTEGER REFERENCES roles(id),
  acted_by_user_id INTEGER REFERENCES users(id),
  acted_at TEXT,
  comment TEXT,
  UNIQUE (dossier_id, step_position, turn_order)
);
CREATE INDEX turns_assignee ON turns(assignee_user_id, task_id);
CREATE INDEX turns_role ON turns(role_id, task_id) WHERE assignee_user_id IS NULL;
CREATE INDEX turns_task ON turns(task_id, turn_order);

CREATE TABLE history (
  id INTEGER PRIMARY KEY,
  tenant_id INTEGER NOT NULL REFERENCES tenants(id),
  dossier_id INTEGER NOT NULL REFERENCES dossiers(id),
  task_id INTEGER NOT NULL REFERENCES tasks(id),
  turn_id INTEGER NOT NULL REFERENCES turns(id),
  action TEXT NOT NULL CHECK (action IN ('NEXT', 'REJECT', 'OVERDUE')),
  action_label TEXT NOT NULL,
  action_at TEXT NOT NULL,
  comment TEXT,
  actor_user_id INTEGER REFERENCES users(id),
  actor_name TEXT,
  actor_username TEXT,
  actor_email TEXT,
  actor_phone TEXT
);
CREATE INDEX history_dossier ON history(dossier_id, action_at);
CREATE INDEX history_actor ON history(actor_user_id, action_at);
CREATE INDEX history_task ON history(task_id, action_at);

CREATE TABLE delegations (
  id INTEGER PRIMARY KEY,
  tenant_id INTEGER NOT NULL REFERENCES tenants(id),
  from_user_id INTEGER NOT NULL REFERENCES users(id),
  to_user_id INTEGER NOT NULL REFERENCES users(id),
  starts_at TEXT NOT NULL,
  ends_at TEXT NOT NULL,
  created_at TEXT NOT NULL,
  revoked_at TEXT,
  CHECK (from_user_id != to_user_id),
  CHECK (starts_at < ends_at)
);
CREATE INDEX delegations_to ON delegations(to_user_id, ends_at);
`;

/** The same schema on PostgreSQL, translated by the common conventions. */
export const dossiersPostgres = postgresOf(dossiers);
