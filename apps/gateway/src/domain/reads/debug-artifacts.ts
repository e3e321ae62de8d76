import { PublicError } from '@wdr/kit/errors';
import { DebugArtifactBody, rendererApi } from '@wdr/contracts';
import { callInternal } from '@wdr/kit/internal-call';
import type { GatewayDeps } from '../../deps.js';
import { requireUuid } from './request-reads.js';

/** An artifact (a screenshot or a report of at most a few MB), held whole. */
export interface DebugArtifactBytes {
  contentType: string;
  body: Buffer;
}

const NAME_RE = /^[a-z0-9][a-z0-9._-]{0,63}$/;

/**
 * One debug artifact of the tenant's failed request. browser-renderer keeps them (sealed, for
 * their retention) and checks the tenant itself: another tenant's artifact is a 404 like a
 * missing one.
 */
export async function readDebugArtifact(
  deps: Pick<GatewayDeps, 'renderer'>,
  tenantId: string,
  id: string,
  name: string,
): Promise<DebugArtifactBytes> {
  const requestId = requireUuid(id);
  if (!NAME_RE.test(name)) {
    throw new PublicError('VALIDATION_FAILED', 'The artifact name is not valid.', {
      details: [{ field: 'name', issue: 'must be an artifact name such as screenshot.png' }],
    });
  }
  const raw: unknown = await callInternal(deps.renderer, rendererApi.debugArtifact, {
    params: { requestId, name },
    query: { tenant_id: tenantId },
    timeoutMs: 15_000,
  });
  const artifact = DebugArtifactBody.parse(raw);
  return { contentType: artifact.content_type, body: Buffer.from(artifact.body_base64, 'base64') };
}
