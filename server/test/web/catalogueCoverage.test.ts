import { AGENT_ERROR_CODES } from '@esign/shared/agentProtocol';
import { locales, type Messages, messagesOf } from '@esign/shared/messages';
import { type AuditAction, auditActions } from '../../src/audit/subject';
import { recentContractActions } from '../../src/contracts/queries';
import { type DownloadType, downloadTypes } from '../../src/contracts/schemas';
import type { DossierStatus, HistoryAction, SigningMethod, SignType } from '../../src/db/schema';
import { signTypes } from '../../src/processes/definition';

/**
 * The shared catalogue (shared/src/messages) cannot import the server's types, so this file
 * holds it to them: each table keyed by a server enum names exactly its values. The types fail
 * to compile when a value is added on one side only; the tests repeat it where the server has
 * the values at run time.
 */

/** `true` when T's keys are exactly K. */
type SameKeys<T, K extends PropertyKey> = [keyof T] extends [K]
  ? [K] extends [keyof T]
    ? true
    : false
  : false;

export const typesCovered = {
  auditActions: true satisfies SameKeys<Messages['contracts']['detail']['actions'], AuditAction>,
  pdfAuditActions: true satisfies SameKeys<Messages['pdf']['auditActions'], AuditAction>,
  downloadTypes: true satisfies SameKeys<
    Messages['contracts']['detail']['downloadTypes'],
    DownloadType
  >,
  history: true satisfies SameKeys<Messages['dashboard']['activity']['history'], HistoryAction>,
  recentContract: true satisfies SameKeys<
    Messages['dashboard']['activity']['contract'],
    (typeof recentContractActions)[number]
  >,
  dossierStatus: true satisfies SameKeys<Messages['dossiers']['status'], DossierStatus>,
  signType: true satisfies SameKeys<Messages['tasks']['signType'], SignType>,
  contractReasons: true satisfies SameKeys<Messages['pdf']['reason']['contract'], SigningMethod>,
  dossierReasons: true satisfies SameKeys<Messages['pdf']['reason']['dossier'], SigningMethod>,
};

const sorted = (values: readonly string[]) => [...values].sort();

describe.each(locales)('the %s catalogue names every value of the server', (locale) => {
  const m = messagesOf(locale);

  test('audit actions, on the contract page and in the audit PDF', () => {
    expect(sorted(Object.keys(m.contracts.detail.actions))).toEqual(sorted(auditActions));
    expect(sorted(Object.keys(m.pdf.auditActions))).toEqual(sorted(auditActions));
  });

  test('download types, recent contract actions, sign types', () => {
    expect(sorted(Object.keys(m.contracts.detail.downloadTypes))).toEqual(sorted(downloadTypes));
    expect(sorted(Object.keys(m.dashboard.activity.contract))).toEqual(
      sorted(recentContractActions),
    );
    expect(sorted(Object.keys(m.tasks.signType))).toEqual(sorted(signTypes));
  });

  test("the agent's error codes, in the agent and on the signing page", () => {
    expect(sorted(Object.keys(m.agent.errors))).toEqual(sorted(AGENT_ERROR_CODES));
    expect(sorted(Object.keys(m.tokenSigning.agentRefusals))).toEqual(sorted(AGENT_ERROR_CODES));
  });
});
