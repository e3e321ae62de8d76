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

  /**
   * Binary form for larger secrets (debug artifacts): `<key id length><key id><iv 12><tag 16><ciphertext>`,
   * so rotation works the same way as for the text form.
   */
  sealBytes(plaintext: Buffer, aad: string): Buffer {
    const key = this.keys.get(this.currentKeyId)!;
    const iv = randomBytes(12);
    const cipher = createCipheriv('aes-256-gcm', key, iv);
    cipher.setAAD(Buffer.from(aad));
    const ct = Buffer.concat([cipher.update(plaintext), cipher.final()]);
    const id = Buffer.from(this.currentKeyId, 'utf8');
    return Buffer.concat([Buffer.from([id.length]), id, iv, cipher.getAuthTag(), ct]);
  }

  openBytes(sealed: Buffer, aad: string): Buffer {
    const idLength = sealed[0] ?? 0;
    const key = this.keys.get(sealed.subarray(1, 1 + idLength).toString('utf8'));
    if (!key || sealed.length < 1 + idLength + 28) throw new Error('sealed value is malformed or its key is unknown');
    const iv = sealed.subarray(1 + idLength, 13 + idLength);
    const tag = sealed.subarray(13 + idLength, 29 + idLength);
    const decipher = createDecipheriv('aes-256-gcm', key, iv);
    decipher.setAAD(Buffer.from(aad));
    decipher.setAuthTag(tag);
    return Buffer.concat([decipher.update(sealed.subarray(29 + idLength)), decipher.final()]);
  }
}
