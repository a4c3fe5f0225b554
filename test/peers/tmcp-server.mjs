// An MCP server built on tmcp (an independent TypeScript implementation of
// both protocol eras), pinned in package.json.
//
//   PORT=N node tmcp-server.mjs       -> Streamable HTTP on 127.0.0.1:N/mcp; prints "listening <url>"
//   node tmcp-server.mjs stdio        -> stdio
//
// Tools: echo {text}; slow {steps, intervalMs} (progress each step).
// Quirks seen on the wire (peers.md): it ignores notifications/cancelled for
// tools/call on stdio, and it does not exit on stdin EOF.
import { McpServer } from 'tmcp';
import { ValibotJsonSchemaAdapter } from '@tmcp/adapter-valibot';
import { StdioTransport } from '@tmcp/transport-stdio';
import { HttpTransport } from '@tmcp/transport-http';
import * as v from 'valibot';
import { serveFetch } from './fetch-adapter.mjs';

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

const server = new McpServer(
  { name: 'tmcp-peer', version: '1.20.0', description: 'mcpscope test peer on tmcp' },
  { adapter: new ValibotJsonSchemaAdapter(), capabilities: { tools: {} } },
);
server.tool({ name: 'echo', description: 'Echoes text back', schema: v.object({ text: v.string() }) },
  async ({ text }) => ({ content: [{ type: 'text', text }] }));
server.tool({
  name: 'slow', description: 'Reports progress every intervalMs for steps steps',
  schema: v.object({ steps: v.optional(v.number(), 3), intervalMs: v.optional(v.number(), 50) }),
}, async ({ steps, intervalMs }) => {
  for (let i = 1; i <= steps; i++) {
    await sleep(intervalMs);
    server.progress(i, steps, `step ${i}/${steps}`);
  }
  return { content: [{ type: 'text', text: `done ${steps} steps` }] };
});

if (process.argv[2] === 'stdio') {
  new StdioTransport(server).listen();
} else {
  const transport = new HttpTransport(server);
  serveFetch('tmcp-server', (req) => transport.respond(req));
}
