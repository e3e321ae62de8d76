import { describe, expect, it } from '@jest/globals';
import { TargetPolicy } from './target-policy.js';

describe('TargetPolicy', () => {
  const strict = new TargetPolicy([]);

  it.each(['127.0.0.1', '10.1.2.3', '172.16.0.1', '192.168.1.1', '169.254.169.254', '100.64.0.1', '::1', 'fe80::1', 'fd00::1', '0.0.0.0', '::ffff:127.0.0.1'])(
    'refuses %s',
    (ip) => expect(strict.addressAllowed(ip)).toBe(false),
  );

  it.each(['93.184.216.34', '1.1.1.1', '2606:4700:4700::1111'])('allows public %s', (ip) => {
    expect(strict.addressAllowed(ip)).toBe(true);
  });

  it('honours the allow-list', () => {
    expect(new TargetPolicy(['127.0.0.1']).addressAllowed('127.0.0.1')).toBe(true);
  });

  it('checks scheme, credentials and literal addresses', () => {
    expect(strict.checkUrl(new URL('ftp://example.com/'))).toBeDefined();
    expect(strict.checkUrl(new URL('http://user:pw@example.com/'))).toBeDefined();
    expect(strict.checkUrl(new URL('http://169.254.169.254/latest'))).toBeDefined();
    expect(strict.checkUrl(new URL('http://localhost:8080/'))).toBeDefined();
    expect(strict.checkUrl(new URL('https://example.com/a?b=c'))).toBeUndefined();
  });

  it('refuses names that resolve to blocked addresses', async () => {
    const err = await new Promise<NodeJS.ErrnoException | null>((resolve) =>
      strict.lookup('localhost', {}, (e) => resolve(e)),
    );
    expect(err?.code).toBe('ETARGETBLOCKED');
  });
});
