import { createRequire } from 'node:module';
import { isIP } from 'node:net';
import got from 'got';
import { Reader, type Response as MmdbRecord } from 'maxmind';
import { readFileSync } from 'node:fs';
import { proxyAgentsFor } from './transport.js';
import type { ProxyExit } from './pool.js';

/**
 * Which country an exit really leaves in. An exit whose country the operator marked authoritative
 * is taken at its label. Otherwise the route itself is asked: an IP echo endpoint (GEO_ECHO_URL)
 * is fetched through the exit, and the address it saw is looked up in an offline country database
 * (the GeoLite2 country file shipped as an npm package, or GEO_DATABASE_PATH). Nothing here
 * touches the tenant's target.
 */
export type GeoAnswer = { ok: true; country: string; how: 'label' | 'lookup' } | { ok: false; why: string; exitFailed?: boolean };

type CountryRecord = MmdbRecord & { country_code?: string; country?: { iso_code?: string } };

export class GeoVerifier {
  private readonly reader: Reader<CountryRecord> | undefined;

  constructor(
    private readonly opts: {
      /** Answers the caller's public IP, as text or JSON `{ "ip": ... }`. Unset: only authoritative labels verify. */
      echoUrl: string | undefined;
      databasePath?: string | undefined;
      timeoutMs?: number;
    },
  ) {
    if (opts.echoUrl) this.reader = new Reader<CountryRecord>(readFileSync(opts.databasePath ?? defaultDatabasePath()));
  }

  async countryOf(exit: ProxyExit): Promise<GeoAnswer> {
    if (exit.countryAuthoritative && exit.country) return { ok: true, country: exit.country, how: 'label' };
    if (!this.opts.echoUrl || !this.reader)
      return { ok: false, why: 'the exit has no authoritative country and no IP echo endpoint is configured' };
    let body: string;
    try {
      const agent = proxyAgentsFor(exit.url);
      body = await got(this.opts.echoUrl, { agent, timeout: { request: this.opts.timeoutMs ?? 5_000 }, retry: { limit: 0 } }).text();
    } catch {
      return { ok: false, why: 'the IP echo endpoint could not be reached through the exit', exitFailed: true };
    }
    const ip = ipOf(body);
    if (!ip) return { ok: false, why: 'the IP echo endpoint answered no address' };
    const record = this.reader.get(ip);
    const country = record?.country_code ?? record?.country?.iso_code;
    if (!country) return { ok: false, why: 'the exit address is not in the country database' };
    return { ok: true, country: country.toUpperCase(), how: 'lookup' };
  }
}

function ipOf(body: string): string | undefined {
  const text = body.trim();
  if (isIP(text)) return text;
  try {
    const parsed = JSON.parse(text) as { ip?: unknown; origin?: unknown };
    const ip = typeof parsed.ip === 'string' ? parsed.ip : typeof parsed.origin === 'string' ? parsed.origin : undefined;
    return ip && isIP(ip) ? ip : undefined;
  } catch {
    return undefined;
  }
}

/** The GeoLite2 country database of @ip-location-db/geolite2-country-mmdb (IPv4 and IPv6). */
function defaultDatabasePath(): string {
  const require = createRequire(import.meta.url);
  const pkg = require.resolve('@ip-location-db/geolite2-country-mmdb/package.json');
  return pkg.replace(/package\.json$/, 'geolite2-country.mmdb');
}
