import http from 'node:http';
import https from 'node:https';
import { orchestratorApi } from '@wdr/contracts';
import { PublicError } from '@wdr/kit/errors';
import type { ServiceClient } from '@wdr/kit/http-client';
import { callInternal, readStreamed, streamInternal } from '@wdr/kit/internal-call';
import type { TargetPolicy } from '@wdr/kit/target-policy';

/**
 * The sample page of a generation. Either a completed request of the tenant (its stored page,
 * read back from the orchestrator: the platform's ordinary path, HTTP or browser, billed as that
 * request was), or the sample URL fetched directly over HTTP under the same target policy as the
 * orchestrator's (`TARGET_ALLOWLIST`; private and special addresses refused on every connection,
 * redirects re-checked, at most 5), bounded in time and size, not billed and without JavaScript.
 */
export interface SamplePageDeps {
  orchestrator: ServiceClient;
  policy: TargetPolicy;
  timeoutMs: number;
  maxBytes: number;
}

const unusable = (issue: string, field = 'sample_url') =>
  new PublicError('VALIDATION_FAILED', 'The sample page could not be read.', { details: [{ field, issue }] });

export async function samplePage(
  deps: SamplePageDeps,
  tenantId: string,
  source: { url: string } | { requestId: string },
): Promise<{ html: string; url: string | undefined }> {
  if ('requestId' in source) {
    try {
      const detail = await callInternal(deps.orchestrator, orchestratorApi.readRequest, {
        params: { id: source.requestId },
        query: { tenant_id: tenantId },
      });
      const page = await streamInternal(deps.orchestrator, orchestratorApi.requestResult, {
        params: { id: source.requestId },
        query: { tenant_id: tenantId, format: 'html' },
      });
      return { html: (await readStreamed(page)).body.toString('utf8'), url: detail.url };
    } catch (err) {
      if (err instanceof PublicError && ['NOT_FOUND', 'RESULT_EXPIRED', 'RESULT_NOT_READY'].includes(err.code)) {
        throw unusable('is not a completed request of yours with a stored page', 'sample_request_id');
      }
      throw err;
    }
  }
  return { html: await fetchDirect(deps, new URL(source.url), 0), url: source.url };
}

function fetchDirect(deps: SamplePageDeps, url: URL, redirects: number): Promise<string> {
  const bad = deps.policy.checkUrl(url);
  if (bad) return Promise.reject(unusable(bad));
  const lib = url.protocol === 'https:' ? https : http;
  return new Promise((resolve, reject) => {
    const req = lib.get(
      url,
      {
        lookup: deps.policy.lookup as never,
        timeout: deps.timeoutMs,
        headers: { accept: 'text/html,*/*;q=0.8', 'user-agent': 'wdr-recipe-generator/1' },
      },
      (res) => {
        const status = res.statusCode ?? 0;
        if (status >= 300 && status < 400 && res.headers.location) {
          res.resume();
          if (redirects >= 5) return reject(unusable('redirects more than 5 times'));
          return resolve(fetchDirect(deps, new URL(res.headers.location, url), redirects + 1));
        }
        if (status !== 200) {
          res.resume();
          return reject(unusable(`answered HTTP ${status}`));
        }
        const chunks: Buffer[] = [];
        let size = 0;
        res.on('data', (c: Buffer) => {
          size += c.length;
          if (size > deps.maxBytes) {
            req.destroy();
            reject(unusable(`is larger than ${deps.maxBytes} bytes`));
          } else chunks.push(c);
        });
        res.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
        res.on('error', (e) => reject(unusable(`could not be read (${e.message})`)));
      },
    );
    req.on('timeout', () => req.destroy(new Error(`no answer within ${deps.timeoutMs} ms`)));
    req.on('error', (e) =>
      reject(
        (e as NodeJS.ErrnoException).code === 'ETARGETBLOCKED'
          ? unusable('the target address is not allowed')
          : unusable(`could not be fetched (${e.message})`),
      ),
    );
  });
}
