import { randomUUID } from 'node:crypto';
import { PROXY_NETWORK_TYPES, type ProxyNetworkTypeName } from '@wdr/contracts';
import { isUniqueViolation } from '@wdr/kit/db';
import type { Sealer } from '@wdr/kit/sealing';
import type { PrismaClient, ProxyExit as ProxyExitRow } from '../../generated/prisma/client.js';

/**
 * The proxy exits the platform team configures (`./dev admin proxy-add ...`): upstream HTTP(S)
 * CONNECT proxies, each of one network class, optionally labelled with the country it exits in.
 * The URL with its credentials is sealed at rest and never logged or listed; listings show the
 * label, class, `host:port`, country and state.
 */
export interface ExitInput {
  label: string;
  networkClass: string;
  /** `http://user:pass@host:port` (or https://). */
  url: string;
  country?: string | null;
  /** The operator vouches for the country label: geo requests trust it instead of an IP lookup. */
  countryAuthoritative?: boolean;
}

export interface ExitListing {
  id: string;
  label: string;
  network_class: string;
  endpoint: string;
  has_credentials: boolean;
  country: string | null;
  country_authoritative: boolean;
  enabled: boolean;
}

export class ExitConfigError extends Error {}

const sealContext = (id: string) => `proxy-exit:${id}`;

/** Parse and check a proxy URL; the error never repeats the URL (it may hold a password). */
export function parseProxyUrl(raw: string): URL {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new ExitConfigError('the proxy URL does not parse (expected http://user:pass@host:port)');
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:')
    throw new ExitConfigError('the proxy URL must be http:// or https:// (an HTTP CONNECT proxy)');
  if (!url.hostname) throw new ExitConfigError('the proxy URL needs a host');
  if (url.pathname !== '/' || url.search || url.hash) throw new ExitConfigError('the proxy URL takes no path, query or fragment');
  return url;
}

function checkInput(input: ExitInput): { networkClass: ProxyNetworkTypeName; url: URL; country: string | null } {
  if (!/^[a-z0-9][a-z0-9._-]{0,62}$/i.test(input.label))
    throw new ExitConfigError('the label must be 1-63 letters, digits, dots, dashes or underscores');
  if (!(PROXY_NETWORK_TYPES as readonly string[]).includes(input.networkClass)) {
    throw new ExitConfigError(`the network class must be one of ${PROXY_NETWORK_TYPES.join(', ')}`);
  }
  const country = input.country ? input.country.toUpperCase() : null;
  if (country !== null && !/^[A-Z]{2}$/.test(country)) throw new ExitConfigError('the country must be an ISO 3166-1 alpha-2 code');
  if (input.countryAuthoritative && country === null) throw new ExitConfigError('an authoritative country needs a country');
  return { networkClass: input.networkClass as ProxyNetworkTypeName, url: parseProxyUrl(input.url), country };
}

export function listingOf(row: ProxyExitRow, hasCredentials: boolean): ExitListing {
  return {
    id: row.id,
    label: row.label,
    network_class: row.networkClass,
    endpoint: row.endpoint,
    has_credentials: hasCredentials,
    country: row.country,
    country_authoritative: row.countryAuthoritative,
    enabled: row.enabled,
  };
}

export async function addExit(db: PrismaClient, sealer: Sealer, input: ExitInput): Promise<ExitListing> {
  const { networkClass, url, country } = checkInput(input);
  const id = randomUUID();
  try {
    const row = await db.proxyExit.create({
      data: {
        id,
        label: input.label,
        networkClass,
        endpoint: `${url.hostname}:${url.port || (url.protocol === 'https:' ? '443' : '80')}`,
        urlSealed: sealer.seal(url.toString(), sealContext(id)),
        country,
        countryAuthoritative: input.countryAuthoritative ?? false,
      },
    });
    return listingOf(row, Boolean(url.username || url.password));
  } catch (err) {
    if (isUniqueViolation(err)) throw new ExitConfigError(`an exit labelled ${input.label} already exists`);
    throw err;
  }
}

export async function listExits(db: PrismaClient, sealer: Sealer): Promise<ExitListing[]> {
  const rows = await db.proxyExit.findMany({ orderBy: [{ networkClass: 'asc' }, { label: 'asc' }] });
  return rows.map((r) => {
    const url = new URL(openExitUrl(sealer, r));
    return listingOf(r, Boolean(url.username || url.password));
  });
}

export async function setExitEnabled(db: PrismaClient, label: string, enabled: boolean): Promise<boolean> {
  const { count } = await db.proxyExit.updateMany({ where: { label }, data: { enabled, updatedAt: new Date() } });
  return count === 1;
}

export async function removeExit(db: PrismaClient, label: string): Promise<boolean> {
  const { count } = await db.proxyExit.deleteMany({ where: { label } });
  return count === 1;
}

export function openExitUrl(sealer: Sealer, row: Pick<ProxyExitRow, 'id' | 'urlSealed'>): string {
  return sealer.open(row.urlSealed, sealContext(row.id));
}
