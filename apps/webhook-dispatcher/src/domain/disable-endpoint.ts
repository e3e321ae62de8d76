import { randomUUID } from 'node:crypto';
import type { WebhookDisabledReason } from '@wdr/contracts';
import type { RawSql } from '@wdr/kit/db';
import { recordMessages } from './fan-out.js';

/**
 * Disables an enabled endpoint and says why (`manual`, `gone`: it answered 410, `sustained_failure`:
 * a message exhausted its schedule with no success from the endpoint meanwhile). Its pending
 * messages stay, unsent, and resume when it is enabled again. The endpoints that subscribe to
 * `webhook.endpoint_disabled` and see this endpoint's scope get that event in the same transaction:
 * those of its project and environment, and the tenant-wide ones (another project's never do).
 * Returns false when it was not enabled.
 */
export async function disableEndpoint(tx: RawSql, endpointId: string, reason: WebhookDisabledReason): Promise<boolean> {
  const rows = await tx.$queryRawUnsafe<
    { tenant_id: string; url_origin: string; disabled_at: Date; project_id: string | null; environment_id: string | null }[]
  >(
    `UPDATE webhook_endpoints SET status = 'disabled', disabled_reason = $2, disabled_at = now(), updated_at = now()
     WHERE id = $1::uuid AND status = 'enabled'
     RETURNING tenant_id::text, url_origin, disabled_at, project_id, environment_id`,
    endpointId,
    reason,
  );
  const row = rows[0];
  if (!row) return false;
  await recordMessages(tx, {
    tenantId: row.tenant_id,
    eventId: randomUUID(),
    type: 'webhook.endpoint_disabled',
    occurredAt: row.disabled_at.toISOString(),
    data: { endpoint_id: endpointId, reason, url_origin: row.url_origin },
    scope: row.project_id && row.environment_id ? { projectId: row.project_id, environmentId: row.environment_id } : null,
  });
  return true;
}
