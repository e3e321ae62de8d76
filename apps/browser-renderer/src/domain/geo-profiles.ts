import { createRequire } from 'node:module';
import ct from 'countries-and-timezones';

/**
 * What a browser context looks like from a country: an IANA time zone of it, its default locale
 * and a point inside it. Applied when the route carries a verified exit country (the proxy layer
 * fills it). Built from maintained data, for every country those packages know (issue 23):
 *   - time zones by country: `countries-and-timezones` (the tz database's zone.tab);
 *   - default locale and coordinates (the country's centre): `country-locale-map`.
 * A country neither knows gets no emulation (reported as `country: null` in result_meta), never a
 * wrong one.
 */
export interface GeoProfile {
  timezone: string;
  /** BCP 47, e.g. `de-DE`. */
  locale: string | null;
  /** The country's centre; null for the few territories the data gives no coordinates (no geolocation then). */
  position: { latitude: number; longitude: number } | null;
}

interface LocaleCountry {
  default_locale?: string;
  capital?: string;
  latitude?: number | string;
  longitude?: number | string;
}
const require = createRequire(import.meta.url);
type LocaleMap = { getCountryByAlpha2: (alpha2: string) => LocaleCountry | undefined };
/**
 * Loaded on the first render with an exit country, not at boot: the package brings fuzzball and
 * lodash (about 15 MB resident), which a renderer whose routes carry no country never needs (issue 24).
 */
let clm: LocaleMap | undefined;
const localeMap = (): LocaleMap => (clm ??= require('country-locale-map') as LocaleMap);

/**
 * The tz database has no "main zone" per country. Countries spanning several UTC offsets whose
 * capital's zone cannot be found by name (below) name it here: the zone of the capital.
 */
const CAPITAL_ZONES: Readonly<Record<string, string>> = {
  US: 'America/New_York',
  CA: 'America/Toronto',
  BR: 'America/Sao_Paulo',
};

const ALL_ZONES = ct.getAllTimezones({ deprecated: true });
/** Area/Location names only (not the backward links such as `US/Eastern` or `EST5EDT`). */
const LOCATION = /^(Africa|America|Antarctica|Arctic|Asia|Atlantic|Australia|Europe|Indian|Pacific)\//;
/** Links of each canonical zone (`Australia/Canberra` -> `Australia/Sydney`). */
const LINKS = new Map<string, string[]>();
for (const z of Object.values(ALL_ZONES)) {
  if (z.aliasOf) LINKS.set(z.aliasOf, [...(LINKS.get(z.aliasOf) ?? []), z.name]);
}
const cityOf = (zone: string) => (zone.split('/').at(-1) ?? '').replace(/_/g, ' ').toLowerCase();

/**
 * The zone of a country. Its own zones are the tz database's locations of that country, links
 * included (the database merged zones of identical history, so Iceland's `Atlantic/Reykjavik` is
 * a link to `Africa/Abidjan`: a country is shown its own name). Then: the capital zone named above;
 * else its only own zone; else the one named after its capital; else, among the zones of the
 * offset most of its zones share, the one with the most links (the long-standing main zone
 * collects them), else the first. Chromium knows links and canonical names alike.
 */
export function timezoneOf(country: string, capital: string | undefined): string | undefined {
  const own = Object.values(ALL_ZONES).filter((z) => LOCATION.test(z.name) && z.countries[0] === country);
  const zones =
    own.length > 0 ? own : Object.values(ALL_ZONES).filter((z) => LOCATION.test(z.name) && z.countries.includes(country as never));
  if (zones.length === 0) return undefined;
  const named = CAPITAL_ZONES[country];
  if (named && zones.some((z) => z.name === named)) return named;
  if (zones.length === 1) return zones[0]!.name;
  const cap = (capital ?? '').toLowerCase();
  const byCapital = zones.find((z) => cityOf(z.name) === cap);
  if (byCapital) return byCapital.name;
  const offsets = new Map<number, number>();
  for (const z of zones) offsets.set(z.utcOffset, (offsets.get(z.utcOffset) ?? 0) + 1);
  const common = Math.max(...offsets.values());
  let best = zones[0]!;
  let links = -1;
  for (const z of zones) {
    if (offsets.get(z.utcOffset) !== common) continue;
    const n = (LINKS.get(z.name) ?? []).length + (z.aliasOf ? 0 : 1);
    if (n > links) [best, links] = [z, n];
  }
  return best.name;
}

const cache = new Map<string, GeoProfile | undefined>();

export function geoProfileOf(country: string | null): GeoProfile | undefined {
  if (!country) return undefined;
  const cc = country.toUpperCase();
  if (cache.has(cc)) return cache.get(cc);
  const info = localeMap().getCountryByAlpha2(cc);
  const timezone = timezoneOf(cc, info?.capital);
  const latitude = Number(info?.latitude ?? NaN);
  const longitude = Number(info?.longitude ?? NaN);
  const profile: GeoProfile | undefined = timezone
    ? {
        timezone,
        locale: info?.default_locale ? info.default_locale.replace(/_/g, '-') : null,
        position: Number.isFinite(latitude) && Number.isFinite(longitude) ? { latitude, longitude } : null,
      }
    : undefined;
  cache.set(cc, profile);
  return profile;
}
