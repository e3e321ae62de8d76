import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import type { Express } from 'express';

/**
 * The public API reference, served without authentication: the committed OpenAPI document
 * (packages/contracts/openapi/openapi.json, generated from the controllers) as JSON, and a static
 * HTML page rendered from it on the server. Both are built on the first request; the page has no scripts,
 * no external assets and every document string is escaped.
 */
export const OPENAPI_PATH = '/api/v1/openapi.json';
export const DOCS_PATH = '/api/v1/docs';

// An OpenAPI document is walked generically.
type Doc = Record<string, any>;

const METHODS = ['get', 'post', 'put', 'patch', 'delete', 'head', 'options'] as const;

/** The committed document, resolved through the @wdr/contracts package export. */
export function loadOpenApiDocument(): { text: string; doc: Doc } {
  const file = createRequire(import.meta.url).resolve('@wdr/contracts/openapi.json');
  const text = readFileSync(file, 'utf8');
  return { text, doc: JSON.parse(text) as Doc };
}

export function escapeHtml(value: unknown): string {
  return String(value ?? '').replace(
    /[&<>"']/g,
    (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c] as string,
  );
}

/** `#/components/schemas/SubmissionResponse` → `SubmissionResponse`; inline schemas by type. */
function schemaName(schema: Doc | undefined): string {
  if (!schema) return '';
  if (typeof schema['$ref'] === 'string') return schema['$ref'].split('/').pop() ?? '';
  if (schema['type'] === 'array') return `${schemaName(schema['items']) || 'any'}[]`;
  for (const k of ['allOf', 'oneOf', 'anyOf']) {
    if (Array.isArray(schema[k]))
      return (schema[k] as Doc[])
        .map(schemaName)
        .filter(Boolean)
        .join(k === 'allOf' ? ' & ' : ' | ');
  }
  return typeof schema['type'] === 'string' ? schema['type'] : 'object';
}

function bodySchemas(content: Doc | undefined): string {
  if (!content) return '';
  return Object.entries(content)
    .map(([type, media]) => `<code>${escapeHtml(type)}</code> ${escapeHtml(schemaName((media as Doc)['schema']))}`)
    .join(', ');
}

function slug(text: string): string {
  return text
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-|-$/g, '');
}

interface Operation {
  method: string;
  path: string;
  op: Doc;
}

function renderOperation({ method, path, op }: Operation): string {
  const id = slug(op['operationId'] ?? `${method}-${path}`);
  const params = (op['parameters'] ?? []) as Doc[];
  const parts = [
    `<section class="op" id="${escapeHtml(id)}">`,
    `<h3><span class="method ${escapeHtml(method)}">${escapeHtml(method.toUpperCase())}</span> <code>${escapeHtml(path)}</code></h3>`,
  ];
  if (op['summary']) parts.push(`<p class="summary">${escapeHtml(op['summary'])}</p>`);
  if (op['description']) parts.push(`<pre class="description">${escapeHtml(op['description'])}</pre>`);
  if (Array.isArray(op['security']) && op['security'].length > 0) {
    parts.push(`<p>Authentication: ${escapeHtml((op['security'] as Doc[]).flatMap((s) => Object.keys(s)).join(' or '))}</p>`);
  }
  if (params.length > 0) {
    parts.push('<table><caption>Parameters</caption><tr><th>name</th><th>in</th><th>required</th><th>schema</th><th>description</th></tr>');
    for (const p of params) {
      parts.push(
        `<tr><td><code>${escapeHtml(p['name'])}</code></td><td>${escapeHtml(p['in'])}</td><td>${p['required'] ? 'yes' : 'no'}</td>` +
          `<td>${escapeHtml(schemaName(p['schema']))}</td><td>${escapeHtml(p['description'])}</td></tr>`,
      );
    }
    parts.push('</table>');
  }
  const body = op['requestBody'] as Doc | undefined;
  if (body) parts.push(`<p>Request body${body['required'] ? ' (required)' : ''}: ${bodySchemas(body['content'])}</p>`);
  const responses = Object.entries((op['responses'] ?? {}) as Doc);
  if (responses.length > 0) {
    parts.push('<table><caption>Responses</caption><tr><th>status</th><th>description</th><th>body</th></tr>');
    for (const [status, r] of responses) {
      parts.push(
        `<tr><td>${escapeHtml(status)}</td><td>${escapeHtml((r as Doc)['description'])}</td><td>${bodySchemas((r as Doc)['content'])}</td></tr>`,
      );
    }
    parts.push('</table>');
  }
  parts.push('</section>');
  return parts.join('\n');
}

/** The whole reference page: operations grouped by their first tag, tags in document then name order. */
export function renderReferencePage(doc: Doc): string {
  const groups = new Map<string, Operation[]>();
  for (const [path, item] of Object.entries((doc['paths'] ?? {}) as Doc)) {
    for (const method of METHODS) {
      const op = (item as Doc)[method] as Doc | undefined;
      if (!op) continue;
      const tag = (Array.isArray(op['tags']) && op['tags'][0]) || 'Other';
      groups.set(tag, [...(groups.get(tag) ?? []), { method, path, op }]);
    }
  }
  const tags = [...groups.keys()].sort((a, b) => a.localeCompare(b));
  const info = (doc['info'] ?? {}) as Doc;
  const title = `${info['title'] ?? 'API'} ${info['version'] ?? ''}`.trim();
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${escapeHtml(title)} reference</title>
<style>
body{font-family:system-ui,sans-serif;max-width:70rem;margin:0 auto;padding:1rem;line-height:1.4}
code,pre{font-family:ui-monospace,monospace}pre.description{white-space:pre-wrap;background:#f6f6f6;padding:.5rem}
table{border-collapse:collapse;margin:.5rem 0;width:100%}td,th{border:1px solid #ccc;padding:.2rem .4rem;text-align:left;vertical-align:top}
caption{text-align:left;font-weight:bold}.op{border-top:1px solid #ddd;padding-top:.5rem}
.method{display:inline-block;min-width:4rem;font-weight:bold}.get{color:#0a6}.post{color:#06c}.patch,.put{color:#a60}.delete{color:#c00}
</style>
</head>
<body>
<h1>${escapeHtml(title)}</h1>
<p>${escapeHtml(info['description'])}</p>
<p>Machine-readable document: <a href="${OPENAPI_PATH}">${OPENAPI_PATH}</a> (OpenAPI ${escapeHtml(doc['openapi'])}).</p>
<nav><h2>Contents</h2><ul>
${tags.map((t) => `<li><a href="#tag-${escapeHtml(slug(t))}">${escapeHtml(t)}</a> (${groups.get(t)?.length ?? 0})</li>`).join('\n')}
</ul></nav>
${tags.map((t) => `<h2 id="tag-${escapeHtml(slug(t))}">${escapeHtml(t)}</h2>\n${(groups.get(t) ?? []).map(renderOperation).join('\n')}`).join('\n')}
</body>
</html>
`;
}

/**
 * Mounts both routes (before the tsoa routes; neither needs a key). The document (550 KB of JSON)
 * and the page are read and rendered on the first request for either and kept from then on, not at
 * boot: most gateways never serve them, and an idle process should not hold them (issue 24). The
 * file is still resolved at boot, so a build without it fails to start rather than on the request.
 */
export function mountApiReference(app: Express, load: () => { text: string; doc: Doc } = loadOpenApiDocument): void {
  createRequire(import.meta.url).resolve('@wdr/contracts/openapi.json');
  let served: { text: string; page: string } | undefined;
  const reference = () => {
    if (!served) {
      const loaded = load();
      served = { text: loaded.text, page: renderReferencePage(loaded.doc) };
    }
    return served;
  };
  app.get(OPENAPI_PATH, (_req, res) => {
    res.type('application/json').set('Cache-Control', 'public, max-age=300').send(reference().text);
  });
  app.get(DOCS_PATH, (_req, res) => {
    res
      .type('html')
      .set('Cache-Control', 'public, max-age=300')
      .set(
        'Content-Security-Policy',
        "default-src 'none'; style-src 'unsafe-inline'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'",
      )
      .send(reference().page);
  });
}
