import { pino, type Logger } from 'pino';

export type { Logger };

/**
 * Logs never carry keys, cookies, bodies or full URLs: the obvious paths are redacted here, and
 * callers log URLs through `originOf`.
 */
export function createLogger(service: string, level: string = process.env['LOG_LEVEL'] ?? 'info'): Logger {
  return pino({
    name: service,
    level,
    base: { service },
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
  });
}

/** The origin of a URL (scheme, host, port): what may appear in logs and public responses. */
export function originOf(url: string): string {
  try {
    return new URL(url).origin;
  } catch {
    return '[invalid-url]';
  }
}
