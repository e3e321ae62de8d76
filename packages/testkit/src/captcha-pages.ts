import type { IncomingMessage, ServerResponse } from 'node:http';

/**
 * Fixture pages behind a CAPTCHA, one per widget the browser stage knows:
 *   /captcha/recaptcha   `<div class="g-recaptcha" data-sitekey data-callback="onSolved">`
 *   /captcha/hcaptcha    `<div class="h-captcha" ...>`
 *   /captcha/turnstile   `<div class="cf-turnstile" ...>`
 * (`?sitekey=` overrides the site key, e.g. the solver's UNSOLVABLE_SITEKEY). A small inline script
 * plays the widget: it adds the response field, and its callback posts the token to
 * /captcha/verify, which asks the solver server's siteverify whether it minted that token and
 * answers the protected content only then; the page shows it in `#protected`.
 */
const WIDGETS = {
  recaptcha: {
    cls: 'g-recaptcha',
    field: '<textarea id="g-recaptcha-response" name="g-recaptcha-response" style="display:none"></textarea>',
    sitekey: '6Lc-fixture-recaptcha-sitekey',
  },
  hcaptcha: {
    cls: 'h-captcha',
    field: '<textarea name="h-captcha-response" style="display:none"></textarea>',
    sitekey: '10000000-ffff-ffff-ffff-000000000001',
  },
  turnstile: { cls: 'cf-turnstile', field: '<input type="hidden" name="cf-turnstile-response">', sitekey: '0x4AAAAAAAfixtureTurnstile' },
} as const;

/** The text `#protected` shows once the token was verified. */
export const CAPTCHA_PROTECTED_TEXT = 'Protected content: the CAPTCHA was passed';

const escapeAttr = (v: string) => v.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

/** Serve a CAPTCHA page or the verify endpoint; false when the path is not one of them. */
export function captchaPage(u: URL, req: IncomingMessage, res: ServerResponse, verifyUrl: string | undefined): boolean {
  const kind = /^\/captcha\/(recaptcha|hcaptcha|turnstile)$/.exec(u.pathname)?.[1] as keyof typeof WIDGETS | undefined;
  if (kind) {
    const w = WIDGETS[kind];
    const sitekey = u.searchParams.get('sitekey') ?? w.sitekey;
    res.writeHead(200, { 'content-type': 'text/html; charset=utf-8', 'cache-control': 'no-store' });
    res.end(`<!doctype html><html><head><title>Protected page</title></head><body>
<h1>Please prove you are a person</h1>
<form id="gate"><div class="${w.cls}" data-sitekey="${escapeAttr(sitekey)}" data-callback="onSolved">${w.field}</div></form>
<p id="protected">locked</p>
<script>
function onSolved(token) {
  fetch('/captcha/verify', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ token: token }) })
    .then(function (r) { return r.json(); })
    .then(function (j) { document.getElementById('protected').textContent = j.ok ? j.content : 'verification failed'; });
}
</script>
</body></html>`);
    return true;
  }
  if (u.pathname === '/captcha/verify' && req.method === 'POST') {
    void verify(req, res, verifyUrl);
    return true;
  }
  return false;
}

async function verify(req: IncomingMessage, res: ServerResponse, verifyUrl: string | undefined): Promise<void> {
  const chunks: Buffer[] = [];
  for await (const c of req) chunks.push(c as Buffer);
  let ok = false;
  try {
    const { token } = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { token?: string };
    if (verifyUrl && typeof token === 'string' && token.length > 0) {
      const answer = await fetch(verifyUrl, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({ secret: 'fixture', response: token }),
      });
      ok = ((await answer.json()) as { success?: boolean }).success === true;
    }
  } catch {
    ok = false;
  }
  res.writeHead(ok ? 200 : 403, { 'content-type': 'application/json' });
  res.end(JSON.stringify(ok ? { ok, content: CAPTCHA_PROTECTED_TEXT } : { ok }));
}
