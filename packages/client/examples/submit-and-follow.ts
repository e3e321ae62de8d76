// Submit a page to fetch, follow its events until it is completed, failed or cancelled, then read
// its detail and the first bytes of the page. Runs with Node 24 as is (type stripping), after
// `npx turbo run build --filter=@wdr/client...`:
//
//   WDR_API_URL=http://127.0.0.1:8080 WDR_API_KEY=wdr_… \
//     node packages/client/examples/submit-and-follow.ts https://example.com/page http
import { createWdrClient, followEvents, type components } from '@wdr/client';

type RequestMode = components['schemas']['RequestMode'];

const baseUrl = process.env['WDR_API_URL'] ?? 'http://127.0.0.1:8080';
const apiKey = process.env['WDR_API_KEY'];
const [target, mode = 'http'] = process.argv.slice(2);
if (!apiKey || !target) {
  console.error('usage: WDR_API_KEY=… [WDR_API_URL=…] node submit-and-follow.ts <url> [mode]');
  process.exit(2);
}

const api = createWdrClient({ baseUrl, apiKey });

const { data: created, error } = await api.POST('/api/v1/data/requests', {
  body: { url: target, mode: mode as RequestMode },
  headers: { 'Idempotency-Key': `example-${Date.now()}` },
});
if (error) {
  // Every refusal is the one error body: a stable code, a message and the request id to quote.
  console.error(`refused: ${error.code} ${error.message} (request_id ${error.request_id})`);
  process.exit(1);
}
console.log(`submitted ${created.id}: ${created.status}, ${created.route_mode}, ${created.base_tokens} tokens reserved`);

for await (const event of followEvents({ baseUrl, apiKey, id: created.id })) {
  console.log(`event ${event.id} ${event.type} -> ${event.status}`);
}

const { data: detail } = await api.GET('/api/v1/data/requests/{id}', { params: { path: { id: created.id } } });
console.log(`detail: ${JSON.stringify({ status: detail?.status, token_state: detail?.token_state, result_meta: detail?.result_meta })}`);

if (detail?.status === 'completed') {
  const { data: text } = await api.GET('/api/v1/data/requests/{id}/result', {
    params: { path: { id: created.id }, query: { format: 'text' } },
    parseAs: 'text',
  });
  console.log(`text: ${String(text).slice(0, 200)}`);
}
