import type { Logger } from '@wdr/kit/log';
import type { ServiceMetrics } from '@wdr/kit/metrics';

/** A limiter's Redis call failed: counted (gateway_admission_limiter_errors_total) and logged; the limit fails open. */
export function limiterFailed(
  deps: { log: Logger; metrics: ServiceMetrics },
  limiter: 'rate' | 'concurrency' | 'reads',
  err: unknown,
): void {
  deps.metrics
    .counter('admission_limiter_errors_total', 'Admission limiter calls that failed (Redis unavailable); admission failed open.', [
      'limiter',
    ] as const)
    .inc({ limiter });
  deps.log.warn({ err, limiter }, 'admission limiter unavailable, failing open');
}
