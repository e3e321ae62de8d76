import { lookup as dnsLookup, type LookupAddress, type LookupOptions } from 'node:dns';
import { BlockList, isIP } from 'node:net';

/**
 * Targets are attacker-chosen. Private, loopback, link-local, CGNAT, multicast and metadata
 * addresses are refused unless explicitly allow-listed (tests and the local demo allow their
 * 127.0.0.1 fixture sites). The check runs on the resolved IP of every connection, so a public
 * name that resolves to a private address, or a redirect to one, is refused too.
 */
const blocked = new BlockList();
for (const [net, prefix] of [
  ['0.0.0.0', 8],
  ['10.0.0.0', 8],
  ['100.64.0.0', 10],
  ['127.0.0.0', 8],
  ['169.254.0.0', 16],
  ['172.16.0.0', 12],
  ['192.0.0.0', 24],
  ['192.168.0.0', 16],
  ['198.18.0.0', 15],
  ['224.0.0.0', 4],
  ['240.0.0.0', 4],
] as const) {
  blocked.addSubnet(net, prefix, 'ipv4');
}
for (const [net, prefix] of [
  ['::', 128],
  ['::1', 128],
  ['fc00::', 7],
  ['fe80::', 10],
  ['ff00::', 8],
] as const) {
  blocked.addSubnet(net, prefix, 'ipv6');
}

export class TargetPolicy {
  private readonly allow: Set<string>;

  constructor(allowlist: string[]) {
    this.allow = new Set(allowlist.map((a) => a.toLowerCase()));
  }

  addressAllowed(address: string): boolean {
    if (this.allow.has(address.toLowerCase())) return true;
    // IPv4-mapped IPv6 (::ffff:10.0.0.1) is judged as the IPv4 address it carries.
    const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address);
    if (mapped) return this.addressAllowed(mapped[1]!);
    const family = isIP(address);
    if (family === 0) return false;
    return !blocked.check(address, family === 4 ? 'ipv4' : 'ipv6');
  }

  /** Scheme and literal-IP checks that need no DNS. */
  checkUrl(url: URL): string | undefined {
    if (url.protocol !== 'http:' && url.protocol !== 'https:') return 'only http and https targets are allowed';
    if (url.username || url.password) return 'credentials in the URL are not allowed';
    const host = url.hostname.replace(/^\[|\]$/g, '');
    if (isIP(host) && !this.addressAllowed(host)) return 'the target address is not allowed';
    if (!isIP(host) && (host === 'localhost' || host.endsWith('.localhost')) && !this.allow.has(host)) return 'the target address is not allowed';
    return undefined;
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
