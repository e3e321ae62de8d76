import { pino, type DestinationStream, type Logger } from 'pino';
import { currentRequestId } from './request-context.js';

export type { Logger };

/**
 * Logs never carry keys, cookies, bodies or full URLs: the obvious paths are redacted here, and
 * callers log URLs through `originOf`. Every line written while a request or a Kafka message is
 * handled carries its `request_id` (request-context.ts). `destination`: where lines go (tests
 * capture them; stdout otherwise).
 */
export function createLogger(service: string, level: string = process.env['LOG_LEVEL'] ?? 'info', destination?: DestinationStream): Logger {
  const options = {
    name: service,
    level,
    base: { service },
    mixin: () => {
      const requestId = currentRequestId();
      return requestId === undefined ? {} : { request_id: requestId };
    },
    redact: {
      paths: [
        'apiKey',
        'token',
        'password',
        'headers',
        'cookies',
        'body',
        'url',
        'req.headers',
        '*.apiKey',
        '*.token',
        '*.headers',
        '*.cookies',
        '*.body',
        '*.url',
      ],
      censor: '[redacted]',
    },
  };
  return destination ? pino(options, destination) : pino(options);
}

/** The origin of a URL (scheme, host, port): what may appear in logs and public responses. */
export function originOf(url: string): string {
  try {
    return new URL(url).origin;
  } catch {
    return '[invalid-url]';
  }
}
