import { describe, expect, it } from '@jest/globals';
import ct from 'countries-and-timezones';
import { geoProfileOf, timezoneOf } from './geo-profiles.js';

describe('geoProfileOf (maintained data, every country)', () => {
  it('has a time zone and a locale for every country the tz database places people in, and a point for nearly all', () => {
    const countries = Object.keys(ct.getAllCountries());
    expect(countries.filter((cc) => !geoProfileOf(cc))).toEqual([]);
    expect(countries.filter((cc) => geoProfileOf(cc) && !geoProfileOf(cc)!.locale)).toEqual([]);
    expect(countries.filter((cc) => geoProfileOf(cc)?.position).length).toBeGreaterThanOrEqual(235);
  });

  it.each([
    ['DE', 'Europe/Berlin', 'de-DE'],
    ['JP', 'Asia/Tokyo', 'ja-JP'],
    ['IS', 'Atlantic/Reykjavik', 'is-IS'],
    ['NP', 'Asia/Kathmandu', 'ne-NP'],
    ['US', 'America/New_York', 'en-US'],
    ['AU', 'Australia/Canberra', 'en-AU'],
    ['RU', 'Europe/Moscow', 'ru-RU'],
    ['CN', 'Asia/Shanghai', 'zh-CN'],
    ['MX', 'America/Mexico_City', 'es-MX'],
  ])('%s: %s, %s', (cc, timezone, locale) => {
    expect(geoProfileOf(cc)).toMatchObject({ timezone, locale, position: { latitude: expect.any(Number), longitude: expect.any(Number) } });
  });

  it('answers nothing for no country or an unknown one', () => {
    expect(geoProfileOf(null)).toBeUndefined();
    expect(geoProfileOf('ZZ')).toBeUndefined();
    expect(timezoneOf('ZZ', undefined)).toBeUndefined();
  });
});
