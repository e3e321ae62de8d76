import { createHmac, randomBytes } from 'node:crypto';
import { secretKeyOf } from '@wdr/kit/sealing';

/**
 * Standard Webhooks (https://www.standardwebhooks.com): secrets are `whsec_` + base64 of random
 * bytes; the signature is `v1,` + base64(HMAC-SHA256(secret bytes, `<webhook-id>.<timestamp>.<body>`)).
 * During a rotation the header carries one signature per valid secret, separated by spaces, and a
 * receiver accepts any of them.
 */
const PREFIX = 'whsec_';

export function generateSecret(): string {
  return PREFIX + randomBytes(32).toString('base64');
}

export function signatureOf(secret: string, webhookId: string, timestampSeconds: number, body: string): string {
  // The secret's bytes imported once (kit's secretKeyOf): every attempt of every message signs with it.
  const key = secretKeyOf(secret.startsWith(PREFIX) ? secret.slice(PREFIX.length) : secret, 'base64');
  return 'v1,' + createHmac('sha256', key).update(`${webhookId}.${timestampSeconds}.${body}`).digest('base64');
}

/** The three Standard Webhooks headers for one attempt. */
export function signedHeaders(
  secrets: readonly string[],
  webhookId: string,
  timestampSeconds: number,
  body: string,
): Record<string, string> {
  return {
    'webhook-id': webhookId,
    'webhook-timestamp': String(timestampSeconds),
    'webhook-signature': secrets.map((s) => signatureOf(s, webhookId, timestampSeconds, body)).join(' '),
  };
}

/** `msg_` + the message's uuid without dashes: the stable `webhook-id` of one event to one endpoint. */
export const webhookIdOf = (messageId: string) => `msg_${messageId.replace(/-/g, '')}`;

export function messageIdOf(webhookId: string): string {
  const h = webhookId.slice(4);
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20)}`;
}
