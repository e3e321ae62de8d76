import { describe, expect, it } from '@jest/globals';
import { retryable } from './retry.js';

describe('retryable', () => {
  const extraction = { extraction: { recipe_id: '6f1c1c9e-5b1a-4c55-9a57-2f4b8f0d7a11' } };

  it('takes failed requests, extraction or not', () => {
    expect(retryable({ status: 'failed', options: {} }, false)).toBe(true);
    expect(retryable({ status: 'failed', options: extraction }, false)).toBe(true);
  });

  it('takes a completed extraction request only when its run failed', () => {
    expect(retryable({ status: 'completed', options: extraction }, true)).toBe(true);
    expect(retryable({ status: 'completed', options: extraction }, false)).toBe(false);
  });

  it('never takes a completed plain request, nor a request still under way', () => {
    expect(retryable({ status: 'completed', options: {} }, true)).toBe(false);
    expect(retryable({ status: 'completed', options: { extraction: null } }, true)).toBe(false);
    expect(retryable({ status: 'running', options: extraction }, true)).toBe(false);
    expect(retryable({ status: 'cancelled', options: extraction }, true)).toBe(false);
  });
});
