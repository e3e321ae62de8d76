import { describe, expect, it } from '@jest/globals';
import { refusedThroughExit, TargetPolicy } from './target-policy.js';

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

  describe('the egress decision (one resolution, only checked addresses; no connection is attempted)', () => {
    /** A resolver that answers from a table and counts the questions: nothing leaves the process. */
    const fake = (table: Record<string, string[] | Error>) => {
      const asked: string[] = [];
      const resolver = async (host: string) => {
        asked.push(host);
        const answer = table[host];
        if (answer === undefined || answer instanceof Error) throw Object.assign(answer ?? new Error('nx'), { code: 'ENOTFOUND' });
        return answer.map((address) => ({ address, family: address.includes(':') ? 6 : 4 }));
      };
      return { asked, resolver };
    };

    it.each([
      ['private 10/8', '10.0.0.5'],
      ['private 192.168/16', '192.168.0.10'],
      ['the cloud metadata address', '169.254.169.254'],
      ['CGNAT', '100.64.0.1'],
      ['NAT64 of the metadata address', '64:ff9b::a9fe:a9fe'],
      ['6to4 of loopback', '2002:7f00:1::'],
      ['IPv4-mapped loopback', '::ffff:127.0.0.2'],
      ['IPv4-mapped metadata address', '::ffff:169.254.169.254'],
      ['IPv6 unique local', 'fd12::1'],
      ['IPv6 link-local', 'fe80::1'],
      ['a loopback address off the allow-list', '127.0.0.2'],
    ])('refuses a name that resolves to %s (%s), asking the resolver once', async (_what, address) => {
      const { asked, resolver } = fake({ 'evil.example': [address] });
      const policy = new TargetPolicy(['127.0.0.1'], { resolver });
      await expect(policy.decide('evil.example')).resolves.toEqual({ verdict: 'refused', reason: 'blocked', code: 'ETARGETBLOCKED' });
      expect(asked).toEqual(['evil.example']);
    });

    it.each([
      ['the metadata address', '169.254.169.254'],
      ['NAT64', '[64:ff9b::a9fe:a9fe]'],
      ['6to4', '[2002:a9fe:a9fe::1]'],
      ['IPv4-mapped', '[::ffff:10.0.0.1]'],
      ['IPv4-compatible loopback', '[::127.0.0.1]'],
    ])('refuses the literal %s (%s) without asking the resolver', async (_what, host) => {
      const { asked, resolver } = fake({});
      await expect(new TargetPolicy(['127.0.0.1'], { resolver }).decide(host)).resolves.toMatchObject({
        verdict: 'refused',
        reason: 'blocked',
      });
      expect(asked).toEqual([]);
    });

    it('fails closed on a name that does not resolve', async () => {
      const { resolver } = fake({});
      await expect(new TargetPolicy([], { resolver }).decide('nowhere.example')).resolves.toEqual({
        verdict: 'refused',
        reason: 'unresolvable',
        code: 'ENOTFOUND',
      });
    });

    it('keeps only the allowed addresses of a name that mixes public and internal ones', async () => {
      const { resolver } = fake({ 'mixed.example': ['10.0.0.1', '93.184.216.34', 'fd00::1'] });
      await expect(new TargetPolicy([], { resolver }).decide('mixed.example')).resolves.toEqual({
        verdict: 'allowed',
        addresses: [{ address: '93.184.216.34', family: 4 }],
        withheld: 2,
      });
    });

    it('through a proxy exit (the exit resolves the name): refuses a name with any internal address here, public ones beside it or not', async () => {
      const { resolver } = fake({
        'mixed.example': ['93.184.216.34', '10.0.0.1'],
        'public.example': ['93.184.216.34'],
        'internal.example': ['169.254.169.254'],
      });
      const policy = new TargetPolicy([], { resolver });
      await expect(policy.checkResolved(new URL('http://mixed.example/'))).resolves.toBe('the target address is not allowed');
      await expect(policy.checkResolved(new URL('http://internal.example/'))).resolves.toBe('the target address is not allowed');
      await expect(policy.checkResolved(new URL('http://public.example/'))).resolves.toBeUndefined();
      // Unresolvable here: the exit's to resolve.
      await expect(policy.checkResolved(new URL('http://nowhere.example/'))).resolves.toBeUndefined();
      expect(refusedThroughExit(await policy.decide('mixed.example'))).toBe(true);
      expect(refusedThroughExit(await policy.decide('public.example'))).toBe(false);
    });

    it('answers the connect-time lookup from the same decision (the addresses checked are the ones returned)', async () => {
      const { resolver } = fake({ 'ok.example': ['93.184.216.34'], 'bad.example': ['10.1.1.1'] });
      const policy = new TargetPolicy([], { resolver });
      const look = (host: string) =>
        new Promise<{ err: NodeJS.ErrnoException | null; address: unknown }>((resolve) =>
          policy.lookup(host, {}, (err, address) => resolve({ err, address })),
        );
      await expect(look('ok.example')).resolves.toEqual({ err: null, address: '93.184.216.34' });
      expect((await look('bad.example')).err?.code).toBe('ETARGETBLOCKED');
      expect((await look('nowhere.example')).err?.code).toBe('ENOTFOUND');
    });
  });
});
