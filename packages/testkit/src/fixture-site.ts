import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { captchaPage } from './captcha-pages.js';

export interface FixtureSite {
  /** Base URL, e.g. http://127.0.0.1:41234 */
  url: string;
  /** Requests served, by path. */
  hits: Map<string, number>;
  close: () => Promise<void>;
}

/**
 * A real HTTP server on 127.0.0.1 playing the target website:
 *   /page               a small HTML page
 *   /slow?ms=N          answers after N ms
 *   /status/CODE        answers with that status
 *   /redirect?to=PATH   302 to PATH
 *   /bytes?n=N          N bytes of text
 *   /product            a product page (title, price, JSON-LD, OpenGraph, reviews) for extraction
 * and pages for the browser stage (see BROWSER_PAGES below): /js-page, /js-shell, /late, /actions,
 * /file.bin, /cookies/set, /cookies/show, /images, /img/N.png, /big, /challenge, /blocked/datadome,
 * /blocked/rate, /unusual-traffic-article, /ua, /headers,
 * /geo, /console-errors; and CAPTCHA pages (/captcha/recaptcha, /captcha/hcaptcha, /captcha/turnstile,
 * see ./captcha-pages.ts).
 */
/** A product page for structured extraction: markup, JSON-LD and OpenGraph, a review list; no SKU element. */
const PRODUCT_PAGE = `<!doctype html><html><head><title>Trail Shoe X</title>
<meta property="og:title" content="Trail Shoe X">
<script type="application/ld+json">{"@context":"https://schema.org","@type":"Product","name":"Trail Shoe X","brand":{"@type":"Brand","name":"Peak"},"offers":{"@type":"Offer","price":"129.90","priceCurrency":"EUR"}}</script>
</head><body><h1 class="title">Trail Shoe X</h1><p class="price">€129,90</p><span class="stock">In stock</span>
<img class="main" src="/img/1.png" alt="">
<section class="review"><span class="author">Ann</span><span class="stars">5</span></section>
<section class="review"><span class="author">Bob</span><span class="stars">4</span></section>
</body></html>`;

export async function startFixtureSite(opts: { captchaVerifyUrl?: string } = {}): Promise<FixtureSite> {
  const hits = new Map<string, number>();
  const handler = (req: IncomingMessage, res: ServerResponse) => {
    const u = new URL(req.url ?? '/', 'http://fixture');
    hits.set(u.pathname, (hits.get(u.pathname) ?? 0) + 1);
    if (u.pathname === '/page') {
      res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
      res.end(
        '<!doctype html><html><head><title>Fixture page</title></head><body><h1>Hello from the fixture site</h1><p class="price">42.00</p></body></html>',
      );
      return;
    }
    if (u.pathname === '/product') {
      res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
      res.end(PRODUCT_PAGE);
      return;
    }
    if (u.pathname === '/slow') {
      const ms = Number(u.searchParams.get('ms') ?? '1000');
      const t = setTimeout(() => {
        res.writeHead(200, { 'content-type': 'text/html' });
        res.end(`<html><body>slow ${ms}</body></html>`);
      }, ms);
      res.on('close', () => clearTimeout(t));
      return;
    }
    const status = /^\/status\/(\d{3})$/.exec(u.pathname);
    if (status) {
      res.writeHead(Number(status[1]), { 'content-type': 'text/plain' });
      res.end(`status ${status[1]}`);
      return;
    }
    if (u.pathname === '/redirect') {
      res.writeHead(302, { location: u.searchParams.get('to') ?? '/page' });
      res.end();
      return;
    }
    if (u.pathname === '/bytes') {
      const n = Number(u.searchParams.get('n') ?? '1024');
      res.writeHead(200, { 'content-type': 'text/plain' });
      res.end('x'.repeat(n));
      return;
    }
    if (browserPage(u, req, res)) return;
    // CAPTCHA pages (./captcha-pages.ts); their tokens are checked at `captchaVerifyUrl` (a CaptchaSolverServer's verifyUrl).
    if (captchaPage(u, req, res, opts.captchaVerifyUrl)) return;
    res.writeHead(404, { 'content-type': 'text/plain' });
    res.end('not found');
  };
  const server: Server = createServer(handler);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    hits,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

const html = (res: ServerResponse, body: string, status = 200, headers: Record<string, string> = {}) => {
  res.writeHead(status, { 'content-type': 'text/html; charset=utf-8', ...headers });
  res.end(body);
};

const escapeHtml = (v: string) => v.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

/** A PNG of about `size` bytes (valid header and chunks; the pixel data is one stored block). */
function pngOf(size: number): Buffer {
  const header = Buffer.from('89504e470d0a1a0a0000000d49484452000000010000000108060000001f15c489', 'hex');
  const padding = Buffer.alloc(Math.max(0, size - header.length - 12));
  const chunk = Buffer.concat([Buffer.alloc(4), Buffer.from('tEXt'), padding, Buffer.alloc(4)]);
  chunk.writeUInt32BE(padding.length, 0);
  const end = Buffer.from('0000000049454e44ae426082', 'hex');
  return Buffer.concat([header, chunk, end]);
}

/** Pages that need a browser to mean anything: scripts, actions, popups, downloads, images. */
function browserPage(u: URL, req: IncomingMessage, res: ServerResponse): boolean {
  switch (u.pathname) {
    case '/js-page':
      html(
        res,
        '<!doctype html><html><head><title>JS page</title></head><body><div id="app"></div><script>setTimeout(() => { document.getElementById("app").innerHTML = "<h1 id=\\"rendered\\">Rendered by JavaScript</h1>"; }, 50);</script></body></html>',
      );
      return true;
    case '/js-shell':
      html(
        res,
        '<!doctype html><html><head><title>App</title></head><body><noscript>You need to enable JavaScript to run this app.</noscript><div id="root"></div><script>document.getElementById("root").textContent = "Shell rendered";</script></body></html>',
      );
      return true;
    case '/late': {
      const ms = Number(u.searchParams.get('ms') ?? '500');
      html(
        res,
        `<!doctype html><html><body><p>Waiting</p><script>setTimeout(() => { const p = document.createElement("p"); p.id = "late"; p.textContent = "Late text arrived"; document.body.appendChild(p); }, ${ms});</script></body></html>`,
      );
      return true;
    }
    case '/actions':
      html(
        res,
        `<!doctype html><html><head><title>Actions</title></head><body style="margin:0">
<h1>Actions page</h1>
<button id="btn" onclick="document.getElementById('out').textContent = 'clicked'">Press</button><p id="out">not clicked</p>
<input id="name" oninput="document.getElementById('echo').textContent = 'echo ' + this.value"><p id="echo"></p>
<select id="pick" onchange="document.getElementById('picked').textContent = 'picked ' + this.value"><option value="a">A</option><option value="b">B</option></select><p id="picked"></p>
<div id="hover" onmouseenter="document.getElementById('hover-out').textContent = 'hovered'">Hover me</div><p id="hover-out"></p>
<a id="nav" href="/page">Go elsewhere</a>
<a id="popup" href="/page" target="_blank">New window</a>
<button id="open" onclick="window.open('/page')">Open</button>
<a id="download" href="/file.bin">Download</a>
<a id="download-attr" href="/page" download="page.html">Save</a>
<div style="height:5000px"></div><p id="bottom">The end</p><p id="bottom-seen"></p>
<script>addEventListener('scroll', () => { if (innerHeight + scrollY >= document.body.scrollHeight - 50) { const s = document.getElementById('bottom-seen'); s.textContent = 'bottom reached'; } });</script>
</body></html>`,
      );
      return true;
    case '/file.bin':
      res.writeHead(200, { 'content-type': 'application/octet-stream', 'content-disposition': 'attachment; filename="file.bin"' });
      res.end(Buffer.alloc(2048, 1));
      return true;
    case '/cookies/set': {
      const name = u.searchParams.get('name') ?? 'a';
      const value = u.searchParams.get('value') ?? 'b';
      html(res, `<!doctype html><html><body><p>set ${escapeHtml(name)}=${escapeHtml(value)}</p></body></html>`, 200, {
        'set-cookie': `${name}=${value}; Path=/`,
      });
      return true;
    }
    case '/cookies/show':
      html(res, `<!doctype html><html><body><pre id="cookies">${escapeHtml(req.headers.cookie ?? '(none)')}</pre></body></html>`);
      return true;
    case '/images': {
      const n = Math.min(200, Number(u.searchParams.get('n') ?? '40'));
      const imgs = Array.from({ length: n }, (_, i) => `<img src="/img/${i}.png?size=60000" width="40" height="40">`).join('');
      html(res, `<!doctype html><html><head><title>Gallery</title></head><body><h1>Image gallery</h1>${imgs}</body></html>`);
      return true;
    }
    case '/ua':
      html(res, `<!doctype html><html><body><p id="ua">${escapeHtml(req.headers['user-agent'] ?? '')}</p></body></html>`);
      return true;
    case '/headers': {
      const lines = Object.entries(req.headers).map(([k, v]) => `${k}: ${Array.isArray(v) ? v.join(', ') : v}`);
      html(res, `<!doctype html><html><body><pre>${escapeHtml(lines.join('\n'))}</pre></body></html>`);
      return true;
    }
    case '/geo':
      html(
        res,
        '<!doctype html><html><body><p id="tz"></p><script>document.getElementById("tz").textContent = "tz " + Intl.DateTimeFormat().resolvedOptions().timeZone;</script></body></html>',
      );
      return true;
    case '/console-errors':
      html(res, '<!doctype html><html><body><p>errors</p><script>console.error("first"); console.error("second");</script></body></html>');
      return true;
    case '/challenge':
      html(
        res,
        '<!doctype html><html><head><title>Just a moment...</title></head><body><p>Checking your browser before accessing the site.</p><script>window._cf_chl_opt = { cType: "managed" };</script></body></html>',
        403,
        { 'cf-mitigated': 'challenge' },
      );
      return true;
    case '/blocked/datadome':
      // A DataDome-style block page: the vendor's captcha script on a 403.
      html(
        res,
        '<!doctype html><html><head><title>blocked</title></head><body><script src="https://ct.captcha-delivery.com/c.js"></script><p>Please enable JS</p></body></html>',
        403,
      );
      return true;
    case '/blocked/rate':
      // A rate-limit interstitial: only its 429 makes the phrase a challenge.
      html(
        res,
        '<!doctype html><html><body><h1>Sorry</h1><p>We have detected unusual traffic from your computer network.</p></body></html>',
        429,
      );
      return true;
    case '/unusual-traffic-article':
      // The same phrase on an ordinary 200 page is content, not a challenge.
      html(
        res,
        '<!doctype html><html><body><h1>How sites detect unusual traffic from your computer network</h1><p>An article.</p></body></html>',
      );
      return true;
    case '/big': {
      // About `mb` million bytes of HTML (10 MB stays under the 10 MiB result limit).
      const mb = Math.min(10, Number(u.searchParams.get('mb') ?? '1'));
      const row = '<p>' + 'lorem ipsum dolor sit amet '.repeat(36) + '</p>\n';
      const rows = Math.floor((mb * 1_000_000 - 200) / Buffer.byteLength(row));
      res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
      res.write('<!doctype html><html><head><title>Big</title></head><body><h1>Big page</h1>');
      res.end(row.repeat(rows) + '</body></html>');
      return true;
    }
  }
  const img = /^\/img\/(\d+)\.png$/.exec(u.pathname);
  if (img) {
    const size = Math.min(500_000, Number(u.searchParams.get('size') ?? '60000'));
    // A little latency per image, like a real CDN: blocking images is measurably faster.
    const t = setTimeout(() => {
      res.writeHead(200, { 'content-type': 'image/png', 'cache-control': 'no-store' });
      res.end(pngOf(size));
    }, 30);
    res.on('close', () => clearTimeout(t));
    return true;
  }
  return false;
}
