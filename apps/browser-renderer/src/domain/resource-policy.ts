/**
 * The site-light resource policy: what a usable page can do without. Media, images and manifests
 * cost bandwidth and time and almost never carry the data a tenant wants; advertising and
 * analytics hosts neither. Documents, scripts, XHR/fetch, WebSockets, WASM, service workers,
 * styles and fonts are always kept: pages break without them.
 *
 * The denylist is short and curated on purpose. The maintained filter lists (EasyList,
 * EasyPrivacy) are large, change weekly, and the packages that ship them either fetch them at run
 * time (no network here, and a runtime dependency on a third party) or bundle stale copies; a
 * conservative list of the dominant ad and analytics hosts removes most of the cost without the
 * risk of breaking a page through an over-eager rule.
 */
export const SITE_LIGHT_BLOCKED_TYPES: ReadonlySet<string> = new Set(['image', 'media', 'manifest']);

/** Matched on the host and every parent domain (`stats.g.doubleclick.net` -> `doubleclick.net`). */
export const AD_ANALYTICS_HOSTS: ReadonlySet<string> = new Set([
  // Google advertising and analytics
  'doubleclick.net',
  'googlesyndication.com',
  'googleadservices.com',
  'google-analytics.com',
  'googletagmanager.com',
  'googletagservices.com',
  'adservice.google.com',
  // Social tracking pixels
  'connect.facebook.net',
  'analytics.twitter.com',
  'ads-twitter.com',
  'px.ads.linkedin.com',
  'analytics.tiktok.com',
  'ct.pinterest.com',
  // Ad exchanges and networks
  'adnxs.com',
  'criteo.com',
  'criteo.net',
  'rubiconproject.com',
  'pubmatic.com',
  'openx.net',
  'casalemedia.com',
  'taboola.com',
  'outbrain.com',
  'amazon-adsystem.com',
  'adsrvr.org',
  'moatads.com',
  'scorecardresearch.com',
  'quantserve.com',
  // Product analytics and session recording
  'hotjar.com',
  'mixpanel.com',
  'segment.io',
  'cdn.segment.com',
  'api.segment.io',
  'amplitude.com',
  'fullstory.com',
  'mouseflow.com',
  'clarity.ms',
  'newrelic.com',
  'nr-data.net',
  'bat.bing.com',
  'mc.yandex.ru',
  'stats.wp.com',
]);

export function isAdOrAnalyticsHost(hostname: string): boolean {
  let host = hostname.toLowerCase().replace(/\.$/, '');
  for (;;) {
    if (AD_ANALYTICS_HOSTS.has(host)) return true;
    const dot = host.indexOf('.');
    if (dot < 0) return false;
    host = host.slice(dot + 1);
  }
}

/** Whether site-light blocks a request of this resource type to this URL. */
export function siteLightBlocks(resourceType: string, url: string): boolean {
  if (SITE_LIGHT_BLOCKED_TYPES.has(resourceType)) return true;
  if (resourceType === 'document') return false;
  try {
    return isAdOrAnalyticsHost(new URL(url).hostname);
  } catch {
    return false;
  }
}
