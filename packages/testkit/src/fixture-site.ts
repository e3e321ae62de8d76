import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

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
 */
export async function startFixtureSite(): Promise<FixtureSite> {
  const hits = new Map<string, number>();
  const handler = (req: IncomingMessage, res: ServerResponse) => {
    const u = new URL(req.url ?? '/', 'http://fixture');
    hits.set(u.pathname, (hits.get(u.pathname) ?? 0) + 1);
    if (u.pathname === '/page') {
      res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
      res.end('<!doctype html><html><head><title>Fixture page</title></head><body><h1>Hello from the fixture site</h1><p class="price">42.00</p></body></html>');
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
