import { PublicError } from '@wdr/kit/errors';

/** Keyset cursors: opaque base64url of the last item's (created_at, id), sent back unchanged. */
export interface CursorPosition {
  createdAt: Date;
  id: string;
}

export function encodeCursor(p: CursorPosition): string {
  return Buffer.from(JSON.stringify([p.createdAt.toISOString(), p.id])).toString('base64url');
}

export function decodeCursor(cursor: string | undefined): CursorPosition | undefined {
  if (cursor === undefined || cursor === '') return undefined;
  try {
    const [t, id] = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8')) as unknown[];
    const createdAt = new Date(String(t));
    if (typeof id !== 'string' || !/^[0-9a-f-]{36}$/.test(id) || Number.isNaN(createdAt.getTime())) throw new Error('bad cursor');
    return { createdAt, id };
  } catch {
    throw new PublicError('VALIDATION_FAILED', 'The cursor is not one this list returned.', {
      details: [{ field: 'cursor', issue: 'not a cursor of this list' }],
    });
  }
}
