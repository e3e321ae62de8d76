import { PublicError } from '@wdr/kit/errors';
import type { Prisma } from '../generated/prisma/client.js';

export type NetworkClass = 'datacenter' | 'residential' | 'premium';
export type Tariff = 'http' | 'browser';

const RESIDENTIAL_MODES = new Set(['residential', 'residential_browser']);
const BROWSER_MODES = new Set(['browser', 'residential_browser']);

/**
 * Which tariff a route mode is priced at (pricing_version 2). `auto` is billed at the stage it
 * ended in; before execution it is reserved at its worst case, the browser tariff.
 */
export function tariffOf(routeMode: string, stage: 'reserve' | 'settle'): Tariff {
  if (BROWSER_MODES.has(routeMode)) return 'browser';
  if (routeMode === 'auto' && stage === 'reserve') return 'browser';
  return 'http';
}

/** The network class the tariff is taken from: residential modes are residential; otherwise the selected proxy_type. */
export function networkClassOf(routeMode: string, proxyType: string | null): NetworkClass {
  if (RESIDENTIAL_MODES.has(routeMode)) return 'residential';
  return (proxyType as NetworkClass | null) ?? 'datacenter';
}

export async function priceOf(
  tx: Prisma.TransactionClient,
  pricingVersion: number,
  networkClass: NetworkClass,
  tariff: Tariff,
): Promise<number> {
  const row = await tx.price.findUnique({
    where: { pricingVersion_networkClass_tariff: { pricingVersion, networkClass, tariff } },
  });
  if (!row) {
    throw new PublicError('VALIDATION_FAILED', `The ${networkClass} network is not priced for this plan.`, {
      details: [{ field: 'proxy_type', issue: `${networkClass} is not available` }],
    });
  }
  return row.tokens;
}
