import { describe, expect, it } from '@jest/globals';
import { retryable, retryOriginOf } from './retry.js';

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

describe('retryOriginOf', () => {
  const ids = {
    projectId: '11111111-1111-4111-8111-111111111111',
    environmentId: '22222222-2222-4222-8222-222222222222',
    workflowId: '33333333-3333-4333-8333-333333333333',
    workflowVersionId: '44444444-4444-4444-8444-444444444444',
  };
  const origin = {
    project_id: ids.projectId,
    environment_id: ids.environmentId,
    workflow_id: ids.workflowId,
    workflow_version_id: ids.workflowVersionId,
  };
  const none = { projectId: null, environmentId: null, workflowId: null, workflowVersionId: null };

  it('keeps a run in its project, with the cap the gateway sends', () => {
    expect(retryOriginOf(ids, { ...origin, budget_cap_tokens: 12 })).toEqual({ ...origin, budget_cap_tokens: 12 });
  });

  it('keeps the scope of a run retried without an origin, uncapped', () => {
    expect(retryOriginOf(ids, undefined)).toEqual({ ...origin, budget_cap_tokens: null });
  });

  it('gives a plain request no origin, and refuses one named for it', () => {
    expect(retryOriginOf(none, undefined)).toBeUndefined();
    expect(() => retryOriginOf(none, { ...origin, budget_cap_tokens: 1 })).toThrow('not a workflow run');
  });

  it("refuses an origin that is not the source's", () => {
    expect(() => retryOriginOf(ids, { ...origin, workflow_id: ids.projectId, budget_cap_tokens: 1 })).toThrow("not the source run's");
  });
});
