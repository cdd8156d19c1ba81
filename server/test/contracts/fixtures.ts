import fs from 'node:fs';
import path from 'node:path';
import zlib from 'node:zlib';
import { PDFDocument, StandardFonts } from 'pdf-lib';
import { localStoreOf } from '../../src/storage/localFileStore';
import type { Permission } from '../../src/tenancy/permissionCatalog';
import { createRole } from '../../src/tenancy/service';
import {
  addUser,
  createHarness,
  type Harness,
  issueApiKey,
  type SeededTenant,
  seedTenant,
} from '../support/harness';

export const contractsPath = '/api/contracts';

/** A real one-page PDF (pdf-lib), unique by its text so its SHA-256 is its own. */
export async function contractPdf(label: string): Promise<Buffer> {
  const doc = await PDFDocument.create();
  const font = await doc.embedFont(StandardFonts.Helvetica);
  const page = doc.addPage([595, 842]);
  page.drawText(`Contract ${label}`, { x: 50, y: 780, size: 14, font });
  return Buffer.from(await doc.save({ useObjectStreams: false }));
}

/** A ZIP archive with stored (uncompressed) entries: enough for a .docx LibreOffice opens. */
function zip(entries: { name: string; data: Buffer }[]): Buffer {
  const locals: Buffer[] = [];
  const centrals: Buffer[] = [];
  let offset = 0;
  for (const entry of entries) {
    const name = Buffer.from(entry.name, 'utf8');
    const crc = zlib.crc32(entry.data);
    const local = Buffer.alloc(30);
    local.writeUInt32LE(0x04034b50, 0);
    local.writeUInt16LE(20, 4);
    local.writeUInt16LE(0x0800, 6);
    local.writeUInt32LE(crc, 14);
    local.writeUInt32LE(entry.data.length, 18);
    local.writeUInt32LE(entry.data.length, 22);
    local.writeUInt16LE(name.length, 26);
    const central = Buffer.alloc(46);
    central.writeUInt32LE(0x02014b50, 0);
    central.writeUInt16LE(20, 4);
    central.writeUInt16LE(20, 6);
    central.writeUInt16LE(0x0800, 8);
    central.writeUInt32LE(crc, 16);
    central.writeUInt32LE(entry.data.length, 20);
    central.writeUInt32LE(entry.data.length, 24);
    central.writeUInt16LE(name.length, 28);
    central.writeUInt32LE(offset, 42);
    locals.push(local, name, entry.data);
    centrals.push(central, name);
    offset += local.length + name.length + entry.data.length;
  }
  const directory = Buffer.concat(centrals);
  const end = Buffer.alloc(22);
  end.writeUInt32LE(0x06054b50, 0);
  end.writeUInt16LE(entries.length, 8);
  end.writeUInt16LE(entries.length, 10);
  end.writeUInt32LE(directory.length, 12);
  end.writeUInt32LE(offset, 16);
  return Buffer.concat([...locals, directory, end]);
}

/** A minimal Word document with one paragraph of `text`. */
export function wordDocument(text: string): Buffer {
  const xml = (body: string) =>
    Buffer.from(`<?xml version="1.0" encoding="UTF-8" standalone="yes"?>\n${body}`);
  return zip([
    {
      name: '[Content_Types].xml',
      data: xml(
        '<Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types"><Default Extension="rels" ContentType="application/vnd.openxmlformats-package.relationships+xml"/><Default Extension="xml" ContentType="application/xml"/><Override PartName="/word/document.xml" ContentType="application/vnd.openxmlformats-officedocument.wordprocessingml.document.main+xml"/></Types>',
      ),
    },
    {
      name: '_rels/.rels',
      data: xml(
        '<Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships"><Relationship Id="rId1" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/officeDocument" Target="word/document.xml"/></Relationships>',
      ),
    },
    {
      name: 'word/document.xml',
      data: xml(
        `<w:document xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main"><w:body><w:p><w:r><w:t>${text}</w:t></w:r></w:p></w:body></w:document>`,
      ),
    },
  ]);
}

export interface SignerSpec {
  name: string;
  email: string;
  phone?: string;
  role?: 'signer' | 'viewer';
  order: number;
}

export const defaultSigners: SignerSpec[] = [
  { name: 'Nguyễn Văn Ánh', email: 'anh@partner.example', phone: '0912345678', order: 1 },
  { name: 'Trần Thị Bình', email: 'binh@partner.example', order: 2 },
];

export interface UploadSpec {
  file?: { name: string; bytes: Buffer; type?: string } | null;
  title?: string;
  contractTypeId?: string;
  expiredAt?: string;
  signers?: SignerSpec[] | string;
  description?: string;
  /** Extra or replacing raw fields. */
  fields?: Record<string, string>;
}

export interface ContractWorld {
  h: Harness;
  acme: SeededTenant;
  beta: SeededTenant;
  /** Keys of ACME users holding only the named permissions. */
  keyWith(permissions: Permission[]): Promise<string>;
  upload(key: string, spec?: UploadSpec): Promise<Response>;
  /** Creates a contract as ACME's administrator (or `key`); returns its id. */
  create(spec?: UploadSpec, key?: string): Promise<string>;
  request(method: string, url: string, key: string, json?: unknown): Promise<Response>;
  close(): Promise<void>;
}

/** The deadline of test contracts: a week after the harness clock's start. */
export const deadline = '2026-12-02T08:00:00.000Z';

export function formOf(spec: UploadSpec): FormData {
  const form = new FormData();
  const file = spec.file === undefined ? null : spec.file;
  if (file) {
    form.append(
      'file',
      new Blob([new Uint8Array(file.bytes)], { type: file.type ?? 'application/pdf' }),
      file.name,
    );
  }
  const signers = spec.signers ?? defaultSigners;
  const fields: Record<string, string | undefined> = {
    title: spec.title ?? 'Hợp đồng mua bán',
    contractTypeId: spec.contractTypeId ?? '1',
    expiredAt: spec.expiredAt ?? deadline,
    signers: typeof signers === 'string' ? signers : JSON.stringify(signers),
    description: spec.description,
    ...spec.fields,
  };
  for (const [name, value] of Object.entries(fields)) {
    if (value !== undefined) form.append(name, value);
  }
  return form;
}

let users = 0;

export async function openContractWorld(env: Record<string, string> = {}): Promise<ContractWorld> {
  const h = createHarness(env);
  const acme = await seedTenant(h, 'ACME');
  const beta = await seedTenant(h, 'BETA');
  const acmeTenant = await h.deps.db
    .selectFrom('tenants')
    .selectAll()
    .where('id', '=', acme.tenantId)
    .executeTakeFirstOrThrow();
  const world: ContractWorld = {
    h,
    acme,
    beta,
    keyWith: async (permissions) => {
      users += 1;
      const role = await createRole(h.deps.db, acmeTenant, h.now(), {
        organizationCode: 'ACME',
        name: `Vai trò ${users}`,
        code: `ROLE_${users}`,
        permissions,
      });
      const user = await addUser(
        h,
        {
          tenantId: acme.tenantId,
          organizationId: acme.rootOrganizationId,
          code: `U${users}`,
          username: `user${users}`,
          email: `user${users}@acme.example`,
          name: `Người dùng ${users}`,
          status: 2,
          type: 'internal',
        },
        [{ organizationId: acme.rootOrganizationId, roleId: role.id }],
      );
      const { key } = await issueApiKey(h, {
        kind: 'organization',
        tenantId: acme.tenantId,
        organizationId: acme.rootOrganizationId,
        userId: user.id,
        expiresAt: null,
      });
      return key;
    },
    upload: async (key, spec = {}) => {
      const withFile: UploadSpec = {
        ...spec,
        file:
          spec.file === undefined
            ? { name: 'hop-dong.pdf', bytes: await contractPdf(String(Math.random())) }
            : spec.file,
      };
      return h.app.request(contractsPath, {
        method: 'POST',
        headers: { 'x-api-key': key },
        body: formOf(withFile),
      });
    },
    create: async (spec = {}, key = acme.orgKey) => {
      const response = await world.upload(key, spec);
      const body = (await response.json()) as { data?: { id: string } };
      if (response.status !== 201)
        throw new Error(`create: ${response.status} ${JSON.stringify(body)}`);
      return body.data!.id;
    },
    request: (method, url, key, json) =>
      h.request(method, url, {
        headers: { 'x-api-key': key },
        ...(json !== undefined ? { json } : {}),
      }),
    close: () => h.close(),
  };
  return world;
}

/** Files in the FileStore (not its temp directory). */
export function storedFiles(h: Harness): string[] {
  const root = localStoreOf(h.deps.files).root;
  const found: string[] = [];
  const walk = (dir: string) => {
    for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
      const full = path.join(dir, entry.name);
      if (entry.isDirectory()) {
        if (full !== h.deps.files.tempDir) walk(full);
      } else found.push(entry.name);
    }
  };
  if (fs.existsSync(root)) walk(root);
  return found;
}

export function tempFiles(h: Harness): string[] {
  const dir = h.deps.files.tempDir;
  return fs.existsSync(dir) ? fs.readdirSync(dir) : [];
}

export async function contractRows(h: Harness) {
  const count = async (
    table: 'contracts' | 'contract_signers' | 'contract_file_versions' | 'contract_audit_events',
  ) =>
    Number(
      (
        await h.deps.db
          .selectFrom(table)
          .select(({ fn }) => fn.countAll().as('n'))
          .executeTakeFirstOrThrow()
      ).n,
    );
  return {
    contracts: await count('contracts'),
    signers: await count('contract_signers'),
    versions: await count('contract_file_versions'),
    events: await count('contract_audit_events'),
  };
}
