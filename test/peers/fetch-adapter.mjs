// Serves a fetch-style handler ((Request) => Promise<Response | null>) on
// 127.0.0.1 with node:http, streaming the response body as it comes (SSE
// must not be buffered), and prints "listening <url>" once it accepts
// connections. For the peers built on fetch-first MCP libraries.
import { createServer } from 'node:http';

export function serveFetch(name, handle) {
  const http = createServer(async (req, res) => {
    try {
      const url = new URL(req.url, `http://${req.headers.host}`);
      if (url.pathname !== '/mcp') {
        res.writeHead(404, { 'Content-Type': 'text/plain' }).end('not found\n');
        return;
      }
      const chunks = [];
      for await (const c of req) chunks.push(c);
      const body = chunks.length ? Buffer.concat(chunks) : undefined;
      const ctrl = new AbortController();
      res.on('close', () => ctrl.abort());
      const request = new Request(url, { method: req.method, headers: req.headers, body: req.method === 'GET' || req.method === 'HEAD' ? undefined : body, signal: ctrl.signal });
      const response = (await handle(request)) ?? new Response(null, { status: 404 });
      res.writeHead(response.status, Object.fromEntries(response.headers));
      if (!response.body) return res.end();
      const reader = response.body.getReader();
      for (;;) {
        const { done, value } = await reader.read();
        if (done) break;
        res.write(value);
      }
      res.end();
    } catch (e) {
      if (!res.headersSent) res.writeHead(500, { 'Content-Type': 'text/plain' });
      res.end(`${name}: ${e.message}\n`);
    }
  });
  http.listen(Number(process.env.PORT || 0), '127.0.0.1', () => {
    process.stdout.write(`listening http://127.0.0.1:${http.address().port}/mcp\n`);
  });
  const stop = () => { http.close(); process.exit(0); };
  process.on('SIGTERM', stop);
  process.on('SIGINT', stop);
}
