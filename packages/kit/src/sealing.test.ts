import { createHmac, randomBytes, type KeyObject } from 'node:crypto';
import { describe, expect, it } from '@jest/globals';
import { z } from 'zod';
import { parseSealingKey, previousSealingKeysEnv, Sealer, SealingKeyUnknownError, sealingKeyEnv, secretKeyOf } from './sealing.js';

const b64 = () => randomBytes(32).toString('base64');

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
    const k1 = (sealer as unknown as { keys: Map<string, KeyObject> }).keys.get('k1')!.export();
    const rotated = new Sealer(
      new Map([
        ['k1', k1],
        ['k2', randomBytes(32)],
      ]),
      'k2',
    );
    expect(rotated.openBytes(sealed, 'req-1/screenshot.png')).toEqual(png);
    expect(rotated.sealBytes(png, 'a')[0]).toBe(2);
  });
});

describe('key rings from the environment (rotation)', () => {
  const shape = { KEY: sealingKeyEnv(), KEY_PREVIOUS: previousSealingKeysEnv() };
  const load = (env: Record<string, string | undefined>) => {
    const e = z.object(shape).parse(env);
    return Sealer.fromKeys(e.KEY, e.KEY_PREVIOUS, 'KEY');
  };
  const problems = (env: Record<string, string | undefined>) => {
    const r = z.object(shape).safeParse(env);
    return r.success ? [] : r.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`);
  };

  it('plain base64 keeps meaning id k1: values sealed before key rings open under `k1:<the same key>`', () => {
    const old = b64();
    const before = Sealer.fromBase64(old);
    const url = before.seal('https://example.test/a', 'aad');
    const bytes = before.sealBytes(Buffer.from('png'), 'aad');
    expect(url.startsWith('k1.')).toBe(true);
    expect(load({ KEY: old }).open(url, 'aad')).toBe('https://example.test/a');
    expect(
      load({ KEY: `k1:${old}` })
        .openBytes(bytes, 'aad')
        .toString(),
    ).toBe('png');
    expect(parseSealingKey(old)).toEqual({ id: 'k1', key: Buffer.from(old, 'base64') });
  });

  it('after a rotation old values open through the previous key, new ones are sealed under the new key, and a dropped key fails naming its id', () => {
    const [oldKey, newKey] = [b64(), b64()];
    const before = load({ KEY: oldKey });
    const oldUrl = before.seal('https://example.test/old', 'ep-1:url');
    const oldBytes = before.sealBytes(Buffer.from('old artifact'), 'req-1/trace');

    const rotated = load({ KEY: `k2:${newKey}`, KEY_PREVIOUS: `k1:${oldKey}` });
    expect(rotated.open(oldUrl, 'ep-1:url')).toBe('https://example.test/old');
    expect(rotated.openBytes(oldBytes, 'req-1/trace').toString()).toBe('old artifact');
    const newUrl = rotated.seal('https://example.test/new', 'ep-1:url');
    expect(newUrl.split('.')[0]).toBe('k2');
    expect(rotated.sealBytes(Buffer.from('x'), 'a').subarray(1, 3).toString()).toBe('k2');
    // Sealed under k2 indeed: the new key alone opens it, the old one does not.
    expect(load({ KEY: `k2:${newKey}` }).open(newUrl, 'ep-1:url')).toBe('https://example.test/new');
    expect(() => load({ KEY: `k2:${oldKey}` }).open(newUrl, 'ep-1:url')).toThrow();

    // The previous key dropped: what it sealed fails with an error naming the missing id and the ring.
    const dropped = load({ KEY: `k2:${newKey}` });
    let error: unknown;
    try {
      dropped.open(oldUrl, 'ep-1:url');
    } catch (err) {
      error = err;
    }
    expect(error).toBeInstanceOf(SealingKeyUnknownError);
    expect((error as Error).message).toBe(
      'sealed under key id "k1", which is not in the key ring (KEY: current k2, previous none); was the key dropped from the previous keys too early?',
    );
    expect(() => dropped.openBytes(oldBytes, 'req-1/trace')).toThrow(SealingKeyUnknownError);
    expect((error as Error).message).not.toContain(oldKey);
  });

  it('several previous keys each open their own values (two rotations in a row)', () => {
    const [k1, k2, k3] = [b64(), b64(), b64()];
    const v1 = load({ KEY: k1 }).seal('one', 'a');
    const v2 = load({ KEY: `k2:${k2}`, KEY_PREVIOUS: `k1:${k1}` }).seal('two', 'a');
    const now = load({ KEY: `k3:${k3}`, KEY_PREVIOUS: ` k2:${k2} , k1:${k1} ` });
    expect([now.open(v1, 'a'), now.open(v2, 'a')]).toEqual(['one', 'two']);
  });

  it('refuses bad settings at boot with a message naming the setting and the problem', () => {
    expect(problems({})).toEqual(['KEY: Invalid input: expected string, received undefined']);
    expect(problems({ KEY: Buffer.alloc(16).toString('base64') })).toEqual([
      'KEY: key k1 must be 32 bytes, base64-encoded (it decodes to 16)',
    ]);
    expect(problems({ KEY: `k2:${Buffer.alloc(31).toString('base64')}` })).toEqual([
      'KEY: key k2 must be 32 bytes, base64-encoded (it decodes to 31)',
    ]);
    expect(problems({ KEY: `bad.id:${b64()}` })).toEqual(['KEY: key id "bad.id" must be 1-32 letters, digits, _ or -']);
    expect(problems({ KEY: `:${b64()}` })).toEqual(['KEY: key id "" must be 1-32 letters, digits, _ or -']);
    expect(problems({ KEY: b64(), KEY_PREVIOUS: b64() })).toEqual(['KEY_PREVIOUS: each key must be <id>:<base64 of 32 bytes>']);
    expect(problems({ KEY: b64(), KEY_PREVIOUS: `k0:${b64()},k0:${b64()}` })).toEqual(['KEY_PREVIOUS: key id k0 is given twice']);
    expect(problems({ KEY: b64(), KEY_PREVIOUS: `k0:${b64()},k9:abc` })).toEqual([
      'KEY_PREVIOUS: key k9 must be 32 bytes, base64-encoded (it decodes to 2)',
    ]);
    // The new key under the old key's id (plain base64 is k1 too): refused when the ring is built.
    expect(() => load({ KEY: b64(), KEY_PREVIOUS: `k1:${b64()}` })).toThrow(
      'KEY_PREVIOUS: key id k1 is also the id of the current key (KEY); give the new key its own id (KEY=<new id>:<base64>)',
    );
    // Empty and unset previous lists are no previous keys.
    expect(z.object(shape).parse({ KEY: b64() }).KEY_PREVIOUS).toEqual([]);
    expect(z.object(shape).parse({ KEY: b64(), KEY_PREVIOUS: '' }).KEY_PREVIOUS).toEqual([]);
  });
});

describe('secretKeyOf', () => {
  const hmac = (key: Parameters<typeof createHmac>[1]) => createHmac('sha256', key).update('message').digest('hex');

  it('is the key createHmac takes from the text (utf8) or from its bytes (base64)', () => {
    const pepper = 'pepper \u00e9\u4e2d';
    expect(hmac(secretKeyOf(pepper))).toBe(hmac(pepper));
    const bytes = randomBytes(32);
    expect(hmac(secretKeyOf(bytes.toString('base64'), 'base64'))).toBe(hmac(bytes));
    // The same text read in the other encoding is another key.
    expect(hmac(secretKeyOf(bytes.toString('base64')))).not.toBe(hmac(bytes));
  });

  it('imports a secret once and keeps it', () => {
    const s = b64();
    expect(secretKeyOf(s, 'base64')).toBe(secretKeyOf(s, 'base64'));
    expect(secretKeyOf(s, 'base64')).not.toBe(secretKeyOf(s));
  });
});
