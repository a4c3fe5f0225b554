// An MCP server built on mcp-lite (an independent, fetch-first TypeScript
// implementation that speaks only 2025-03-26 and 2025-06-18), pinned in
// package.json. Stateless Streamable HTTP:
//
//   PORT=N node mcp-lite-server.mjs   -> 127.0.0.1:N/mcp; prints "listening <url>"
//
// Tools: echo {text}. It answers server/discover with HTTP 400 / -32602 and
// negotiates 2025-03-26 rather than its latest (peers.md).
import { McpServer, StreamableHttpTransport } from 'mcp-lite';
import { serveFetch } from './fetch-adapter.mjs';

const mcp = new McpServer({ name: 'mcp-lite-peer', version: '0.10.0' });
mcp.tool('echo', {
  description: 'Echoes text back',
  inputSchema: { type: 'object', properties: { text: { type: 'string' } }, required: ['text'] },
  handler: (args) => ({ content: [{ type: 'text', text: args.text }] }),
});
const handle = new StreamableHttpTransport().bind(mcp);
serveFetch('mcp-lite-server', handle);
