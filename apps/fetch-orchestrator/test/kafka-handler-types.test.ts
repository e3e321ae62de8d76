import { expect, it } from '@jest/globals';
import type { EventHandlers } from '@wdr/kit/kafka';

// Compile-time checks (`tsc` type-checks test/): the event catalog types the Kafka handlers. A handler
// receives its event type's payload, and an event type the catalog does not have does not compile.
const handlers: EventHandlers = {
  'fetch.job_requested': async (envelope) => {
    const requestId: string = envelope.data.request_id;
    // @ts-expect-error fetch.job_requested carries no token_state
    void envelope.data.token_state;
    void requestId;
  },
  'billing.reservation_resolved': async (envelope) => {
    const state: 'settled' | 'refunded' = envelope.data.token_state;
    void state;
  },
  // @ts-expect-error not an event type of the catalog
  'fetch.job_requsted': async () => undefined,
};

it('handlers are keyed and typed by the event catalog', () => {
  expect(Object.keys(handlers)).toEqual(['fetch.job_requested', 'billing.reservation_resolved', 'fetch.job_requsted']);
});
