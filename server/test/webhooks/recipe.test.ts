import fs from 'node:fs';
import path from 'node:path';
import vm from 'node:vm';
import { startWebhookReceiver, type WebhookReceiver } from '../../../test/support/webhookReceiver';
import { rotateWebhookSecret } from '../../src/webhooks/subscriptions';
import { startWebhookWorker } from '../../src/webhooks/worker';
import { repoRoot } from '../admin/runCli';
import { type Harness, seedTenant } from '../support/harness';
import { enqueueCompleted, subscribe, webhookHarness } from './fixtures';

/** The receiver recipe of docs/webhooks.md, run as written against real deliveries. */

interface Recipe {
  verifyWebhook(raw: Buffer, header: unknown, secret: string): boolean;
  isFresh(timestamp: unknown, maxAgeSeconds?: number, nowSeconds?: number): boolean;
}

function loadRecipe(): Recipe {
  const guide = fs.readFileSync(path.join(repoRoot, 'docs', 'webhooks.md'), 'utf8');
  const code = /### Node\.js recipe[\s\S]*?```js\n([\s\S]*?)```/.exec(guide)?.[1];
  if (!code) throw new Error('docs/webhooks.md has no Node.js recipe block');
  const module = { exports: {} as Recipe };
  vm.runInNewContext(code, { require, module, Buffer });
  return module.exports;
}

let receiver: WebhookReceiver;
let h: Harness;
beforeAll(async () => {
  receiver = await startWebhookReceiver();
  h = webhookHarness();
});
afterAll(async () => {
  await h.close();
  await receiver.close();
});

describe('docs/webhooks.md receiver recipe', () => {
  it('accepts real deliveries, with either secret during a rotation, and refuses altered bytes', async () => {
    const recipe = loadRecipe();
    const tenant = await seedTenant(h, 'ACME');
    receiver.answer('/recipe', { status: 500 });
    const { id, secret: old } = await subscribe(h, 'ACME', receiver.url('/recipe'));
    const worker = startWebhookWorker(h.deps, { poll: false });
    await enqueueCompleted(h, tenant);
    await worker.drain();
    const { secret: fresh } = await rotateWebhookSecret(h.deps, id, 1);
    h.clock.advance(1_000);
    await worker.drain();
    await worker.stop();

    const [before, during] = receiver.at('/recipe');
    const header = (r: typeof before) => r!.headers['x-webhook-signature'];
    expect(recipe.verifyWebhook(before!.raw, header(before), old)).toBe(true);
    expect(recipe.verifyWebhook(before!.raw, header(before), fresh)).toBe(false);
    expect(recipe.verifyWebhook(during!.raw, header(during), old)).toBe(true);
    expect(recipe.verifyWebhook(during!.raw, header(during), fresh)).toBe(true);

    const reserialized = Buffer.from(JSON.stringify(JSON.parse(before!.raw.toString()), null, 1));
    expect(recipe.verifyWebhook(reserialized, header(before), old)).toBe(false);
    const withNewline = Buffer.concat([before!.raw, Buffer.from('\n')]);
    expect(recipe.verifyWebhook(withNewline, header(before), old)).toBe(false);
    expect(recipe.verifyWebhook(before!.raw, undefined, old)).toBe(false);

    const sent = Number(before!.headers['x-webhook-timestamp']);
    expect(sent).toBe(Math.floor(Date.parse('2026-11-25T08:00:00.000Z') / 1000));
    expect(recipe.isFresh(String(sent), 300, sent + 299)).toBe(true);
    expect(recipe.isFresh(String(sent), 300, sent + 301)).toBe(false);
    expect(recipe.isFresh(undefined, 300, sent)).toBe(false);
  });
});
