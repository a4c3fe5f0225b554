// A resumable Streamable HTTP MCP server built on the TypeScript SDK v1
// (@modelcontextprotocol/sdk, pinned in package.json). mcpscope's tests use it
// as the "rejoin" peer: drop a POST stream mid-call, GET with Last-Event-ID,
// and it replays what was missed, goes on live until the result, then closes.
//
//   PORT=N node ts-v1-resumable.mjs      -> prints "listening http://127.0.0.1:N/mcp"
//
// Event ids are "<streamId>.<seq>" (seq counts from 1 per stream).
// Tools: echo {text}; slow {steps, intervalMs} (progress each step);
// drop_stream {steps, intervalMs} (closeSSEStream() after the first step,
// SEP-1699 server-side disconnect; retry: RETRY_MS, default 500).
// An unknown Mcp-Session-Id gets 404 JSON-RPC -32001 (from the SDK's own answer shape).
import { createServer } from 'node:http';
import { randomUUID } from 'node:crypto';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { isInitializeRequest } from '@modelcontextprotocol/sdk/types.js';
import * as z from 'zod';

const port = Number(process.env.PORT || 0);
const retryInterval = Number(process.env.RETRY_MS || 500);

// In-memory event store shared by all sessions. Stream ids from the SDK are
// UUIDs or "_GET_stream" (no dots), so the last "." splits id from sequence.
class SeqEventStore {
  streams = new Map(); // streamId -> [{seq, message}]
  split(eventId) {
    const i = eventId.lastIndexOf('.');
    if (i <= 0) return [undefined, 0];
    return [eventId.slice(0, i), Number(eventId.slice(i + 1))];
  }
  async storeEvent(streamId, message) {
    let events = this.streams.get(streamId);
    if (!events) this.streams.set(streamId, (events = []));
    const seq = events.length + 1;
    events.push({ seq, message });
    return `${streamId}.${seq}`;
  }
  async getStreamIdForEventId(eventId) {
    const [streamId] = this.split(eventId);
    return this.streams.has(streamId) ? streamId : undefined;
  }
  async replayEventsAfter(lastEventId, { send }) {
    const [streamId, after] = this.split(lastEventId);
    const events = this.streams.get(streamId);
    if (!events) return '';
    for (const e of events) if (e.seq > after) await send(`${streamId}.${e.seq}`, e.message);
    return streamId;
  }
}

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const stepsArgs = { steps: z.number().int().min(1).max(1000).default(5), intervalMs: z.number().int().min(0).max(60000).default(200) };

function makeServer() {
  const server = new McpServer({ name: 'ts-v1-resumable', version: '1.0.0' }, { capabilities: { logging: {} } });
  server.registerTool('echo', { description: 'Echoes text back', inputSchema: { text: z.string() } },
    async ({ text }) => ({ content: [{ type: 'text', text }] }));
  const stepper = (drop) => async ({ steps, intervalMs }, extra) => {
    const token = extra._meta?.progressToken;
    for (let i = 1; i <= steps; i++) {
      await sleep(intervalMs);
      if (extra.signal.aborted) throw new Error('cancelled');
      if (token !== undefined) {
        await extra.sendNotification({ method: 'notifications/progress', params: { progressToken: token, progress: i, total: steps, message: `step ${i}/${steps}` } });
      }
      if (drop && i === 1) extra.closeSSEStream?.(); // SEP-1699: server closes the stream; the client GETs back in
    }
    return { content: [{ type: 'text', text: `done ${steps} steps` }] };
  };
  server.registerTool('slow', { description: 'Sends progress every intervalMs for steps steps, then returns', inputSchema: stepsArgs }, stepper(false));
  server.registerTool('drop_stream', { description: 'Like slow, but the server closes the POST SSE stream after step 1 (SEP-1699)', inputSchema: stepsArgs }, stepper(true));
  return server;
}

const eventStore = new SeqEventStore();
const transports = new Map(); // sessionId -> transport

function jsonError(res, status, code, message) {
  res.writeHead(status, { 'Content-Type': 'application/json' }).end(JSON.stringify({ jsonrpc: '2.0', error: { code, message }, id: null }));
}

async function readBody(req) {
  const chunks = [];
  for await (const c of req) chunks.push(c);
  const text = Buffer.concat(chunks).toString('utf8');
  return text ? JSON.parse(text) : undefined;
}

const http = createServer(async (req, res) => {
  try {
    if (new URL(req.url, 'http://x').pathname !== '/mcp') return jsonError(res, 404, -32000, 'Not found');
    const body = req.method === 'POST' ? await readBody(req) : undefined;
    const sid = req.headers['mcp-session-id'];
    let transport;
    if (sid) {
      transport = transports.get(sid);
      if (!transport) return jsonError(res, 404, -32001, 'Session not found');
    } else if (req.method === 'POST' && isInitializeRequest(body)) {
      transport = new StreamableHTTPServerTransport({
        sessionIdGenerator: () => randomUUID(),
        eventStore,
        retryInterval,
        onsessioninitialized: (id) => transports.set(id, transport),
        onsessionclosed: (id) => transports.delete(id),
      });
      transport.onclose = () => transport.sessionId && transports.delete(transport.sessionId);
      await makeServer().connect(transport);
    } else {
      return jsonError(res, 400, -32000, 'Bad Request: Mcp-Session-Id header is required');
    }
    await transport.handleRequest(req, res, body);
  } catch (err) {
    if (!res.headersSent) jsonError(res, err instanceof SyntaxError ? 400 : 500, err instanceof SyntaxError ? -32700 : -32603, String(err.message || err));
  }
});

http.listen(port, '127.0.0.1', () => {
  process.stdout.write(`listening http://127.0.0.1:${http.address().port}/mcp\n`);
});
const stop = () => { for (const t of transports.values()) t.close().catch(() => {}); http.close(); process.exit(0); };
process.on('SIGTERM', stop);
process.on('SIGINT', stop);
