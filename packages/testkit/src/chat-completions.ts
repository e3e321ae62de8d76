import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * A local server speaking the OpenAI chat-completions protocol (`POST /v1/chat/completions`), on
 * 127.0.0.1, for tests of LLM paths: `respond` decides each answer's content from the request
 * body; every request is recorded. A wrong bearer key is 401 with OpenAI's error shape.
 */
export interface ChatCompletionRequest {
  model: string;
  messages: { role: string; content: string }[];
  [key: string]: unknown;
}

export interface ChatCompletionsServer {
  /** The base URL a client takes (`…/v1`). */
  baseUrl: string;
  apiKey: string;
  requests: ChatCompletionRequest[];
  close: () => Promise<void>;
}

export async function startChatCompletionsServer(opts: {
  apiKey?: string;
  respond: (req: ChatCompletionRequest, index: number) => string | Promise<string>;
}): Promise<ChatCompletionsServer> {
  const apiKey = opts.apiKey ?? 'sk-test-local';
  const requests: ChatCompletionRequest[] = [];
  const server: Server = createServer((req, res) => {
    void (async () => {
      const json = (status: number, body: unknown) => {
        res.writeHead(status, { 'content-type': 'application/json' });
        res.end(JSON.stringify(body));
      };
      if (req.method !== 'POST' || req.url !== '/v1/chat/completions')
        return json(404, { error: { message: 'not found', type: 'invalid_request_error' } });
      if (req.headers.authorization !== `Bearer ${apiKey}`)
        return json(401, { error: { message: 'Incorrect API key provided', type: 'invalid_request_error', code: 'invalid_api_key' } });
      const body = JSON.parse(await readBody(req)) as ChatCompletionRequest;
      requests.push(body);
      const content = await opts.respond(body, requests.length - 1);
      const promptTokens = Math.ceil(JSON.stringify(body.messages).length / 4);
      const completionTokens = Math.ceil(content.length / 4);
      json(200, {
        id: `chatcmpl-${requests.length}`,
        object: 'chat.completion',
        created: Math.floor(Date.now() / 1000),
        model: body.model,
        choices: [{ index: 0, message: { role: 'assistant', content, refusal: null }, logprobs: null, finish_reason: 'stop' }],
        usage: { prompt_tokens: promptTokens, completion_tokens: completionTokens, total_tokens: promptTokens + completionTokens },
      });
    })().catch(() => {
      res.writeHead(500);
      res.end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    baseUrl: `http://127.0.0.1:${port}/v1`,
    apiKey,
    requests,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

async function readBody(req: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const c of req) chunks.push(c as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}
