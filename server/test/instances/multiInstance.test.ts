import 'reflect-metadata';
import fs from 'node:fs';
import path from 'node:path';
import { onSqlite } from '../../../test/support/onSqlite';
import { derToPem } from '../../../test/support/tools';
import {
  type ReceivedWebhook,
  signatureMatches,
  startWebhookReceiver,
  type WebhookReceiver,
} from '../../../test/support/webhookReceiver';
import { verifyAuditChain } from '../../src/audit/chain';
import { contractTrail } from '../../src/audit/subject';
import { inTransaction } from '../../src/db/database';
import { developmentCa } from '../../src/dev/developmentCa';
import { devOutboxMessages } from '../../src/notify/devOutbox';
import { createTenant } from '../../src/tenancy/service';
import { enqueueEvent, webhookJobKind } from '../../src/webhooks/events';
import { documentCompletedData } from '../../src/webhooks/payloads';
import { createWebhookSubscription } from '../../src/webhooks/subscriptions';
import { runCli } from '../admin/runCli';
import { contractPdf } from '../contracts/fixtures';
import { parseMail } from '../notify/support';
import { nssDatabase, pdfsigSignatures, pdfsigTrusting } from '../signing/pdf/corpus';
import { completedFacts, until } from '../webhooks/fixtures';
import { type Answer, type Cluster, noteSecret, RoundRobin, send, startCluster } from './cluster';

/**
 * Issue 19's multi-instance test: three built servers (`node server/dist/main.js`, as `npm
 * start` runs them) on one PostgreSQL database and one S3 bucket (s3rver), one SECRET_KEY, each
 * with its own DATA_DIR, behind a round-robin client: request i goes to instance i mod 3. No
 * proxy sits in between (the client is the balancer), so every step of a walk lands on another
 * process. It starts its own PostgreSQL database (on the run's cluster, or a cluster of its own),
 * so it runs once per `npm test`: in the sqlite jest project, skipped in the postgres one.
 *
 * Bounds (a loaded 2-core machine): the whole file in about 3 minutes; no assertion on how long
 * anything takes, only on outcomes.
 */

jest.setTimeout(240_000);

const instances = 3;
const webhookEvents = 1000;
/** The receiver's request at which one instance is SIGKILLed. */
const killAt = 250;
/** Parallel sends per instance (the default, said explicitly: it bounds the duplicates). */
const webhookConcurrency = 16;
/** Contracts left to run out their deadline while the other scenarios run. */
const overdue = 4;
const signerEmail = 'anh@partner.example';
const signerPhone = '0912345678';

let cluster: Cluster;
let client: RoundRobin;
let receiver: WebhookReceiver;
let key: string;
/** Contracts (API ids) whose deadline passes during the run, with their titles. */
const expiring: { id: string; title: string; sent: boolean }[] = [];
let expiringAt = 0;

type Data<T> = { data: T };

/** The answer's data, or the test fails with the whole answer. */
function dataOf<T>(answer: Answer<unknown>, status = 200): T {
  if (answer.status !== status) {
    throw new Error(`HTTP ${answer.status} from :${answer.port}: ${JSON.stringify(answer.body)}`);
  }
  return (answer.body as Data<T>).data;
}

async function uploadContract(
  title: string,
  signers: { name: string; email: string; phone?: string; order: number }[],
  expiredAt: Date,
): Promise<Answer<unknown>> {
  const form = new FormData();
  // The PDF's text in its standard font's alphabet; the title may be Vietnamese.
  const label = title.normalize('NFD').replace(/[^\x20-\x7e]/g, '');
  form.set('file', new Blob([await contractPdf(label)], { type: 'application/pdf' }), 'c.pdf');
  form.set('title', title);
  form.set('contractTypeId', '1');
  form.set('expiredAt', expiredAt.toISOString());
  form.set('signers', JSON.stringify(signers.map((s) => ({ ...s, role: 'signer' }))));
  return client.request('POST', '/api/contracts', { key, form });
}

/** The newest OTP SMS to `phone`, from the shared development outbox (whichever instance sent it). */
async function otpFor(phone: string, after: number): Promise<string> {
  let code: string | undefined;
  await until(
    async () => {
      const messages = await devOutboxMessages(cluster.runtime.deps, 'sms');
      const newer = messages.filter(
        (m) => m.recipient.endsWith(phone.slice(1)) && Date.parse(m.createdAt) >= after,
      );
      code = newer[0]?.content.match(/(?<![0-9])[0-9]{6}(?![0-9])/)?.[0];
      return code !== undefined;
    },
    () => `an OTP SMS to ${phone}`,
  );
  noteSecret(code!, 'multi-instance OTP');
  return code!;
}

async function contractRow(id: string) {
  return cluster.runtime.deps.db
    .selectFrom('contracts')
    .selectAll()
    .where('uuid', '=', id)
    .executeTakeFirstOrThrow();
}

async function versionsOf(id: string) {
  const { id: contractId } = await contractRow(id);
  return cluster.runtime.deps.db
    .selectFrom('contract_file_versions')
    .selectAll()
    .where('contract_id', '=', contractId)
    .orderBy('version')
    .execute();
}

/** A sent contract and an OTP session of its first signer whose code was sent. */
async function otpSession(id: string): Promise<{ sessionId: string; otp: string }> {
  const { sessionId } = dataOf<{ sessionId: string }>(
    await client.request('POST', '/api/signing/initiate', {
      key,
      json: { contractId: id, signerEmail, signingMethod: 'otp_sms' },
    }),
  );
  const asked = Date.now() - 1000;
  dataOf(await client.request('POST', `/api/signing/${sessionId}/send-otp`, { key }));
  return { sessionId, otp: await otpFor(signerPhone, asked) };
}

onSqlite.describe(`${instances} instances on one PostgreSQL database and one S3 bucket`, () => {
  beforeAll(async () => {
    receiver = await startWebhookReceiver();
    cluster = await startCluster(instances, {
      OUTBOUND_ALLOWLIST: '127.0.0.1',
      // Short leases: the deliveries the killed instance held come due again soon (the
      // receiver answers at once, well within them).
      WEBHOOK_LEASE_SECONDS: '5',
      WEBHOOK_POLL_MS: '100',
      WEBHOOK_CONCURRENCY: String(webhookConcurrency),
      // The failed-credential budget per client address (scenario 5); the balancer names the
      // client in X-Forwarded-For.
      RATE_LIMIT_AUTH: '5',
      TRUST_PROXY: '1',
      RATE_LIMIT_UPLOAD: '100',
      RATE_LIMIT_API: '1000',
    });
    client = new RoundRobin(cluster.servers);
    // The README's step 1, through the CLI on the same database: the demo tenant's key.
    const cli = await runCli(
      cluster.dataDirs[0]!,
      ['apikey', 'create', '--tenant', 'DEMO', '--org', 'DEMO', '--user', 'demo.admin', '--json'],
      { env: cluster.env },
    );
    expect(cli.code).toBe(0);
    key = cli.json<{ key: string }>().key;
    noteSecret(key, 'multi-instance API key');

    // Scenario 4's contracts, made first so that their deadline passes while the others run:
    // half still drafts, half sent for signing.
    expiringAt = Date.now() + 20_000;
    for (let i = 0; i < overdue; i++) {
      const title = `Deadline contract ${i}`;
      const { id } = dataOf<{ id: string }>(
        await uploadContract(
          title,
          [{ name: 'Nguyễn Văn Ánh', email: signerEmail, phone: signerPhone, order: 1 }],
          new Date(expiringAt),
        ),
        201,
      );
      const sent = i % 2 === 1;
      if (sent) dataOf(await client.request('POST', `/api/contracts/${id}/send`, { key }));
      expiring.push({ id, title, sent });
    }
  }, 200_000);

  afterAll(async () => {
    await cluster?.stop();
    await receiver?.close();
  });

  it('a contract walk whose every step lands on the next instance: the signed PDF from a third verifies with pdfsig (valid, trusted), the audit trail is complete and its chain holds', async () => {
    const served: number[] = [];
    const step = <T>(answer: Answer<T>, status = 200): Answer<T> => {
      served.push(answer.port);
      dataOf(answer, status);
      return answer;
    };
    const created = step(
      await uploadContract(
        'Hợp đồng mua bán số 02/2026',
        [{ name: 'Nguyễn Văn Ánh', email: signerEmail, phone: signerPhone, order: 1 }],
        new Date(Date.now() + 7 * 864e5),
      ),
      201,
    );
    const { id } = dataOf<{ id: string; status: string }>(created, 201);
    step(await client.request('POST', `/api/contracts/${id}/send`, { key }));
    const initiated = step(
      await client.request('POST', '/api/signing/initiate', {
        key,
        json: { contractId: id, signerEmail, signingMethod: 'otp_sms' },
      }),
    );
    const { sessionId } = dataOf<{ sessionId: string }>(initiated);
    const asked = Date.now() - 1000;
    step(await client.request('POST', `/api/signing/${sessionId}/send-otp`, { key }));
    const otp = await otpFor(signerPhone, asked);
    const confirmed = step(
      await client.request('POST', `/api/signing/${sessionId}/confirm`, { key, json: { otp } }),
    );
    expect(dataOf<{ contractStatus: string }>(confirmed).contractStatus).toBe('completed');
    const download = step(
      await client.request<Buffer>('GET', `/api/contracts/${id}/download?type=signed`, { key }),
    );
    expect(download.body.subarray(0, 5).toString()).toBe('%PDF-');
    const detail = step(await client.request('GET', `/api/contracts/${id}`, { key }));
    // Every step went to the next instance: all three served the walk, never twice in a row.
    expect(new Set(served).size).toBe(instances);
    for (let i = 1; i < served.length; i++) expect(served[i]).not.toBe(served[i - 1]);

    // pdfsig trusts the development CA (one CA in the database, whichever instance signed) and
    // asks its OCSP responder (an instance) itself.
    const work = fs.mkdtempSync(path.join(cluster.dataDirs[0]!, 'walk-'));
    const file = path.join(work, 'signed.pdf');
    fs.writeFileSync(file, download.body);
    const ca = await developmentCa(cluster.runtime.deps);
    fs.writeFileSync(path.join(work, 'ca.pem'), derToPem(ca.certificate));
    const nss = nssDatabase(path.join(work, 'nss'), [path.join(work, 'ca.pem')]);
    const report = await pdfsigTrusting(file, nss);
    const signatures = pdfsigSignatures(report);
    expect(signatures[0]).toMatchObject({ valid: true, trusted: true });
    // The archive's document timestamp follows the signature (B-LTA on completion).
    expect(report).toMatch(/Signature #2:\n\s+- Signature Field Name: DocumentTimestamp1/);

    const trail = dataOf<{ auditTrail: { action: string }[]; status: string }>(detail).auditTrail;
    const actions = trail.map((event) => event.action);
    for (const action of [
      'created',
      'sent',
      'session_initiated',
      'otp_sent',
      'signed',
      'completed',
    ]) {
      expect(actions.filter((a) => a === action)).toHaveLength(1);
    }
    expect(actions.indexOf('created')).toBeLessThan(actions.indexOf('sent'));
    expect(actions.indexOf('signed')).toBeLessThan(actions.indexOf('completed'));
    expect(actions).toContain('downloaded');
    const row = await contractRow(id);
    const chain = await verifyAuditChain(cluster.runtime.deps.db, contractTrail(row.id));
    expect(chain).toMatchObject({ valid: true });
    // The stored files are in the bucket: the signed version's bytes are what was downloaded.
    const versions = await versionsOf(id);
    expect(versions.length).toBeGreaterThanOrEqual(2);
  });

  it('20 confirmations of the right code at once, spread over the instances: exactly one signs, the others get a clear error; one signed version is stored', async () => {
    const { id } = dataOf<{ id: string }>(
      await uploadContract(
        'Race of confirmations',
        [
          { name: 'Nguyễn Văn Ánh', email: signerEmail, phone: signerPhone, order: 1 },
          { name: 'Trần Thị Bình', email: 'binh@partner.example', order: 2 },
        ],
        new Date(Date.now() + 7 * 864e5),
      ),
      201,
    );
    dataOf(await client.request('POST', `/api/contracts/${id}/send`, { key }));
    const { sessionId, otp } = await otpSession(id);
    const answers = await Promise.all(
      Array.from({ length: 20 }, () =>
        client.request<{ code?: string; message?: string }>(
          'POST',
          `/api/signing/${sessionId}/confirm`,
          { key, json: { otp } },
        ),
      ),
    );
    expect(new Set(answers.map((a) => a.port)).size).toBe(instances);
    const won = answers.filter((a) => a.status === 200);
    const lost = answers.filter((a) => a.status !== 200);
    const codes = [...new Set(lost.map((a) => `${a.status} ${a.body.code}`))];
    process.stdout.write(
      `multi-instance: ${won.length} of 20 confirmations signed; the others answered ${codes.join(', ')}\n`,
    );
    const failed = answers.filter((a) => a.status >= 500 && a.body.code !== 'DATABASE_BUSY');
    for (const server of cluster.servers.filter((s) => failed.some((a) => a.port === s.port))) {
      const errors = server
        .stdout()
        .split('\n')
        .filter((line) => /"level":50/.test(line));
      process.stdout.write(`instance :${server.port} errors:\n${errors.join('\n')}\n`);
    }
    // Never two signatures. A confirmation that lost moved nothing: the session's own one
    // (409 PREPARATION_NOT_OPEN: another is under way; SESSION_ALREADY_USED: it signed), or,
    // when its transaction kept colliding, 503 DATABASE_BUSY with Retry-After; never a 500.
    expect(won.length).toBeLessThanOrEqual(1);
    for (const answer of lost) {
      expect([409, 503]).toContain(answer.status);
      expect(answer.body.code).toMatch(
        /^(SESSION_ALREADY_USED|PREPARATION_NOT_OPEN|DATABASE_BUSY)$/,
      );
      expect(answer.body.message).toEqual(expect.any(String));
    }
    if (won.length === 0) {
      // Every one of them lost to another (possible on a loaded machine): the signer's retry,
      // as the signing page makes it, signs once.
      const retried = await client.request('POST', `/api/signing/${sessionId}/confirm`, {
        key,
        json: { otp },
      });
      expect(retried.status).toBe(200);
    }
    // One signature: the original and one signed version, one `signed` event.
    expect((await versionsOf(id)).map((v) => v.version)).toEqual([1, 2]);
    const detail = dataOf<{ auditTrail: { action: string }[]; signers: { status: string }[] }>(
      await client.request('GET', `/api/contracts/${id}`, { key }),
    );
    expect(detail.auditTrail.filter((e) => e.action === 'signed')).toHaveLength(1);
    expect(detail.signers.map((s) => s.status)).toEqual(['signed', 'invited']);
  });

  it(`${webhookEvents} webhook events with one instance SIGKILLed mid-run: none lost, every retry keeps its X-Webhook-Id and bytes; duplicates counted`, async () => {
    // The events are written straight into the shared database (a cheaper source than 1,000
    // contracts; the same enqueueEvent the API's transactions call). Every instance's runner
    // delivers them.
    const { deps } = cluster.runtime;
    const now = deps.clock.now().toISOString();
    const { tenant, root } = await createTenant(deps.db, now, { code: 'HOOKS', name: 'Hooks' });
    const { secret } = await createWebhookSubscription(deps, tenant, {
      organizationCode: 'HOOKS',
      url: receiver.url('/multi'),
    });
    noteSecret(secret, 'multi-instance webhook secret');
    const victim = cluster.servers[1]!;
    let killed: Promise<void> | undefined;
    receiver.onReceive(() => {
      if (receiver.at('/multi').length === killAt) killed = cluster.kill(victim);
    });
    const eventIds = new Set<string>();
    await inTransaction(deps.db, async (trx) => {
      eventIds.clear();
      for (let i = 0; i < webhookEvents; i++) {
        const { eventId } = await enqueueEvent(trx, deps, {
          tenantId: tenant.id,
          organizationId: root.id,
          type: 'document.completed',
          data: documentCompletedData({ ...completedFacts('HOOKS'), documentId: `HD-${i}` }),
        });
        eventIds.add(eventId!);
      }
    });
    expect(eventIds.size).toBe(webhookEvents);
    const started = Date.now();
    const doneCount = async () => {
      const row = await deps.db
        .selectFrom('jobs')
        .select(({ fn }) => fn.countAll<number>().as('count'))
        .where('kind', '=', webhookJobKind)
        .where('status', '=', 'done')
        .executeTakeFirstOrThrow();
      return Number(row.count);
    };
    await until(
      async () => (await doneCount()) === webhookEvents,
      () => `every delivery done (${receiver.at('/multi').length} received)`,
      150_000,
    );
    await killed;
    client.drop(victim);
    const seconds = (Date.now() - started) / 1000;

    const byId = new Map<string, ReceivedWebhook[]>();
    for (const request of receiver.at('/multi')) {
      const id = request.headers['x-webhook-id'] as string;
      byId.set(id, [...(byId.get(id) ?? []), request]);
    }
    expect(killed).toBeDefined();
    expect(new Set(byId.keys())).toEqual(eventIds);
    let duplicates = 0;
    for (const [id, requests] of byId) {
      const [original, ...again] = requests as [ReceivedWebhook, ...ReceivedWebhook[]];
      expect(JSON.parse(original.raw.toString('utf8')).id).toBe(id);
      expect(
        signatureMatches(original.raw, original.headers['x-webhook-signature'] as string, secret),
      ).toBe(true);
      for (const request of again) {
        expect(request.headers['x-webhook-id']).toBe(id);
        expect(request.raw.equals(original.raw)).toBe(true);
      }
      duplicates += again.length;
    }
    process.stdout.write(
      `multi-instance webhooks: ${webhookEvents} events delivered by ${instances} instances in ${seconds.toFixed(1)} s, ` +
        `one SIGKILLed at the ${killAt}th request; ${duplicates} duplicate(s) in ${receiver.at('/multi').length} requests\n`,
    );
    // At-least-once: the request the kill interrupted is sent again, and at most what the
    // victim's runner held at the kill (its WEBHOOK_CONCURRENCY slots, sent but not yet
    // recorded), with a little room for a delivery slower than the lease on a loaded machine.
    expect(duplicates).toBeGreaterThanOrEqual(1);
    expect(duplicates).toBeLessThanOrEqual(webhookConcurrency + 8);
  });

  it('the deadline sweep runs once: every overdue contract expires once (one `expired` event, one e-mail to its creator) while every instance runs its scheduler', async () => {
    await until(
      async () => {
        for (const { id } of expiring) {
          if ((await contractRow(id)).status !== 'expired') return false;
        }
        return true;
      },
      () => 'every overdue contract to expire (the schedulers pass every 30 s)',
      Math.max(0, expiringAt - Date.now()) + 75_000,
    );
    for (const { id } of expiring) {
      const detail = dataOf<{ status: string; auditTrail: { action: string }[] }>(
        await client.request('GET', `/api/contracts/${id}`, { key }),
      );
      expect(detail.status).toBe('expired');
      expect(detail.auditTrail.filter((e) => e.action === 'expired')).toHaveLength(1);
      const row = await contractRow(id);
      expect(await verifyAuditChain(cluster.runtime.deps.db, contractTrail(row.id))).toMatchObject({
        valid: true,
      });
    }
    // Each instance logs how many it expired in a pass: together, exactly one per contract.
    const reported = cluster.servers
      .flatMap((server) => server.stdout().split('\n'))
      .filter(
        (line) =>
          line.includes('"msg":"overdue items expired"') && line.includes('"of":"contracts"'),
      )
      .map((line) => (JSON.parse(line) as { expired: number }).expired);
    expect(reported.reduce((a, b) => a + b, 0)).toBe(overdue);
    const schedulers = cluster.servers.map(
      (server) =>
        server
          .stdout()
          .split('\n')
          .filter((l) => l.includes('"of":"contracts"')).length,
    );
    process.stdout.write(
      `multi-instance deadlines: ${overdue} contracts expired once; passes that expired some, per instance: ${schedulers.join(', ')}\n`,
    );
    // The creator's e-mail about each, once (the notify jobs run on any instance).
    await until(
      async () => {
        const mails = await devOutboxMessages(cluster.runtime.deps, 'mail', 'admin@demo.example');
        const subjects = mails.map((m) => parseMail(m.content).header('subject') ?? '');
        return expiring.every(
          ({ title }) => subjects.filter((subject) => subject.includes(title)).length >= 1,
        );
      },
      () => 'the expiry e-mails',
    );
    const mails = await devOutboxMessages(cluster.runtime.deps, 'mail', 'admin@demo.example');
    const subjects = mails.map((m) => parseMail(m.content).header('subject') ?? '');
    for (const { title } of expiring) {
      expect(subjects.filter((subject) => subject.includes(title))).toHaveLength(1);
    }
  });

  it('a rate limit holds across instances: 5 failed credential checks of one client over the instances, the 6th refused with 429 by whichever instance', async () => {
    const client5 = { 'X-Forwarded-For': '203.0.113.7' };
    const answers: Answer<{ code?: string }>[] = [];
    for (let i = 0; i < 6; i++) {
      answers.push(
        await client.request('GET', '/api/contracts', {
          key: `esk_wrong_${i}_${'x'.repeat(32)}`,
          headers: client5,
        }),
      );
    }
    expect(answers.map((a) => a.status)).toEqual([401, 401, 401, 401, 401, 429]);
    expect(answers[5]!.body.code).toBe('RATE_LIMITED');
    expect(new Set(answers.map((a) => a.port)).size).toBeGreaterThan(1);
    // Refused on every instance now, even with the right key (the address's budget is spent)...
    for (const server of cluster.servers.filter((s) => client.isUp(s))) {
      const answer = await send<{ code?: string }>(server, 'GET', '/api/contracts', {
        key,
        headers: client5,
      });
      expect({ status: answer.status, code: answer.body.code }).toEqual({
        status: 429,
        code: 'RATE_LIMITED',
      });
    }
    // ...and only for that client.
    const other = await client.request('GET', '/api/contracts', {
      key,
      headers: { 'X-Forwarded-For': '203.0.113.8' },
    });
    expect(other.status).toBe(200);
  });
});
