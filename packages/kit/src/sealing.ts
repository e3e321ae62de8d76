import { createCipheriv, createDecipheriv, createSecretKey, randomBytes, type KeyObject } from 'node:crypto';
import { z } from 'zod';

/** One AES-256 key of a sealer's key ring, with the id that sealed values carry. */
export interface SealingKey {
  id: string;
  key: Buffer;
}

/**
 * A secret as a KeyObject, imported once and kept. Node 24's createHmac/createCipheriv import raw
 * key bytes (a Buffer or a string) again at every call: an HMAC-SHA256 of a 400-byte message took
 * 23-30 us that way against 4-5 us with a KeyObject, an AES-256-GCM seal 32-38 us against 10-12
 * (measured on the 2-core development machine); the hot paths (webhook signatures, API key
 * digests, sealing at admission) pay it per call. Keyed by the secret's text and its encoding
 * (`utf8`: the bytes createHmac takes from a string key; `base64`: a Standard Webhooks secret's
 * bytes); at most 10,000 kept (cleared past that).
 */
const importedKeys = new Map<string, KeyObject>();
export function secretKeyOf(secret: string, encoding: 'utf8' | 'base64' = 'utf8'): KeyObject {
  const id = `${encoding}:${secret}`;
  let key = importedKeys.get(id);
  if (!key) {
    if (importedKeys.size >= 10_000) importedKeys.clear();
    key = createSecretKey(Buffer.from(secret, encoding));
    importedKeys.set(id, key);
  }
  return key;
}

/** Key ids: short, and free of the separators of the sealed forms (`.`) and of the settings (`:`, `,`). */
const KEY_ID = /^[A-Za-z0-9_-]{1,32}$/;
/** The id of a key given as plain base64 (the only form before key rings): values sealed so far carry it. */
export const DEFAULT_KEY_ID = 'k1';

/**
 * A key as configured: `<id>:<base64 of 32 bytes>`, or plain base64 (id `k1`, the form every
 * deployment used before key rings, so existing settings and sealed values keep their meaning).
 * `requireId`: the previous-keys list names every id. Throws an Error saying what is wrong.
 */
export function parseSealingKey(text: string, opts: { requireId?: boolean } = {}): SealingKey {
  const value = text.trim();
  const colon = value.indexOf(':');
  if (colon < 0 && opts.requireId) throw new Error('each key must be <id>:<base64 of 32 bytes>');
  const id = colon < 0 ? DEFAULT_KEY_ID : value.slice(0, colon);
  if (!KEY_ID.test(id)) throw new Error(`key id ${JSON.stringify(id)} must be 1-32 letters, digits, _ or -`);
  const key = Buffer.from(value.slice(colon + 1), 'base64');
  if (key.length !== 32) throw new Error(`key ${id} must be 32 bytes, base64-encoded (it decodes to ${key.length})`);
  return { id, key };
}

/** A comma-separated list of `<id>:<base64>` keys (the `_PREVIOUS` settings); empty is none. Ids must differ. */
export function parseSealingKeyList(text: string): SealingKey[] {
  const keys = text
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean)
    .map((s) => parseSealingKey(s, { requireId: true }));
  const seen = new Set<string>();
  for (const k of keys) {
    if (seen.has(k.id)) throw new Error(`key id ${k.id} is given twice`);
    seen.add(k.id);
  }
  return keys;
}

const zodParsed =
  <T>(parse: (v: string) => T) =>
  (v: string, ctx: z.RefinementCtx): T => {
    try {
      return parse(v);
    } catch (err) {
      ctx.addIssue({ code: 'custom', message: (err as Error).message });
      return z.NEVER;
    }
  };

/** Env schema of a sealing key (`TARGET_URL_KEY`, ...): `<id>:<base64>` or plain base64 (id k1); required. */
export const sealingKeyEnv = () => z.string().transform(zodParsed((v) => parseSealingKey(v)));

/** Env schema of the keys that still open older values (`<NAME>_PREVIOUS`): `<id>:<base64>,...`, default none. */
export const previousSealingKeysEnv = () => z.string().default('').transform(zodParsed(parseSealingKeyList));

/** A sealed value under a key id the ring no longer (or never) held: the key was dropped too early, or another key ring. */
export class SealingKeyUnknownError extends Error {
  constructor(
    readonly keyId: string,
    ring: string,
  ) {
    super(
      `sealed under key id ${JSON.stringify(keyId)}, which is not in the key ring (${ring}); was the key dropped from the previous keys too early?`,
    );
    this.name = 'SealingKeyUnknownError';
  }
}

/**
 * AES-256-GCM for secrets at rest (full target URLs, webhook URLs and secrets, debug artifacts).
 * The sealed form names its key id: `<id>.<iv>.<tag>.<ciphertext>` (base64url). A sealer holds a
 * key ring: the current key seals, every key of the ring opens what it sealed, so a key is rotated
 * by making a new one current and keeping the old one as a previous key until no value sealed under
 * it is left (docs/operations.md "Rotating secrets").
 */
export class Sealer {
  constructor(
    keys: Map<string, Buffer>,
    private readonly currentKeyId: string,
    /** Names the setting in errors (`WEBHOOK_SECRET_KEY`). */
    private readonly name = 'sealing key',
  ) {
    if (!keys.has(currentKeyId)) throw new Error('current key id has no key');
    for (const [id, key] of keys) if (key.length !== 32) throw new Error(`${name}: key ${id} must be 32 bytes`);
    // Imported once (secretKeyOf above says why): every seal and open would import the bytes again.
    this.keys = new Map([...keys].map(([id, key]) => [id, createSecretKey(key)]));
  }

  private readonly keys: Map<string, KeyObject>;

  /**
   * The ring of a setting and its previous keys, as parsed by `sealingKeyEnv` and
   * `previousSealingKeysEnv`. A previous key with the current key's id is refused: two keys under
   * one id would leave values that only one of them opens.
   */
  static fromKeys(current: SealingKey, previous: readonly SealingKey[] = [], name = 'sealing key'): Sealer {
    const keys = new Map<string, Buffer>([[current.id, current.key]]);
    for (const p of previous) {
      if (keys.has(p.id)) {
        throw new Error(
          p.id === current.id
            ? `${name}_PREVIOUS: key id ${p.id} is also the id of the current key (${name}); give the new key its own id (${name}=<new id>:<base64>)`
            : `${name}_PREVIOUS: key id ${p.id} is given twice`,
        );
      }
      keys.set(p.id, p.key);
    }
    return new Sealer(keys, current.id, name);
  }

  /** One key, `<id>:<base64>` or plain base64 (id k1). */
  static fromBase64(key: string): Sealer {
    return Sealer.fromKeys(parseSealingKey(key));
  }

  /** The id new values are sealed under. */
  get keyId(): string {
    return this.currentKeyId;
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
    if (!keyId || !iv || !tag || ct === undefined) throw new Error('sealed value is malformed');
    const key = this.keyFor(keyId);
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
    if (idLength === 0 || sealed.length < 1 + idLength + 28) throw new Error('sealed value is malformed');
    const key = this.keyFor(sealed.subarray(1, 1 + idLength).toString('utf8'));
    const iv = sealed.subarray(1 + idLength, 13 + idLength);
    const tag = sealed.subarray(13 + idLength, 29 + idLength);
    const decipher = createDecipheriv('aes-256-gcm', key, iv);
    decipher.setAAD(Buffer.from(aad));
    decipher.setAuthTag(tag);
    return Buffer.concat([decipher.update(sealed.subarray(29 + idLength)), decipher.final()]);
  }

  private keyFor(keyId: string): KeyObject {
    const key = this.keys.get(keyId);
    if (key) return key;
    const previous = [...this.keys.keys()].filter((id) => id !== this.currentKeyId);
    throw new SealingKeyUnknownError(
      keyId,
      `${this.name}: current ${this.currentKeyId}, previous ${previous.length ? previous.join(', ') : 'none'}`,
    );
  }
}
