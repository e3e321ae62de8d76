import { describe, expect, it } from '@jest/globals';
import { parseLastEventId, sseMessage } from './event-stream.js';

describe('parseLastEventId', () => {
  it('reads an absent or empty header as 0 and an integer >= 0 as itself', () => {
    expect(parseLastEventId(undefined)).toBe(0);
    expect(parseLastEventId('')).toBe(0);
    expect(parseLastEventId('0')).toBe(0);
    expect(parseLastEventId(' 42 ')).toBe(42);
  });

  it.each(['-1', '1.5', 'abc', '1e3', '99999999999', '2147483648'])('rejects %s with a 422', (raw) => {
    expect(() => parseLastEventId(raw)).toThrow(expect.objectContaining({ code: 'VALIDATION_FAILED', status: 422 }));
  });
});

describe('sseMessage', () => {
  it('frames one event: its id, and the public event as one data line', () => {
    const msg = sseMessage({
      event_id: 7,
      kind: 'request.running',
      status: 'running',
      created_at: '2026-11-21T10:00:00.000Z',
      payload: { stage: 'http', secret: 'x\ny' },
    });
    expect(msg).toBe(
      'id: 7\ndata: {"id":7,"type":"request.running","status":"running","created_at":"2026-11-21T10:00:00.000Z","data":{"stage":"http"}}\n\n',
    );
  });
});
