import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';

/**
 * AES-256-GCM for secrets at rest (the full target URL). The sealed form names its key id, so a
 * new key can be introduced while old rows still open: `k1.<iv>.<tag>.<ciphertext>` (base64url).
 */
export class Sealer {
  constructor(
    private readonly keys: Map<string, Buffer>,
    private readonly currentKeyId: string,
  ) {
    if (!keys.has(currentKeyId)) throw new Error('current key id has no key');
  }

  static fromBase64(key: string): Sealer {
    return new Sealer(new Map([['k1', Buffer.from(key, 'base64')]]), 'k1');
  }

  seal(plaintext: string, aad: string): string {
    const key = this.keys.get(this.currentKeyId)!;
    const iv = randomBytes(12);
    const cipher = createCipheriv('aes-256-gcm', key, iv);
    cipher.setAAD(Buffer.from(aad));
    const ct = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()]);
    return [this.currentKeyId, iv.toString('base64url'), cipher.getAuthTag().toString('base64url'), ct.toString('base64url')].join('.');
  }

  open(sealed: string, aad: string): string {
    const [keyId, iv, tag, ct] = sealed.split('.');
    const key = keyId ? this.keys.get(keyId) : undefined;
    if (!key || !iv || !tag || ct === undefined) throw new Error('sealed value is malformed or its key is unknown');
    const decipher = createDecipheriv('aes-256-gcm', key, Buffer.from(iv, 'base64url'));
    decipher.setAAD(Buffer.from(aad));
    decipher.setAuthTag(Buffer.from(tag, 'base64url'));
    return Buffer.concat([decipher.update(Buffer.from(ct, 'base64url')), decipher.final()]).toString('utf8');
  }
}
