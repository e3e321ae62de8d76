import { describe, expect, it } from '@jest/globals';
import { hashApiKey, issueApiKey, keyMatches, prefixOf } from './api-keys.js';

const pepper = 'test-pepper-0123456789';

describe('api keys', () => {
  it('issues keys whose prefix is recoverable and whose hash verifies', () => {
    const issued = issueApiKey(pepper);
    expect(prefixOf(issued.key)).toBe(issued.prefix);
    expect(keyMatches(issued.key, issued.hash, pepper)).toBe(true);
    expect(issued.hash).not.toContain(issued.key);
  });

  it('rejects a different key, a different pepper and malformed keys', () => {
    const a = issueApiKey(pepper);
    const b = issueApiKey(pepper);
    expect(keyMatches(b.key, a.hash, pepper)).toBe(false);
    expect(keyMatches(a.key, a.hash, 'another-pepper-0123456789')).toBe(false);
    expect(prefixOf('wdr_short_x')).toBeUndefined();
    expect(prefixOf(`${a.key}x`)).toBeUndefined();
    expect(keyMatches(a.key, 'abcd', pepper)).toBe(false);
  });

  it('hashes deterministically', () => {
    expect(hashApiKey('k', pepper)).toBe(hashApiKey('k', pepper));
  });
});
