import type OpenAI from 'openai';
import type { FieldIssue } from '@wdr/kit/errors';
import { load } from 'cheerio/slim';

/**
 * The LLM generator: one chat completion per attempt through the official `openai` client, against
 * any server speaking the chat-completions protocol (base URL and key from recipe-extractor's env).
 * The model is asked for a DSL v1 definition as a JSON object; the caller validates it (limits,
 * then a run on the sample page) and feeds the issues back on the next attempt.
 */
export interface LlmConfig {
  baseUrl: string | undefined;
  apiKey: string;
  model: string;
  timeoutMs: number;
}

export interface LlmAttemptInput {
  prompt: string;
  html: string;
  previous?: { definition: unknown; issues: FieldIssue[] } | undefined;
}

export interface LlmAnswer {
  definition: unknown;
  usage: { prompt_tokens: number; completion_tokens: number } | undefined;
}

const SYSTEM = `You write extraction recipes in DSL v1 for one web page. Answer with one JSON object only:
{"dsl_version":1,"fields":[rule,...]}. A rule: {"name": snake_case, "type": "string"|"number"|"integer"|"boolean"|"url"|"date"|"object",
"required"?: boolean, "multiple"?: boolean, "description"?: string, "selectors"?: [CSS selectors tried in order],
"source"?: {"type":"text"} | {"type":"html"} | {"type":"attribute","name":attr} | {"type":"json_ld","path":"a.b","item_type"?:"Product"}
| {"type":"microdata","itemprop":name} | {"type":"opengraph","property":"og:title"}}.
text/html/attribute sources need selectors; json_ld/microdata/opengraph take none. An object field has "scope" (CSS selector of each item)
and "fields" (rules looked up inside the item), no source and no selectors. Prefer structured data already in the page.
Mark required only what the user asks for and the page has.`;

export class LlmGenerator {
  /**
   * The `openai` package (over 10 MB resident once loaded) is imported on the first attempt, not at
   * boot: most extractions never generate, and an idle extractor should not hold it (issue 24).
   */
  private client: Promise<OpenAI> | undefined;

  constructor(private readonly config: LlmConfig) {}

  private openai(): Promise<OpenAI> {
    this.client ??= import('openai').then(
      ({ default: OpenAI }) =>
        new OpenAI({
          apiKey: this.config.apiKey,
          ...(this.config.baseUrl ? { baseURL: this.config.baseUrl } : {}),
          timeout: this.config.timeoutMs,
          maxRetries: 0,
        }),
    );
    return this.client;
  }

  async attempt(input: LlmAttemptInput): Promise<LlmAnswer> {
    const messages: OpenAI.Chat.Completions.ChatCompletionMessageParam[] = [
      { role: 'system', content: SYSTEM },
      { role: 'user', content: `What to extract: ${input.prompt}\n\nThe page (reduced):\n${reducePage(input.html)}` },
    ];
    if (input.previous) {
      messages.push({ role: 'assistant', content: JSON.stringify(input.previous.definition) });
      messages.push({
        role: 'user',
        content: `That recipe was rejected on the page:\n${input.previous.issues.map((i) => `- ${i.field}: ${i.issue}`).join('\n')}\nAnswer a corrected recipe.`,
      });
    }
    const client = await this.openai();
    const completion = await client.chat.completions.create({
      model: this.config.model,
      messages,
      temperature: 0,
      response_format: { type: 'json_object' },
    });
    const text = completion.choices[0]?.message.content ?? '';
    const usage = completion.usage
      ? { prompt_tokens: completion.usage.prompt_tokens, completion_tokens: completion.usage.completion_tokens }
      : undefined;
    return { definition: parseJsonObject(text, usage), usage };
  }
}

/** The model's answer as JSON; a fenced block is unwrapped. Not JSON: a rejected attempt (its usage still billed). */
function parseJsonObject(text: string, usage: LlmAnswer['usage']): unknown {
  const fenced = /```(?:json)?\s*([\s\S]*?)```/.exec(text);
  try {
    return JSON.parse(fenced ? fenced[1]! : text);
  } catch {
    throw new LlmAnswerError('the model did not answer a JSON object', usage);
  }
}

/** The model answered, but not with something usable; `usage` is what the answer cost. */
export class LlmAnswerError extends Error {
  constructor(
    message: string,
    readonly usage: LlmAnswer['usage'],
  ) {
    super(message);
  }
}

/** The page for the prompt: no scripts (but JSON-LD), styles, comments or SVG; whitespace collapsed; at most 60,000 characters. */
export function reducePage(html: string, max = 60_000): string {
  const $ = load(html);
  $('script:not([type="application/ld+json"]), style, noscript, svg, template, iframe').remove();
  $('*')
    .contents()
    .filter((_, n) => n.type === 'comment')
    .remove();
  const reduced = ($.html() ?? '').replace(/\s+/g, ' ');
  return reduced.length > max ? `${reduced.slice(0, max)} …(truncated)` : reduced;
}
