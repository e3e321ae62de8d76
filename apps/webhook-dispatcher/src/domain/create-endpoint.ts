import { randomUUID } from 'node:crypto';
import type { WebhookEndpointCreateBody, WebhookEndpointWithSecret } from '@wdr/contracts';
import { sealedSecretAad, sealedUrlAad, type DispatcherDeps } from '../deps.js';
import { checkedEndpointUrl } from './endpoint-url.js';
import { endpointView } from './endpoint-views.js';
import { generateSecret } from './signing.js';

/** Creates an endpoint (URL checked against the target policy) with a fresh `whsec_` secret, answered this once. */
export async function createEndpoint(deps: Pick<DispatcherDeps, 'db' | 'sealer' | 'policy'>, cmd: WebhookEndpointCreateBody): Promise<WebhookEndpointWithSecret> {
  const url = await checkedEndpointUrl(deps.policy, cmd.url);
  const id = randomUUID();
  const secret = generateSecret();
  const row = await deps.db.webhookEndpoint.create({
    data: {
      id,
      tenantId: cmd.tenant_id,
      projectId: cmd.project_id,
      environmentId: cmd.environment_id,
      urlSealed: deps.sealer.seal(url.toString(), sealedUrlAad(id)),
      urlOrigin: url.origin,
      eventTypes: [...new Set(cmd.event_types)],
      description: cmd.description,
      secretSealed: deps.sealer.seal(secret, sealedSecretAad(id)),
    },
  });
  return { endpoint: endpointView(row), secret };
}
