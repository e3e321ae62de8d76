import { type LookupAddress, type LookupOptions } from 'node:dns';
import { lookup as systemLookup, Resolver } from 'node:dns/promises';
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

/** Resolves a name to all its addresses; rejects (with the resolver's code) when it cannot. */
export type NameResolver = (hostname: string) => Promise<LookupAddress[]>;

export interface TargetPolicyOptions {
  /**
   * DNS servers (`ip` or `ip:port`) that resolve target names, asked directly (A and AAAA); empty
   * or absent: the system resolver (getaddrinfo, /etc/hosts included). Tests point it at a server
   * they control (testkit's startDnsServer).
   */
  dnsServers?: string[];
  /** Replaces the resolver outright (unit tests of the decision). */
  resolver?: NameResolver;
}

/**
 * The decision on one name, made once: `allowed` with the addresses that passed (connect to these,
 * never resolve again) and, when the name also had addresses the policy refuses, how many were
 * withheld; or `refused` because the name or every address it has is not allowed (`blocked`) or
 * because it did not resolve (`unresolvable`: fail closed, nothing is tried).
 */
export type TargetDecision =
  | { verdict: 'allowed'; addresses: LookupAddress[]; withheld?: number }
  | { verdict: 'refused'; reason: 'blocked' | 'unresolvable'; code: string };

/**
 * Whether a connection that a proxy exit opens (the exit resolves the name, in its own network)
 * must be refused, given the decision made here: a literal internal address, or a name with any
 * internal address here (all of them, or some beside public ones: the exit may pick either). A
 * name that does not resolve here is the exit's to resolve.
 */
export function refusedThroughExit(decision: TargetDecision): boolean {
  return decision.verdict === 'refused' ? decision.reason === 'blocked' : (decision.withheld ?? 0) > 0;
}

function dnsResolver(servers: string[], timeoutMs = 5_000): NameResolver {
  const resolver = new Resolver({ timeout: timeoutMs, tries: 2 });
  resolver.setServers(servers);
  return async (hostname) => {
    const [v4, v6] = await Promise.allSettled([resolver.resolve4(hostname), resolver.resolve6(hostname)]);
    const addresses: LookupAddress[] = [
      ...(v4.status === 'fulfilled' ? v4.value.map((address) => ({ address, family: 4 })) : []),
      ...(v6.status === 'fulfilled' ? v6.value.map((address) => ({ address, family: 6 })) : []),
    ];
    if (addresses.length > 0) return addresses;
    const failed = v4.status === 'rejected' ? (v4.reason as NodeJS.ErrnoException) : undefined;
    const e: NodeJS.ErrnoException = new Error(`${hostname} did not resolve`);
    e.code = failed?.code ?? 'ENODATA';
    throw e;
  };
}

const systemResolver: NameResolver = (hostname) => systemLookup(hostname, { all: true });

export class TargetPolicy {
  private readonly allow: Set<string>;
  /** Where names are resolved: the configured DNS servers, or the system resolver. */
  readonly resolve: NameResolver;

  constructor(allowlist: string[], opts: TargetPolicyOptions = {}) {
    this.allow = new Set(allowlist.map((a) => a.toLowerCase()));
    this.resolve = opts.resolver ?? (opts.dnsServers && opts.dnsServers.length > 0 ? dnsResolver(opts.dnsServers) : systemResolver);
  }

  /**
   * The egress decision for a host (a name or a literal address, IPv6 with or without brackets):
   * a literal address is judged as written; a name is resolved once, and only the addresses the
   * policy allows are returned, to connect to without resolving again. Never opens a connection.
   * (checkUrl's scheme and localhost-name rules are the caller's, before this.)
   */
  async decide(hostname: string): Promise<TargetDecision> {
    const host = hostname.replace(/^\[|\]$/g, '').toLowerCase();
    if (isIP(host)) {
      return this.addressAllowed(host)
        ? { verdict: 'allowed', addresses: [{ address: host, family: isIP(host) }] }
        : { verdict: 'refused', reason: 'blocked', code: 'ETARGETBLOCKED' };
    }
    if (host === '') return { verdict: 'refused', reason: 'unresolvable', code: 'ENOTFOUND' };
    let addresses: LookupAddress[];
    try {
      addresses = await this.resolve(host);
    } catch (err) {
      return { verdict: 'refused', reason: 'unresolvable', code: (err as NodeJS.ErrnoException).code ?? 'ENOTFOUND' };
    }
    if (addresses.length === 0) return { verdict: 'refused', reason: 'unresolvable', code: 'ENODATA' };
    const ok = addresses.filter((a) => this.addressAllowed(a.address));
    if (ok.length === 0) return { verdict: 'refused', reason: 'blocked', code: 'ETARGETBLOCKED' };
    return ok.length < addresses.length
      ? { verdict: 'allowed', addresses: ok, withheld: addresses.length - ok.length }
      : { verdict: 'allowed', addresses: ok };
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
   * (a proxy exit resolves the name): undefined when allowed, else why. A name with any internal
   * address here is refused (refusedThroughExit); a name that does not resolve here is left to the
   * exit to fail.
   */
  async checkResolved(url: URL): Promise<string | undefined> {
    const problem = this.checkUrl(url);
    if (problem) return problem;
    return refusedThroughExit(await this.decide(url.hostname)) ? 'the target address is not allowed' : undefined;
  }

  /** A dns.lookup replacement (got, undici, net) that refuses disallowed resolved addresses: the connect-time check. */
  readonly lookup = (
    hostname: string,
    options: LookupOptions,
    callback: (err: NodeJS.ErrnoException | null, address: string | LookupAddress[], family?: number) => void,
  ): void => {
    // Answered on the next tick, outside the promise: an exception in the caller's callback must
    // not be swallowed by (or rejected into) this chain.
    const reply = (err: NodeJS.ErrnoException | null, address: string | LookupAddress[], family?: number) =>
      process.nextTick(() => callback(err, address, family));
    this.decide(hostname).then(
      (decision) => {
        if (decision.verdict === 'refused') {
          const e: NodeJS.ErrnoException = new Error(
            decision.reason === 'blocked' ? 'the target address is not allowed' : `${hostname} did not resolve`,
          );
          e.code = decision.reason === 'blocked' ? 'ETARGETBLOCKED' : decision.code;
          return reply(e, []);
        }
        const wanted = options.family === 4 || options.family === 6 ? options.family : 0;
        const ok = wanted ? decision.addresses.filter((a) => a.family === wanted) : decision.addresses;
        if (ok.length === 0) {
          const e: NodeJS.ErrnoException = new Error(`${hostname} has no IPv${wanted} address`);
          e.code = 'ENOTFOUND';
          return reply(e, []);
        }
        if (options.all) return reply(null, ok);
        reply(null, ok[0]!.address, ok[0]!.family);
      },
      (err: NodeJS.ErrnoException) => reply(err, []),
    );
  };
}
