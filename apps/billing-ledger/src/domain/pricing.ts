import type { RawSql } from '@wdr/kit/db';
import { priceBookOf, type PriceBook, type PriceRow, type Tariff } from '@wdr/kit/pricing';

/** The pure pricing lives in @wdr/kit/pricing (fetch-orchestrator prices leased admissions with it). */
export * from '@wdr/kit/pricing';

/**
 * The rows of a published pricing version never change (new prices are a new version), so each
 * process reads a version once. Plan overrides are read with every transaction.
 */
const versionCache = new Map<number, Promise<PriceRow[]>>();

async function versionPrices(tx: RawSql, pricingVersion: number): Promise<PriceRow[]> {
  let rows = versionCache.get(pricingVersion);
  if (!rows) {
    rows = tx.$queryRawUnsafe<PriceRow[]>(
      'SELECT network_class, tariff, tokens, false AS override FROM prices WHERE pricing_version = $1',
      pricingVersion,
    );
    versionCache.set(pricingVersion, rows);
    rows.catch(() => versionCache.delete(pricingVersion));
  }
  return rows;
}

export async function loadPriceBook(tx: RawSql, planId: string, pricingVersion: number): Promise<PriceBook> {
  const overrides = await tx.$queryRawUnsafe<PriceRow[]>(
    'SELECT network_class, tariff, tokens, true AS override FROM plan_prices WHERE plan_id = $1 AND pricing_version = $2',
    planId,
    pricingVersion,
  );
  return priceBookOf(planId, pricingVersion, [...(await versionPrices(tx, pricingVersion)), ...overrides]);
}

/** A price book from a version's rows (cached) and overrides already read with the account. */
export async function priceBookWith(
  tx: RawSql,
  planId: string,
  pricingVersion: number,
  overrides: [string, Tariff, number][],
): Promise<PriceBook> {
  const rows = overrides.map(([network_class, tariff, tokens]) => ({ network_class, tariff, tokens, override: true }));
  return priceBookOf(planId, pricingVersion, [...(await versionPrices(tx, pricingVersion)), ...rows]);
}
