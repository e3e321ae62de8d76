import { isIP } from 'node:net';
import { PublicError } from '@wdr/kit/errors';
import type { TargetPolicy } from '@wdr/kit/target-policy';

const refuse = (issue: string) =>
  new PublicError('VALIDATION_FAILED', 'The webhook URL is not allowed.', { details: [{ field: 'url', issue }] });

/**
 * An endpoint URL as the target policy sees it at creation (and at every change): http(s), no
 * credentials, no literal private/loopback/link-local/metadata address, and a name must not resolve
 * to one. A name that does not resolve now is accepted: every connection is checked again.
 */
export async function checkedEndpointUrl(policy: TargetPolicy, text: string): Promise<URL> {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    throw refuse('not an absolute URL');
  }
  const problem = policy.checkUrl(url);
  if (problem) throw refuse(problem);
  const host = url.hostname.replace(/^\[|\]$/g, '');
  if (isIP(host) === 0 && (await resolvesToBlocked(policy, host))) throw refuse('the target address is not allowed');
  return url;
}

function resolvesToBlocked(policy: TargetPolicy, host: string): Promise<boolean> {
  return new Promise((resolve) => {
    const timer = setTimeout(() => resolve(false), 3_000);
    policy.lookup(host, { all: true }, (err) => {
      clearTimeout(timer);
      resolve(err?.code === 'ETARGETBLOCKED');
    });
  });
}
