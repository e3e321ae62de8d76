import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { TargetPolicy } from '@wdr/kit/target-policy';
import type { Agent } from 'undici';
import { deliveryAgent } from './delivery-agent.js';

let server: http.Server;
let port: number;
const agents: Agent[] = [];

beforeAll(async () => {
  server = http.createServer((_req, res) => res.writeHead(204).end());
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  port = (server.address() as AddressInfo).port;
});

afterAll(async () => {
  await Promise.all(agents.map((a) => a.destroy()));
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
});

/** One POST through the agent: the status, or the error's code. */
function post(agent: Agent, origin: string): Promise<number | string> {
  return new Promise((resolve) => {
    let status = 0;
    agent.dispatch(
      { origin, path: '/hooks', method: 'POST', body: '{}' },
      {
        onRequestStart: () => undefined,
        onResponseStart: (_c, s) => {
          status = s;
        },
        onResponseData: () => undefined,
        onResponseEnd: () => resolve(status),
        onResponseError: (_c, err) => resolve((err as NodeJS.ErrnoException).code ?? err.message),
      },
    );
  });
}

function agentWith(allow: string[]): Agent {
  const agent = deliveryAgent(new TargetPolicy(allow), { timeoutMs: 2_000, connections: 4 });
  agents.push(agent);
  return agent;
}

describe('the delivery agent', () => {
  it('refuses every new connection to a disallowed address: a literal IP in the connect hook, a name through the policy lookup', async () => {
    const agent = agentWith([]);
    expect(await post(agent, `http://127.0.0.1:${port}`)).toBe('ETARGETBLOCKED');
    expect(await post(agent, `http://localhost:${port}`)).toBe('ETARGETBLOCKED');
    expect(await post(agent, `http://[::ffff:127.0.0.1]:${port}`)).toBe('ETARGETBLOCKED');
  });

  it('connects to an allow-listed address', async () => {
    expect(await post(agentWith(['127.0.0.1']), `http://127.0.0.1:${port}`)).toBe(204);
  });
});
