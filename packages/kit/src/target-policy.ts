import { lookup as dnsLookup, type LookupAddress, type LookupOptions } from 'node:dns';
import { isIP } from 'node:net';
import ipaddr from 'ipaddr.js';

/**
 * Targets are attacker-chosen. Only globally routable unicast addresses are allowed, unless
 * explicitly allow-listed (tests and the local demo allow their 127.0.0.1 fixture sites). The
 * classification is ipaddr.js's table of special-purpose ranges (IANA registries), so private,
 * loopback, link-local (cloud metadata), CGNAT, benchmarking, reserved, multicast, broadcast and
 * unspecified IPv4, and their IPv6 counterparts (unique local, link-local, loopback, multicast,
 * discard), are refused, and so are the IPv6 forms that can carry an IPv4 address to a translator:
 * NAT64 (64:ff9b::/96), 6to4 (2002::/16) and Teredo. IPv4-mapped and IPv4-compatible forms
 * (::ffff:a.b.c.d, ::a.b.c.d) are judged as the IPv4 address they carry. The allow-list matches
 * an address as written and, for an allowed IPv4 address, its IPv4-mapped form (the same address
 * as a dual-stack socket writes it); never the IPv4-compatible or translator forms, which are other
 * addresses: an allow-list of 127.0.0.1 does not open ::127.0.0.1. The check runs on the
 * resolved IP of every connection, so a public name that resolves to a private address, or a
 * redirect to one, is refused too.
 */
function embeddedIPv4(address: string): { v4: string; mapped: boolean } | undefined {
  if (isIP(address) !== 6 || !ipaddr.isValid(address)) return undefined;
  // In WHATWG's canonical form (hex, no dotted quad): ipaddr.js parses a dotted ::a.b.c.d as the
  // mapped ::ffff:a.b.c.d, which would let the allow-list match an IPv4-compatible address.
  let canonical = address;
  try {
    canonical = new URL(`http://[${address}]/`).hostname.slice(1, -1);
  } catch {
    // A zone id (fe80::1%eth0) is not URL syntax; such an address has no embedded IPv4 anyway.
  }
  if (!ipaddr.isValid(canonical)) return undefined;
  const v6 = ipaddr.IPv6.parse(canonical);
  if (v6.isIPv4MappedAddress()) return { v4: v6.toIPv4Address().toString(), mapped: true };
  // IPv4-compatible (::a.b.c.d, deprecated): the first 96 bits are zero (but not :: or ::1).
  if (v6.parts.slice(0, 6).every((p) => p === 0) && (v6.parts[6] !== 0 || v6.parts[7]! > 1)) {
    return { v4: ipaddr.fromByteArray(v6.toByteArray().slice(12)).toString(), mapped: false };
  }
  return undefined;
}

function routable(address: string): boolean {
  return ipaddr.isValid(address) && ipaddr.parse(address).range() === 'unicast';
}

export class TargetPolicy {
  private readonly allow: Set<string>;

  constructor(allowlist: string[]) {
    this.allow = new Set(allowlist.map((a) => a.toLowerCase()));
  }

  addressAllowed(address: string): boolean {
    if (this.allow.has(address.toLowerCase())) return true;
    if (isIP(address) === 0) return false;
    const embedded = embeddedIPv4(address);
    if (embedded?.mapped) return this.addressAllowed(embedded.v4);
    if (embedded) return routable(embedded.v4);
    return routable(address);
  }

  /** Scheme and literal-IP checks that need no DNS. */
  checkUrl(url: URL): string | undefined {
    if (url.protocol !== 'http:' && url.protocol !== 'https:') return 'only http and https targets are allowed';
    if (url.username || url.password) return 'credentials in the URL are not allowed';
    const host = url.hostname.replace(/^\[|\]$/g, '');
    if (isIP(host) && !this.addressAllowed(host)) return 'the target address is not allowed';
    if (!isIP(host) && (host === 'localhost' || host.endsWith('.localhost')) && !this.allow.has(host))
      return 'the target address is not allowed';
    return undefined;
  }

  /**
   * The URL checks plus the resolved addresses, for a connection this process does not open itself
   * (a proxy exit resolves the name): undefined when allowed, else why. A name that does not
   * resolve here is left to the exit to fail.
   */
  async checkResolved(url: URL): Promise<string | undefined> {
    const problem = this.checkUrl(url);
    if (problem) return problem;
    const host = url.hostname.replace(/^\[|\]$/g, '');
    return new Promise((resolve) => {
      this.lookup(host, { all: true }, (err) => {
        resolve(err?.code === 'ETARGETBLOCKED' ? 'the target address is not allowed' : undefined);
      });
    });
  }

  /** A dns.lookup replacement for got that refuses disallowed resolved addresses. */
  readonly lookup = (
    hostname: string,
    options: LookupOptions,
    callback: (err: NodeJS.ErrnoException | null, address: string | LookupAddress[], family?: number) => void,
  ): void => {
    dnsLookup(hostname, { ...options, all: true }, (err, addresses) => {
      if (err) return callback(err, []);
      const ok = (addresses as LookupAddress[]).filter((a) => this.addressAllowed(a.address));
      if (ok.length === 0) {
        const e: NodeJS.ErrnoException = new Error('the target address is not allowed');
        e.code = 'ETARGETBLOCKED';
        return callback(e, []);
      }
      if (options.all) return callback(null, ok);
      callback(null, ok[0]!.address, ok[0]!.family);
    });
  };
}
