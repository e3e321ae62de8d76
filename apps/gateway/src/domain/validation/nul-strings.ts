/** The issue a string holding U+0000 is refused with, wherever it is. */
export const NUL_ISSUE = 'must not contain the NUL character (U+0000)';

/**
 * Where the strings of a parsed JSON value hold U+0000, keys included, as paths. Postgres stores no
 * NUL in text or jsonb: such a value could only fail where it is written, as a 5xx of whichever
 * service writes it.
 */
export function nulPaths(value: unknown, path: (string | number)[] = []): (string | number)[][] {
  if (typeof value === 'string') return value.includes('\u0000') ? [path] : [];
  if (Array.isArray(value)) return value.flatMap((v, i) => nulPaths(v, [...path, i]));
  if (value !== null && typeof value === 'object')
    return Object.entries(value).flatMap(([k, v]) => [...(k.includes('\u0000') ? [[...path, k]] : []), ...nulPaths(v, [...path, k])]);
  return [];
}
