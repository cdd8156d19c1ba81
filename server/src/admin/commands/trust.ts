import fs from 'node:fs';
import { z } from 'zod';
import { isoNow } from '../../platform/clock';
import { tenantByCode } from '../../tenancy/resolveTenant';
import {
  addTrustAnchor,
  listTrustAnchors,
  readAnchorCertificate,
  removeTrustAnchor,
} from '../../trust/service';
import {
  type Command,
  command,
  forbiddenWith,
  listCommand,
  option,
  requiredWhen,
} from '../command';
import { existingFile } from './process';

/** Trust anchors: CA certificates that signer and TSA certificates must chain to. */
export const trustCommands: Command[] = [
  command({
    name: 'trust add',
    options: z
      .object({
        tenant: option.text.optional(),
        global: option.flag,
        file: existingFile,
        name: option.text.optional(),
      })
      .superRefine(forbiddenWith('global', ['tenant'], '--global (a global anchor has no tenant)'))
      .superRefine(requiredWhen('global', false, ['tenant'])),
    prepare: (options, { check }) => {
      // A file that is not one CA certificate is a bad argument: refused before the database.
      const content = fs.readFileSync(options.file);
      check(() => readAnchorCertificate(content));
      return async (deps) => {
        const tenant =
          options.tenant === undefined ? null : await tenantByCode(deps.db, options.tenant);
        const { anchor, created } = await addTrustAnchor(deps.db, isoNow(deps.clock), {
          tenantId: tenant?.id ?? null,
          ...(options.name !== undefined ? { name: options.name } : {}),
          certificateFile: content,
        });
        const scope = tenant ? `tenant ${tenant.code}` : 'every tenant (global)';
        return {
          json: {
            id: anchor.id,
            tenantCode: tenant?.code ?? null,
            name: anchor.name,
            subject: anchor.subject,
            fingerprint: anchor.fingerprint,
            created,
          },
          lines: [
            created
              ? `Added trust anchor ${anchor.id} "${anchor.name}" for ${scope} (SHA-256 ${anchor.fingerprint}).`
              : `That certificate is already trust anchor ${anchor.id} "${anchor.name}" for ${scope}; nothing changed.`,
          ],
        };
      };
    },
  }),
  listCommand({
    name: 'trust list',
    key: 'anchors',
    header: ['ID', 'TENANT', 'NAME', 'SUBJECT', 'SHA-256', 'ADDED'],
    list: async (db, tenantId) =>
      (await listTrustAnchors(db, tenantId)).map(({ certificate: _der, ...anchor }) => anchor),
    row: (a) => [a.id, a.tenantCode ?? '(global)', a.name, a.subject, a.fingerprint, a.createdAt],
  }),
  command({
    name: 'trust remove',
    options: z.object({ id: option.positiveInteger }),
    prepare: ({ id }) => {
      return async (deps) => {
        const anchor = await removeTrustAnchor(deps.db, id);
        return {
          json: {
            id: anchor.id,
            name: anchor.name,
            fingerprint: anchor.fingerprint,
            removed: true,
          },
          lines: [`Removed trust anchor ${anchor.id} "${anchor.name}".`],
        };
      };
    },
  }),
];
