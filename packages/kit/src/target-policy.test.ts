import { describe, expect, it } from '@jest/globals';
import { TargetPolicy } from './target-policy.js';

describe('TargetPolicy', () => {
  const strict = new TargetPolicy([]);

  // One address per special-purpose range: each must be refused on its own.
  it.each([
    ['0.0.0.0', 'this network'],
    ['10.1.2.3', 'private 10/8'],
    ['100.64.0.1', 'CGNAT'],
    ['127.0.0.1', 'loopback'],
    ['169.254.169.254', 'link-local (cloud metadata)'],
    ['172.16.0.1', 'private 172.16/12'],
    ['192.0.0.8', 'IETF protocol assignments'],
    ['192.168.1.1', 'private 192.168/16'],
    ['198.18.0.1', 'benchmarking'],
    ['224.0.0.1', 'multicast'],
    ['240.0.0.1', 'reserved'],
    ['255.255.255.255', 'broadcast'],
    ['::', 'unspecified'],
    ['::1', 'loopback'],
    ['fe80::1', 'link-local'],
    ['fd00::1', 'unique local'],
    ['ff02::1', 'multicast'],
    ['100::1', 'discard'],
    ['::ffff:127.0.0.1', 'IPv4-mapped loopback'],
    ['::ffff:a9fe:a9fe', 'IPv4-mapped metadata (hex form)'],
    ['::127.0.0.1', 'IPv4-compatible loopback'],
    ['64:ff9b::a9fe:a9fe', 'NAT64 of the metadata address'],
    ['64:ff9b::7f00:1', 'NAT64 of loopback'],
    ['2002:7f00:1::', '6to4 of loopback'],
    ['2002:a9fe:a9fe::1', '6to4 of the metadata address'],
    ['2001::1', 'Teredo'],
    ['2001:db8::1', 'documentation'],
  ])('refuses %s (%s)', (ip) => expect(strict.addressAllowed(ip)).toBe(false));

  it.each(['93.184.216.34', '1.1.1.1', '2606:4700:4700::1111', '::ffff:8.8.8.8'])('allows public %s', (ip) => {
    expect(strict.addressAllowed(ip)).toBe(true);
  });

  it('refuses literal IPv6 targets in the translator and compatibility forms', () => {
    expect(strict.checkUrl(new URL('http://[::127.0.0.1]/'))).toBeDefined();
    expect(strict.checkUrl(new URL('http://[64:ff9b::a9fe:a9fe]/'))).toBeDefined();
    expect(strict.checkUrl(new URL('http://[2002:7f00:1::]/'))).toBeDefined();
  });

  it('honours the allow-list for the address and its IPv4-mapped form only, not the IPv4-compatible or translator forms', () => {
    const local = new TargetPolicy(['127.0.0.1']);
    expect(local.addressAllowed('127.0.0.1')).toBe(true);
    expect(local.addressAllowed('::ffff:127.0.0.1')).toBe(true);
    expect(local.addressAllowed('127.0.0.2')).toBe(false);
    // Other addresses that only carry 127.0.0.1: an allow-list of 127.0.0.1 does not open them.
    expect(local.addressAllowed('::127.0.0.1')).toBe(false);
    expect(local.checkUrl(new URL('http://[::127.0.0.1]:8080/'))).toBe('the target address is not allowed');
    expect(local.addressAllowed('64:ff9b::7f00:1')).toBe(false);
    expect(local.addressAllowed('2002:7f00:1::')).toBe(false);
    // A public address carried in the compatible form is still judged as that address.
    expect(local.addressAllowed('::8.8.8.8')).toBe(true);
  });

  it('checks scheme, credentials and literal addresses', () => {
    expect(strict.checkUrl(new URL('ftp://example.com/'))).toBeDefined();
    expect(strict.checkUrl(new URL('http://user:pw@example.com/'))).toBeDefined();
    expect(strict.checkUrl(new URL('http://169.254.169.254/latest'))).toBeDefined();
    expect(strict.checkUrl(new URL('http://localhost:8080/'))).toBeDefined();
    expect(strict.checkUrl(new URL('https://example.com/a?b=c'))).toBeUndefined();
  });

  it('refuses names that resolve to blocked addresses', async () => {
    const err = await new Promise<NodeJS.ErrnoException | null>((resolve) => strict.lookup('localhost', {}, (e) => resolve(e)));
    expect(err?.code).toBe('ETARGETBLOCKED');
  });

  it('checks a URL with its resolved addresses for a connection another host makes (a proxy exit)', async () => {
    await expect(strict.checkResolved(new URL('http://localhost:8080/'))).resolves.toBe('the target address is not allowed');
    await expect(strict.checkResolved(new URL('http://127.0.0.1/'))).resolves.toBe('the target address is not allowed');
    await expect(strict.checkResolved(new URL('ftp://example.com/'))).resolves.toMatch(/only http and https/);
    // A name that does not resolve here is the exit's to fail.
    await expect(strict.checkResolved(new URL('http://localhost.localdomain.invalid/'))).resolves.toBeUndefined();
    await expect(new TargetPolicy(['127.0.0.1']).checkResolved(new URL('http://127.0.0.1:9/'))).resolves.toBeUndefined();
  });
});
