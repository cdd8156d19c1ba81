import { keyExpiry } from '../../src/auth/apiKeys';
import { DomainError } from '../../src/errors/domainError';
import { statusOfCode } from '../../src/http/errorStatuses';
import { normalizeOrigin } from '../../src/tenancy/embeddingOrigins';
import { defaultEvents, webhookEvents, webhookUrl } from '../../src/webhooks/subscriptions';

function refusal(check: () => unknown): string {
  try {
    check();
  } catch (error) {
    if (error instanceof DomainError) return `${statusOfCode(error.code)} ${error.message}`;
    throw error;
  }
  throw new Error('expected a refusal');
}

describe('embedding origin: a bare origin, https (http only for the loopback host)', () => {
  it.each([
    ['https://partner.example', 'https://partner.example'],
    ['HTTPS://Partner.EXAMPLE/', 'https://partner.example'],
    ['https://partner.example:443', 'https://partner.example'],
    ['https://partner.example:8443/', 'https://partner.example:8443'],
    ['https://bücher.example', 'https://xn--bcher-kva.example'],
    ['http://localhost:5173', 'http://localhost:5173'],
    ['http://127.0.0.1:8080/', 'http://127.0.0.1:8080'],
    ['http://[::1]:3000', 'http://[::1]:3000'],
  ])('%s is stored as %s', (raw, origin) => {
    expect(normalizeOrigin(raw)).toBe(origin);
  });

  it.each([
    'http://partner.example',
    'https://partner.example/app',
    'https://partner.example/?a=1',
    'https://partner.example/#x',
    'https://user:pw@partner.example',
    'ftp://partner.example',
    'partner.example',
    '*.partner.example',
  ])('%s is refused', (raw) => {
    expect(refusal(() => normalizeOrigin(raw))).toMatch(/^400 origin /);
  });
});

describe('webhook subscription input', () => {
  it('takes https URLs only, without user-info', () => {
    expect(webhookUrl('https://hooks.partner.example/esign?x=1')).toBe(
      'https://hooks.partner.example/esign?x=1',
    );
    expect(refusal(() => webhookUrl('http://hooks.partner.example'))).toBe(
      '400 url must use https, got http:',
    );
    expect(refusal(() => webhookUrl('https://a:b@hooks.partner.example'))).toMatch(/user name/);
    expect(refusal(() => webhookUrl('/relative'))).toMatch(/not an absolute URL/);
  });

  it('defaults to the document events; notification events are opt-in; unknown ones are refused', () => {
    expect(defaultEvents).toEqual(['document.completed', 'document.rejected']);
    expect(webhookEvents(undefined)).toEqual(['document.completed', 'document.rejected']);
    expect(webhookEvents(['notification.task_rejected', 'notification.task_rejected'])).toEqual([
      'notification.task_rejected',
    ]);
    expect(refusal(() => webhookEvents(['webhook.test']))).toMatch(
      /Unknown event\(s\): webhook.test/,
    );
    expect(refusal(() => webhookEvents(['document.expired']))).toMatch(/document.expired/);
    expect(refusal(() => webhookEvents([' ']))).toMatch(/at least one event/);
  });
});

describe('API key expiry: ISO 8601 strictly in the future, stored in UTC', () => {
  const now = new Date('2026-11-25T08:00:00.000Z');
  it.each([
    ['2026-11-26', '2026-11-26T00:00:00.000Z'],
    ['2027-01-01T00:00:00Z', '2027-01-01T00:00:00.000Z'],
    ['2027-01-01T07:00:00+07:00', '2027-01-01T00:00:00.000Z'],
    ['2026-11-25T08:00:00.001Z', '2026-11-25T08:00:00.001Z'],
  ])('%s → %s', (raw, stored) => {
    expect(keyExpiry(raw, now)).toBe(stored);
  });

  it.each([
    '2027-02-30',
    '2027-13-01',
    '2027-01-01T10:00:00',
    '2027-01-01 10:00Z',
    'next year',
    '',
  ])('%s is not an accepted ISO 8601 instant', (raw) => {
    expect(refusal(() => keyExpiry(raw, now))).toMatch(/^400 expires must be an ISO 8601/);
  });

  it('an instant that is not after now is refused', () => {
    expect(refusal(() => keyExpiry('2026-11-25T08:00:00Z', now))).toBe(
      '400 expires 2026-11-25T08:00:00Z is not in the future',
    );
  });
});
