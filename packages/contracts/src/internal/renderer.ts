import { z } from 'zod';
import { endpoint } from './endpoint.js';
import type { DebugArtifactBody } from './render.js';

/** The internal HTTP API of browser-renderer, called by the gateway. */
export const rendererApi = {
  /** One stored debug artifact of a failed request, for its tenant only. */
  debugArtifact: endpoint<DebugArtifactBody>()({
    method: 'GET',
    callers: ['gateway'],
    route: '/internal/v1/debug-artifacts/:requestId/:name',
    params: { requestId: z.uuid(), name: z.string().regex(/^[a-z0-9][a-z0-9._-]{0,63}$/) },
    query: z.object({ tenant_id: z.uuid() }),
  }),
} as const;
