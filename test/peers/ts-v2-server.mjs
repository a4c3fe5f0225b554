// A 2026-07-28 MCP server built on the TypeScript SDK v2 (@modelcontextprotocol/server
// + @modelcontextprotocol/node, pinned in package.json). It also serves 2025-era
// clients, statelessly (the SDK's default legacy fallback).
//
//   PORT=N node ts-v2-server.mjs         -> HTTP on 127.0.0.1:N, path /mcp; prints "listening http://127.0.0.1:N/mcp"
//   node ts-v2-server.mjs stdio          -> stdio (nothing but protocol on stdout)
//
// Tools: echo {text}; slow {steps, intervalMs} (progress each step when the
// request has a progressToken); confirm {action} (MRTR: answers input_required
// with an embedded form elicitation "confirm" until the retry carries an
// accepted {confirm: true}).
import { createServer } from 'node:http';
import { McpServer, createMcpHandler, inputRequired, acceptedContent } from '@modelcontextprotocol/server';
import { serveStdio } from '@modelcontextprotocol/server/stdio';
import { toNodeHandler, localhostHostValidation } from '@modelcontextprotocol/node';
import * as z from 'zod';

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

function factory() {
  const server = new McpServer({ name: 'ts-v2-server', version: '1.0.0' }, { capabilities: { tools: {} } });
  server.registerTool('echo', { description: 'Echoes text back', inputSchema: z.object({ text: z.string() }) },
    async ({ text }) => ({ content: [{ type: 'text', text }] }));
  server.registerTool('slow', {
    description: 'Sends progress every intervalMs for steps steps, then returns',
    inputSchema: z.object({ steps: z.number().int().min(1).max(1000).default(5), intervalMs: z.number().int().min(0).max(60000).default(200) }),
  }, async ({ steps, intervalMs }, ctx) => {
    const token = ctx.mcpReq._meta?.progressToken;
    for (let i = 1; i <= steps; i++) {
      await sleep(intervalMs);
      if (ctx.mcpReq.signal.aborted) throw new Error('cancelled');
      if (token !== undefined) {
        await ctx.mcpReq.notify({ method: 'notifications/progress', params: { progressToken: token, progress: i, total: steps, message: `step ${i}/${steps}` } });
      }
    }
    return { content: [{ type: 'text', text: `done ${steps} steps` }] };
  });
  const confirmation = z.object({ confirm: z.boolean() });
  server.registerTool('confirm', {
    description: 'Asks the client to confirm (MRTR input_required + elicitation), then returns',
    inputSchema: z.object({ action: z.string().default('deploy') }),
  }, async ({ action }, ctx) => {
    const answer = acceptedContent(ctx.mcpReq.inputResponses, 'confirm', confirmation);
    if (answer?.confirm !== true) {
      return inputRequired({ inputRequests: { confirm: inputRequired.elicit({ message: `Really ${action}?`, requestedSchema: confirmation }) } });
    }
    return { content: [{ type: 'text', text: `confirmed: ${action}` }] };
  });
  return server;
}

if (process.argv[2] === 'stdio') {
  serveStdio(factory, { onerror: (e) => process.stderr.write(`ts-v2-server: ${e.message}\n`) });
} else {
  const handler = createMcpHandler(factory, { onerror: (e) => process.stderr.write(`ts-v2-server: ${e.message}\n`) });
  const serve = toNodeHandler(handler);
  const validateHost = localhostHostValidation();
  const http = createServer((req, res) => {
    if (!validateHost(req, res)) return;
    if (new URL(req.url, 'http://x').pathname !== '/mcp') {
      res.writeHead(404, { 'Content-Type': 'text/plain' }).end('not found\n');
      return;
    }
    serve(req, res);
  });
  http.listen(Number(process.env.PORT || 0), '127.0.0.1', () => {
    process.stdout.write(`listening http://127.0.0.1:${http.address().port}/mcp\n`);
  });
  const stop = () => { handler.close().catch(() => {}); http.close(); process.exit(0); };
  process.on('SIGTERM', stop);
  process.on('SIGINT', stop);
}
