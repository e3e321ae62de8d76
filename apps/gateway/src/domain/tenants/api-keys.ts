import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import { secretKeyOf } from '@wdr/kit/sealing';

/**
 * API key format: `wdr_<prefix>_<secret>`. The prefix (12 url-safe chars) finds the row; the whole
 * key is verified against an HMAC-SHA256 (peppered) in constant time. The key itself is never stored.
 */
const KEY_RE = /^wdr_([A-Za-z0-9]{12})_([A-Za-z0-9_-]{43})$/;

export interface IssuedKey {
  key: string;
  prefix: string;
  hash: string;
}

export function issueApiKey(pepper: string): IssuedKey {
  const prefix = randomBytes(9).toString('base64url').replace(/[-_]/g, 'x').slice(0, 12);
  const secret = randomBytes(32).toString('base64url');
  const key = `wdr_${prefix}_${secret}`;
  return { key, prefix, hash: hashApiKey(key, pepper) };
}

export function hashApiKey(key: string, pepper: string): string {
  return createHmac('sha256', secretKeyOf(pepper)).update(key).digest('hex');
}

/** The lookup prefix of a well-formed key, or undefined for anything else. */
export function prefixOf(key: string): string | undefined {
  return KEY_RE.exec(key)?.[1];
}

export function keyMatches(key: string, storedHash: string, pepper: string): boolean {
  return digestMatches(hashApiKey(key, pepper), storedHash);
}

/** A presented credential's digest (`hashApiKey`) against the stored one, in constant time. */
export function digestMatches(digest: string, storedHash: string): boolean {
  const a = Buffer.from(digest, 'hex');
  const b = Buffer.from(storedHash, 'hex');
  return a.length === b.length && timingSafeEqual(a, b);
}
