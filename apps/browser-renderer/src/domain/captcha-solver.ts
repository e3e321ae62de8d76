import { setTimeout as sleep } from 'node:timers/promises';
import got from 'got';
import type { CaptchaKind } from '@wdr/contracts';

/** The provider's task type for each widget kind (proxyless: the provider solves from its own network). */
const TASK_TYPES = {
  recaptcha_v2: 'RecaptchaV2TaskProxyless',
  hcaptcha: 'HCaptchaTaskProxyless',
  turnstile: 'TurnstileTaskProxyless',
} as const satisfies Record<CaptchaKind, string>;

export interface SolveTask {
  kind: CaptchaKind;
  /** The page the widget is on: origin and path, never the query (the tenant's). */
  websiteURL: string;
  websiteKey: string;
}

/**
 * A solve that did not give a token: a provider error, a refusal, or the deadline. `message` is
 * safe to show the tenant (names no provider); `detail` is for the renderer's log.
 */
export class CaptchaSolveError extends Error {
  constructor(
    message: string,
    readonly detail: string = message,
  ) {
    super(message);
    this.name = 'CaptchaSolveError';
  }
}

interface ProviderAnswer {
  errorId?: number;
  errorCode?: string;
  taskId?: number | string;
  status?: 'processing' | 'ready';
  solution?: { gRecaptchaResponse?: string; token?: string };
}

/**
 * A CAPTCHA solving provider speaking the createTask / getTaskResult JSON API the common services
 * share (2Captcha, CapSolver, Anti-Captcha): create a task, then poll its result until it is
 * `ready` or the deadline passes. The client key is sent in the body, as the API wants, and never
 * logged or put in an error.
 */
export class CaptchaSolver {
  private readonly base: string;

  constructor(private readonly opts: { baseUrl: string; clientKey: string; pollMs: number; timeoutMs: number }) {
    this.base = opts.baseUrl.replace(/\/$/, '');
  }

  /** The token, or CaptchaSolveError. `deadline` (epoch ms) bounds the whole solve, polls included. */
  async solve(task: SolveTask, deadline: number): Promise<string> {
    const end = Math.min(deadline, Date.now() + this.opts.timeoutMs);
    const created = await this.call(
      'createTask',
      { clientKey: this.opts.clientKey, task: { type: TASK_TYPES[task.kind], websiteURL: task.websiteURL, websiteKey: task.websiteKey } },
      end,
    );
    if (created.taskId === undefined || created.taskId === null) throw new CaptchaSolveError('the solver answered no task id');
    for (;;) {
      const wait = Math.min(this.opts.pollMs, end - Date.now());
      if (wait <= 0) throw new CaptchaSolveError('the solver did not solve the CAPTCHA in time');
      await sleep(wait);
      const result = await this.call('getTaskResult', { clientKey: this.opts.clientKey, taskId: created.taskId }, end);
      if (result.status === 'ready') {
        const token = result.solution?.gRecaptchaResponse ?? result.solution?.token;
        if (typeof token !== 'string' || token.length === 0) throw new CaptchaSolveError('the solver answered no token');
        return token;
      }
    }
  }

  private async call(method: 'createTask' | 'getTaskResult', body: Record<string, unknown>, end: number): Promise<ProviderAnswer> {
    const left = end - Date.now();
    if (left <= 0) throw new CaptchaSolveError('the solver did not solve the CAPTCHA in time');
    let answer: ProviderAnswer;
    try {
      answer = await got
        .post(`${this.base}/${method}`, {
          json: body,
          timeout: { request: Math.min(20_000, left) },
          retry: { limit: 0 },
          throwHttpErrors: true,
        })
        .json<ProviderAnswer>();
    } catch (err) {
      const e = err as { name?: string; response?: { statusCode?: number } };
      if (e.name === 'TimeoutError') throw new CaptchaSolveError('the solver did not answer in time');
      const detail = e.response?.statusCode ? `the solver answered HTTP ${e.response.statusCode}` : 'the solver could not be reached';
      throw new CaptchaSolveError('the solver could not be reached', detail);
    }
    if (answer.errorId !== undefined && answer.errorId !== 0) {
      // Provider codes are fixed identifiers (ERROR_CAPTCHA_UNSOLVABLE, ...); keep the shape, drop the rest.
      const code = typeof answer.errorCode === 'string' && /^[A-Z0-9_]{1,64}$/.test(answer.errorCode) ? answer.errorCode : 'unknown';
      throw new CaptchaSolveError('the solver could not solve the CAPTCHA', `the solver refused the task (${code})`);
    }
    return answer;
  }
}
