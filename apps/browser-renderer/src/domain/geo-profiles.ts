/**
 * What a browser context looks like from a country: its main IANA time zone and the coordinates of
 * its capital. Applied when the route carries a verified exit country (the proxy layer fills it).
 * A country missing here gets no emulation (reported as `country: null` in result_meta), never a
 * wrong one.
 */
export interface GeoProfile {
  timezone: string;
  latitude: number;
  longitude: number;
}

const P = (timezone: string, latitude: number, longitude: number): GeoProfile => ({ timezone, latitude, longitude });

export const GEO_PROFILES: Readonly<Record<string, GeoProfile>> = {
  AE: P('Asia/Dubai', 24.4539, 54.3773),
  AR: P('America/Argentina/Buenos_Aires', -34.6037, -58.3816),
  AT: P('Europe/Vienna', 48.2082, 16.3738),
  AU: P('Australia/Sydney', -35.2809, 149.13),
  BE: P('Europe/Brussels', 50.8503, 4.3517),
  BR: P('America/Sao_Paulo', -15.7939, -47.8828),
  CA: P('America/Toronto', 45.4215, -75.6972),
  CH: P('Europe/Zurich', 46.948, 7.4474),
  CL: P('America/Santiago', -33.4489, -70.6693),
  CN: P('Asia/Shanghai', 39.9042, 116.4074),
  CO: P('America/Bogota', 4.711, -74.0721),
  CZ: P('Europe/Prague', 50.0755, 14.4378),
  DE: P('Europe/Berlin', 52.52, 13.405),
  DK: P('Europe/Copenhagen', 55.6761, 12.5683),
  EG: P('Africa/Cairo', 30.0444, 31.2357),
  ES: P('Europe/Madrid', 40.4168, -3.7038),
  FI: P('Europe/Helsinki', 60.1699, 24.9384),
  FR: P('Europe/Paris', 48.8566, 2.3522),
  GB: P('Europe/London', 51.5074, -0.1278),
  GR: P('Europe/Athens', 37.9838, 23.7275),
  HK: P('Asia/Hong_Kong', 22.3193, 114.1694),
  HU: P('Europe/Budapest', 47.4979, 19.0402),
  ID: P('Asia/Jakarta', -6.2088, 106.8456),
  IE: P('Europe/Dublin', 53.3498, -6.2603),
  IL: P('Asia/Jerusalem', 31.7683, 35.2137),
  IN: P('Asia/Kolkata', 28.6139, 77.209),
  IT: P('Europe/Rome', 41.9028, 12.4964),
  JP: P('Asia/Tokyo', 35.6762, 139.6503),
  KR: P('Asia/Seoul', 37.5665, 126.978),
  MX: P('America/Mexico_City', 19.4326, -99.1332),
  MY: P('Asia/Kuala_Lumpur', 3.139, 101.6869),
  NG: P('Africa/Lagos', 9.0765, 7.3986),
  NL: P('Europe/Amsterdam', 52.3676, 4.9041),
  NO: P('Europe/Oslo', 59.9139, 10.7522),
  NZ: P('Pacific/Auckland', -41.2865, 174.7762),
  PH: P('Asia/Manila', 14.5995, 120.9842),
  PL: P('Europe/Warsaw', 52.2297, 21.0122),
  PT: P('Europe/Lisbon', 38.7223, -9.1393),
  RO: P('Europe/Bucharest', 44.4268, 26.1025),
  SA: P('Asia/Riyadh', 24.7136, 46.6753),
  SE: P('Europe/Stockholm', 59.3293, 18.0686),
  SG: P('Asia/Singapore', 1.3521, 103.8198),
  TH: P('Asia/Bangkok', 13.7563, 100.5018),
  TR: P('Europe/Istanbul', 39.9334, 32.8597),
  TW: P('Asia/Taipei', 25.033, 121.5654),
  UA: P('Europe/Kyiv', 50.4501, 30.5234),
  US: P('America/New_York', 38.9072, -77.0369),
  VN: P('Asia/Ho_Chi_Minh', 21.0278, 105.8342),
  ZA: P('Africa/Johannesburg', -25.7479, 28.2293),
};

export function geoProfileOf(country: string | null): GeoProfile | undefined {
  return country ? GEO_PROFILES[country.toUpperCase()] : undefined;
}
