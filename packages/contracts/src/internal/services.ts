import type { ServiceName } from '../events/catalog.js';
import type { AnyInternalEndpoint } from './endpoint.js';
import { ledgerApi } from './ledger.js';
import { orchestratorApi } from './orchestrator.js';
import { extractorApi } from './recipes.js';
import { renderUploadApi } from './render-upload.js';
import { rendererApi } from './renderer.js';
import { webhooksApi } from './webhooks.js';

/** Every service of the fleet, the gateway first (it serves no internal API, it only calls them). */
export const FLEET_SERVICES = [
  'gateway',
  'billing-ledger',
  'fetch-orchestrator',
  'browser-renderer',
  'recipe-extractor',
  'webhook-dispatcher',
] as const satisfies readonly ServiceName[];

/**
 * The internal API each service serves, by callee: the one table of `/internal/v1/*`. A service's
 * gate admits a request only to a route listed here for it, from a service the route names.
 */
export const INTERNAL_APIS = {
  'billing-ledger': ledgerApi,
  // The render upload (bytes in) is spelled in its own module.
  'fetch-orchestrator': { ...orchestratorApi, ...renderUploadApi },
  'browser-renderer': rendererApi,
  'recipe-extractor': extractorApi,
  'webhook-dispatcher': webhooksApi,
} as const satisfies Partial<Record<ServiceName, Record<string, AnyInternalEndpoint>>>;

export type InternalCallee = keyof typeof INTERNAL_APIS;

/** The endpoints `service` serves (none for the gateway). */
export function internalEndpointsOf(service: ServiceName): AnyInternalEndpoint[] {
  const api = (INTERNAL_APIS as Partial<Record<ServiceName, Record<string, AnyInternalEndpoint>>>)[service];
  return api ? Object.values(api) : [];
}

export function isServiceName(v: unknown): v is ServiceName {
  return typeof v === 'string' && (FLEET_SERVICES as readonly string[]).includes(v);
}
