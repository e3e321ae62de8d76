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

  it('seals bytes the same way: bound to its associated data and key, rotation-ready', () => {
    const png = Buffer.concat([Buffer.from([0x89, 0x50, 0x4e, 0x47]), randomBytes(1000)]);
    const sealed = sealer.sealBytes(png, 'req-1/screenshot.png');
    expect(sealed.includes(png.subarray(0, 64))).toBe(false);
    expect(sealer.openBytes(sealed, 'req-1/screenshot.png')).toEqual(png);
    expect(() => sealer.openBytes(sealed, 'req-2/screenshot.png')).toThrow();
    const tampered = Buffer.from(sealed);
    tampered[tampered.length - 1]! ^= 1;
    expect(() => sealer.openBytes(tampered, 'req-1/screenshot.png')).toThrow();
    // A second key introduced beside the first still opens what the first sealed.
    const k1 = (sealer as unknown as { keys: Map<string, Buffer> }).keys.get('k1')!;
    const rotated = new Sealer(new Map([['k1', k1], ['k2', randomBytes(32)]]), 'k2');
    expect(rotated.openBytes(sealed, 'req-1/screenshot.png')).toEqual(png);
    expect(rotated.sealBytes(png, 'a')[0]).toBe(2);
  });
});
