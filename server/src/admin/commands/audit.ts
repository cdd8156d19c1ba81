import { z } from 'zod';
import { verifyAuditChain } from '../../audit/chain';
import { subjectByUuid } from '../../audit/queries';
import type { AuditSubject } from '../../audit/subject';
import { DomainError } from '../../errors/domainError';
import { type Command, command, option } from '../command';

const brokenLinks = {
  content_changed: 'was changed after it was written (its hash no longer matches)',
  link_broken: 'does not follow the event before it (an event was removed or replaced)',
  sequence_gap: 'is out of sequence (an event before it is missing)',
  tail_missing: 'is missing: the newest events were removed',
} as const;

/** Per kind: the name in messages, the JSON key of the id, the not-found code. */
const subjects = {
  contract: { noun: 'contract', idKey: 'contractId', notFound: 'CONTRACT_NOT_FOUND' },
  dossier: { noun: 'dossier', idKey: 'dossierId', notFound: 'DOCUMENT_NOT_FOUND' },
} as const;

/** `admin audit verify --contract ID | --dossier ID`: recomputes one trail's hash chain. */
export const auditCommands: Command[] = [
  command({
    name: 'audit verify',
    options: z.object({ contract: option.text.optional(), dossier: option.text.optional() }),
    prepare: ({ contract, dossier }, { fail }) => {
      if ((contract === undefined) === (dossier === undefined)) {
        fail('give exactly one of --contract ID or --dossier ID');
      }
      const kind: AuditSubject['kind'] = contract !== undefined ? 'contract' : 'dossier';
      const uuid = (contract ?? dossier)!;
      const { noun, idKey, notFound } = subjects[kind];
      return async (deps) => {
        const subject = await subjectByUuid(deps.db, kind, uuid);
        if (!subject) throw new DomainError(notFound, `No ${noun} ${uuid}`);
        const result = await verifyAuditChain(deps.db, subject);
        if (!result.valid) {
          throw new DomainError(
            'AUDIT_CHAIN_BROKEN',
            `The audit trail of ${noun} ${uuid} is broken at event ${result.brokenAt}: it ${brokenLinks[result.reason]}`,
          );
        }
        return {
          json: { [idKey]: uuid, valid: true, events: result.events, head: result.head },
          lines: [
            `The audit trail of ${noun} ${uuid} holds: ${result.events} events, head ${result.head}.`,
          ],
        };
      };
    },
  }),
];
