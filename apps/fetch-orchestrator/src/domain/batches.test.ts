import { describe, expect, it } from '@jest/globals';
import { batchStatusOf, jobIdOf } from './batches.js';

describe('batchStatusOf', () => {
  it.each([
    [['pending', 'pending'], 'pending'],
    [['pending', 'running'], 'running'],
    [['completed', 'pending'], 'running'],
    [['failed', 'running'], 'running'],
    [['completed', 'completed'], 'completed'],
    [['failed', 'failed'], 'failed'],
    [['failed', 'cancelled'], 'failed'],
    [['cancelled', 'cancelled'], 'cancelled'],
    [['completed', 'failed'], 'partial'],
    [['completed', 'cancelled'], 'partial'],
  ])('%j -> %s', (statuses, expected) => {
    expect(batchStatusOf(statuses)).toBe(expected);
  });
});

describe('jobIdOf', () => {
  it('names the same job the same way, and every position differently', () => {
    const batch = '0b5d8f3e-5a8e-4c1e-9f3a-2f6c1d7e8a90';
    const ids = Array.from({ length: 1000 }, (_, i) => jobIdOf(batch, i));
    expect(new Set(ids).size).toBe(1000);
    expect(jobIdOf(batch, 7)).toBe(ids[7]);
    for (const id of ids.slice(0, 5)) expect(id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-8[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
  });
});
