/**
 * Whether the service sends a notification e-mail itself (spec 01, "Event kinds"): internal
 * notification e-mails are always sent; an external one is not sent when an active webhook
 * subscription of the organization delegates it through the matching `notification.*` event.
 */
export function shouldSendEmail(input: {
  recipientType: 'internal' | 'external';
  /** An active subscription of the organization lists the matching `notification.*` event. */
  delegatedByWebhook: boolean;
}): boolean {
  return input.recipientType === 'internal' || !input.delegatedByWebhook;
}
