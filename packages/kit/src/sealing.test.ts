import { randomBytes } from 'node:crypto';
import { describe, expect, it } from '@jest/globals';
import { Sealer } from './sealing.js';

describe('Sealer', () => {
  const sealer = Sealer.fromBase64(randomBytes(32).toString('base64'));

  it('round-trips and never contains the plaintext', () => {
    const s = sealer.seal('https://example.test/a?b=c', 'req-1');
    expect(s).not.toContain('example');
    expect(sealer.open(s, 'req-1')).toBe('https://example.test/a?b=c');
  });

  it('refuses a value bound to another request, a tampered value and another key', () => {
    const s = sealer.seal('https://example.test/secret', 'req-1');
    expect(() => sealer.open(s, 'req-2')).toThrow();
    const parts = s.split('.');
    parts[3] = Buffer.from('tampered').toString('base64url');
    expect(() => sealer.open(parts.join('.'), 'req-1')).toThrow();
    expect(() => Sealer.fromBase64(randomBytes(32).toString('base64')).open(s, 'req-1')).toThrow();
  });
});
