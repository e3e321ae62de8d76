import type { WebhookDisabledReason, WebhookEndpointView, WebhookEventType } from '@wdr/contracts';
import { PublicError } from '@wdr/kit/errors';
import type { Prisma, PrismaClient, WebhookEndpoint } from '../generated/prisma/client.js';

export function endpointView(e: WebhookEndpoint): WebhookEndpointView {
  return {
    id: e.id,
    project_id: e.projectId,
    environment_id: e.environmentId,
    url_origin: e.urlOrigin,
    event_types: e.eventTypes as WebhookEventType[],
    description: e.description,
    status: e.status as 'enabled' | 'disabled',
    disabled_reason: e.disabledReason as WebhookDisabledReason | null,
    disabled_at: e.disabledAt?.toISOString() ?? null,
    created_at: e.createdAt.toISOString(),
    updated_at: e.updatedAt.toISOString(),
  };
}

/** The tenant's endpoint, or NOT_FOUND (a foreign id looks exactly like a missing one). */
export async function endpointOf(
  db: PrismaClient | Prisma.TransactionClient,
  tenantId: string,
  endpointId: string,
): Promise<WebhookEndpoint> {
  const e = await db.webhookEndpoint.findUnique({ where: { id: endpointId } });
  if (!e || e.tenantId !== tenantId) throw new PublicError('NOT_FOUND', 'No such webhook endpoint.');
  return e;
}
