import { randomUUID } from 'node:crypto';
import { describe, expect, it } from '@jest/globals';
import { dlqName, eventSpecOf, topicName, topicsConsumedBy, topicsProducedBy, TOPICS, type TopicKey } from './catalog.js';
import { envelopeSchema } from './envelope.js';

const keys = Object.keys(TOPICS) as TopicKey[];

describe('event catalog', () => {
  it('names every topic once, event types once across topics, and gives each a DLQ twin', () => {
    const names = keys.map((k) => TOPICS[k].name);
    expect(new Set(names).size).toBe(names.length);
    const types = keys.flatMap((k) => Object.keys(TOPICS[k].events));
    expect(new Set(types).size).toBe(types.length);
    for (const k of keys) {
      expect(dlqName(k, 'p.')).toBe(`p.${TOPICS[k].name}.dlq`);
      expect(topicName(k, 'p.')).toBe(`p.${TOPICS[k].name}`);
      expect(TOPICS[k].producers.length).toBeGreaterThan(0);
      expect(TOPICS[k].consumers.length).toBeGreaterThan(0);
      expect(TOPICS[k].retry.maxAttempts).toBeGreaterThanOrEqual(1);
    }
  });

  it('answers who produces and who consumes', () => {
    expect(topicsProducedBy('billing-ledger')).toEqual(['billingEvents', 'billingAlerts']);
    expect(topicsConsumedBy('webhook-dispatcher')).toEqual(['requestLifecycle', 'billingAlerts']);
    expect(topicsConsumedBy('billing-ledger')).toEqual(['billingCommands']);
    expect(topicsConsumedBy('fetch-orchestrator')).toEqual(expect.arrayContaining(['fetchJobs', 'billingEvents']));
  });

  it('validates event data with each event schema', () => {
    const spec = eventSpecOf('billingCommands', 'billing.settlement_requested')!;
    expect(spec.schema.safeParse({ request_id: randomUUID(), outcome: 'completed', route_mode: 'http', captcha_tokens: 0 }).success).toBe(
      true,
    );
    expect(spec.schema.safeParse({ request_id: 'nope', outcome: 'completed', route_mode: 'http', captcha_tokens: 0 }).success).toBe(false);
    expect(spec.schema.safeParse({ request_id: randomUUID(), outcome: 'exploded', route_mode: 'http', captcha_tokens: 0 }).success).toBe(
      false,
    );
    expect(eventSpecOf('billingCommands', 'fetch.job_requested')).toBeUndefined();
    const ended = eventSpecOf('extractionEvents', 'extraction.run_ended')!;
    expect(ended.schema.parse({ request_id: randomUUID(), status: 'completed' })).toMatchObject({ status: 'completed', error: null });
    expect(ended.schema.safeParse({ request_id: randomUUID(), status: 'running' }).success).toBe(false);
  });

  it('settlement commands: version 2 may carry the lease a request was admitted from; version 1 (without it) still parses', () => {
    const spec = eventSpecOf('billingCommands', 'billing.settlement_requested')!;
    expect(spec.version).toBe(2);
    const v1 = { request_id: randomUUID(), outcome: 'completed', route_mode: 'http', captcha_tokens: 0 };
    expect(spec.schema.safeParse(v1).success).toBe(true);
    const lease = { id: randomUUID(), pricing_version: 2, plan_id: 'standard', network_class: 'datacenter', held_tokens: 1 };
    expect(spec.schema.safeParse({ ...v1, lease }).success).toBe(true);
    expect(spec.schema.safeParse({ ...v1, lease: { ...lease, held_tokens: -1 } }).success).toBe(false);
    expect(spec.schema.safeParse({ ...v1, lease: { ...lease, id: 'nope' } }).success).toBe(false);
    expect(spec.schema.safeParse({ ...v1, lease: { ...lease, network_class: 'moon' } }).success).toBe(false);
  });

  it('carries the end of an extraction run from recipe-extractor to the orchestrator', () => {
    expect(topicsProducedBy('recipe-extractor')).toEqual(expect.arrayContaining(['extractionEvents']));
    expect(topicsConsumedBy('fetch-orchestrator')).toContain('extractionEvents');
  });

  it('accepts only well-formed envelopes', () => {
    const ok = { id: randomUUID(), type: 't', schema_version: 1, tenant_id: randomUUID(), occurred_at: new Date().toISOString(), data: {} };
    expect(envelopeSchema.safeParse(ok).success).toBe(true);
    expect(envelopeSchema.safeParse({ ...ok, schema_version: 0 }).success).toBe(false);
    expect(envelopeSchema.safeParse({ ...ok, id: 'x' }).success).toBe(false);
    expect(envelopeSchema.safeParse({ ...ok, occurred_at: 'yesterday' }).success).toBe(false);
  });
});
