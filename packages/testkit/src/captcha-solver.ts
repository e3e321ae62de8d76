import { randomBytes } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/** A site key the solver gives up on (ERROR_CAPTCHA_UNSOLVABLE): for the failure path. */
export const UNSOLVABLE_SITEKEY = 'unsolvable-sitekey';

const TASK_TYPES = new Set(['RecaptchaV2TaskProxyless', 'HCaptchaTaskProxyless', 'TurnstileTaskProxyless']);

export interface CaptchaSolverServer {
  /** Base URL of the createTask / getTaskResult API (the renderer's CAPTCHA_SOLVER_URL). */
  url: string;
  /** The client key it accepts (CAPTCHA_SOLVER_KEY). */
  clientKey: string;
  /** POST here `{response}` (or `secret=...&response=...` form): `{success}` like siteverify; each token once. */
  verifyUrl: string;
  /** Tasks created, by task type. */
  tasks: Map<string, number>;
  /** Tasks as the solver received them (type, websiteURL, websiteKey), in order. */
  received: { type: string; websiteURL: string; websiteKey: string }[];
  close: () => Promise<void>;
}

interface Task {
  type: string;
  websiteKey: string;
  polls: number;
  token: string;
}

/**
 * A local CAPTCHA solving provider on 127.0.0.1 speaking the createTask / getTaskResult JSON API
 * of the common services: a task is `processing` for its first poll and `ready` on the next, with
 * a token this server minted; a wrong client key, an unknown task type or UNSOLVABLE_SITEKEY is an
 * error answer (`errorId: 1`). Its verify endpoint plays the widget vendor's siteverify for the
 * fixture site: a token is valid once, and only if this server minted it.
 */
export async function startCaptchaSolver(opts: { clientKey?: string } = {}): Promise<CaptchaSolverServer> {
  const clientKey = opts.clientKey ?? `test-key-${randomBytes(6).toString('hex')}`;
  const tasks = new Map<string, Task>();
  const minted = new Set<string>();
  const counts = new Map<string, number>();
  const received: CaptchaSolverServer['received'] = [];
  let nextTask = 1000;

  const json = (res: ServerResponse, body: unknown, status = 200) => {
    res.writeHead(status, { 'content-type': 'application/json' });
    res.end(JSON.stringify(body));
  };
  const error = (res: ServerResponse, errorCode: string) =>
    json(res, { errorId: 1, errorCode, errorDescription: errorCode.toLowerCase().replace(/_/g, ' ') });

  const handle = async (req: IncomingMessage, res: ServerResponse) => {
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    const raw = Buffer.concat(chunks).toString('utf8');
    const path = new URL(req.url ?? '/', 'http://solver').pathname;
    if (req.method !== 'POST') return json(res, { error: 'method' }, 405);
    if (path === '/siteverify') {
      const form = (req.headers['content-type'] ?? '').includes('json')
        ? (JSON.parse(raw || '{}') as Record<string, string>)
        : Object.fromEntries(new URLSearchParams(raw));
      const token = form['response'] ?? '';
      const success = minted.delete(token);
      return json(res, { success, ...(success ? {} : { 'error-codes': ['invalid-input-response'] }) });
    }
    let body: Record<string, unknown>;
    try {
      body = JSON.parse(raw) as Record<string, unknown>;
    } catch {
      return error(res, 'ERROR_BAD_REQUEST');
    }
    if (body['clientKey'] !== clientKey) return error(res, 'ERROR_KEY_DOES_NOT_EXIST');
    if (path === '/createTask') {
      const task = (body['task'] ?? {}) as Record<string, unknown>;
      const type = String(task['type'] ?? '');
      if (!TASK_TYPES.has(type)) return error(res, 'ERROR_TASK_NOT_SUPPORTED');
      const websiteKey = String(task['websiteKey'] ?? '');
      const websiteURL = String(task['websiteURL'] ?? '');
      if (!websiteKey || !websiteURL) return error(res, 'ERROR_BAD_PARAMETERS');
      counts.set(type, (counts.get(type) ?? 0) + 1);
      received.push({ type, websiteURL, websiteKey });
      const taskId = nextTask++;
      tasks.set(String(taskId), { type, websiteKey, polls: 0, token: `tok-${randomBytes(24).toString('base64url')}` });
      return json(res, { errorId: 0, taskId });
    }
    if (path === '/getTaskResult') {
      const task = tasks.get(String(body['taskId']));
      if (!task) return error(res, 'ERROR_NO_SUCH_CAPCHA_ID');
      if (task.websiteKey === UNSOLVABLE_SITEKEY) return error(res, 'ERROR_CAPTCHA_UNSOLVABLE');
      task.polls++;
      if (task.polls === 1) return json(res, { errorId: 0, status: 'processing' });
      minted.add(task.token);
      tasks.delete(String(body['taskId']));
      const solution = task.type === 'TurnstileTaskProxyless' ? { token: task.token } : { gRecaptchaResponse: task.token };
      return json(res, { errorId: 0, status: 'ready', solution });
    }
    return json(res, { error: 'not found' }, 404);
  };

  const server = createServer((req, res) => {
    handle(req, res).catch(() => {
      if (!res.headersSent) json(res, { errorId: 1, errorCode: 'ERROR_INTERNAL' }, 500);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  const url = `http://127.0.0.1:${port}`;
  return {
    url,
    clientKey,
    verifyUrl: `${url}/siteverify`,
    tasks: counts,
    received,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
