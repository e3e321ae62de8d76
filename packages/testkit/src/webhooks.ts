import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';

/** A webhook delivery as a receiver reads it: the Standard Webhooks body `{type, timestamp, data}`. */
export interface ReceivedWebhook {
  type: string;
  timestamp: string;
  data: Record<string, unknown>;
}

export interface WebhookReceiver {
  /** `http://127.0.0.1:<port>`: append any path. */
  url: string;
  /** Every delivery's body, parsed, in the order they arrived. */
  bodies: ReceivedWebhook[];
  close(): Promise<void>;
}

/** A local receiver for the fleet's webhook deliveries: answers every POST 204 and keeps its body. */
export async function startWebhookReceiver(): Promise<WebhookReceiver> {
  const bodies: ReceivedWebhook[] = [];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      bodies.push(JSON.parse(Buffer.concat(chunks).toString('utf8')) as ReceivedWebhook);
      res.writeHead(204).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    bodies,
    close: async () => {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}

/**
 * A tenant's workspace, one project and that project's first environment, made through the gateway's
 * cabinet API as a tenant makes them: where webhook endpoints live
 * (`POST /api/v1/client/browser/projects/{project}/environments/{environment}/webhooks`).
 */
export async function cabinetEnvironment(
  gatewayUrl: string,
  cabinetToken: string,
  name: string,
): Promise<{ projectId: string; environmentId: string }> {
  const base = `${gatewayUrl}/api/v1/client/browser`;
  const headers = { authorization: `Bearer ${cabinetToken}`, 'content-type': 'application/json' };
  const post = async (path: string, body: unknown, expected: number) => {
    const res = await fetch(`${base}${path}`, { method: 'POST', headers, body: JSON.stringify(body) });
    if (res.status !== expected) throw new Error(`POST ${path} answered ${res.status}: ${await res.text()}`);
    return res;
  };
  const workspace = (await (await post('/workspaces', { name, owner_user_id: 1 }, 201)).json()) as { id: string };
  const project = await post(`/workspaces/${workspace.id}/projects`, { name, slug: name.toLowerCase().replace(/[^a-z0-9]+/g, '-') }, 204);
  const projectId = project.headers.get('location')!.split('/').pop()!;
  const read = await fetch(`${base}/projects/${projectId}`, { headers });
  const environments = ((await read.json()) as { environments: { id: string }[] }).environments;
  return { projectId, environmentId: environments[0]!.id };
}
