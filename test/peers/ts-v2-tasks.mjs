// A 2026-07-28 MCP server (TypeScript SDK v2, @modelcontextprotocol/server +
// @modelcontextprotocol/node) that offers the Tasks extension
// io.modelcontextprotocol/tasks (SEP-2663). The SDK carries the protocol
// (server/discover, _meta, headers, tools/call); it does not implement the
// extension, so this script does: task state lives in this process, the
// tasks/get|update|cancel handlers are registered with explicit schemas, and a
// subscriptions/listen asking for taskIds is served here (SSE) with
// notifications/tasks for those tasks.
//
//   PORT=N node ts-v2-tasks.mjs   -> HTTP on 127.0.0.1:N, path /mcp; prints "listening http://127.0.0.1:N/mcp"
//
// Tools: report {topic, steps, intervalMs} runs as a task when the request
// declares the extension (otherwise it throws -32021, which the SDK turns into
// an isError tool result): "working" for steps*intervalMs,
// then "completed" with the text "report: <topic>". echo {text} never does.
// review {topic, holdMs} runs as a task that asks for input: after one step it
// turns input_required with an elicitation/create under the key
// "approve-<topic>"; a tasks/update answering that key (accept with
// {approve:true}, or anything else) is applied after holdMs (the ack is
// eventually consistent, so polls in between still show the request), and the
// task completes with "review: <topic> approved" or "... rejected". Answers to
// keys that are not outstanding are ignored, as the extension says. Every
// tasks/update is counted; the tool "updates" returns the count per key.
import { createServer } from 'node:http';
import { randomUUID } from 'node:crypto';
import { McpServer, createMcpHandler, ProtocolError } from '@modelcontextprotocol/server';
import { toNodeHandler, localhostHostValidation } from '@modelcontextprotocol/node';
import * as z from 'zod';

const EXT = 'io.modelcontextprotocol/tasks';
const CLIENT_CAPS = 'io.modelcontextprotocol/clientCapabilities';
const tasks = new Map(); // taskId -> {task, timer}
const watchers = new Set(); // {ids:Set, send(task)}

const now = () => new Date().toISOString();
const view = (t) => ({ ...t.task });

function update(t, fields) {
  Object.assign(t.task, fields, { lastUpdatedAt: now() });
  for (const w of watchers) if (w.ids.has(t.task.taskId)) w.send(view(t));
}

function startTask(topic, steps, intervalMs) {
  const at = now();
  const t = { task: { taskId: randomUUID(), status: 'working', statusMessage: `step 0/${steps}`, createdAt: at, lastUpdatedAt: at, ttlMs: 600000, pollIntervalMs: 100 } };
  tasks.set(t.task.taskId, t);
  let i = 0;
  const tick = () => {
    if (t.task.status !== 'working') return;
    i++;
    if (i < steps) {
      update(t, { statusMessage: `step ${i}/${steps}` });
      t.timer = setTimeout(tick, intervalMs);
      return;
    }
    update(t, { status: 'completed', statusMessage: 'done', result: { content: [{ type: 'text', text: `report: ${topic}` }], isError: false } });
  };
  t.timer = setTimeout(tick, intervalMs);
  return t;
}

const updates = {}; // inputResponses key -> how many tasks/update carried it

function startReview(topic, holdMs) {
  const at = now();
  const t = { task: { taskId: randomUUID(), status: 'working', statusMessage: 'reading the draft', createdAt: at, lastUpdatedAt: at, ttlMs: 600000, pollIntervalMs: 100 } };
  tasks.set(t.task.taskId, t);
  const key = `approve-${topic}`;
  t.timer = setTimeout(() => {
    update(t, { status: 'input_required', statusMessage: 'waiting for approval', inputRequests: { [key]: {
      method: 'elicitation/create',
      params: { mode: 'form', message: `Publish the review of ${topic}?`, requestedSchema: { type: 'object', properties: { approve: { type: 'boolean', title: 'Approve' } }, required: ['approve'] } },
    } } });
  }, 100);
  t.answer = (responses) => {
    const r = responses?.[key];
    if (r === undefined || t.task.status !== 'input_required' || t.answered) return;
    t.answered = true;
    const ok = r.action === 'accept' && r.content?.approve === true;
    t.timer = setTimeout(() => {
      delete t.task.inputRequests;
      update(t, { status: 'completed', statusMessage: 'done', result: { content: [{ type: 'text', text: `review: ${topic} ${ok ? 'approved' : 'rejected'}` }], isError: false } });
    }, holdMs);
  };
  return t;
}

function known(taskId) {
  const t = tasks.get(taskId);
  if (!t) throw new ProtocolError(-32602, `unknown task ${taskId}`);
  return t;
}

const taskParams = z.object({ taskId: z.string() }).passthrough();

function factory() {
  const mcp = new McpServer({ name: 'ts-v2-tasks', version: '1.0.0' }, { capabilities: { tools: {}, extensions: { [EXT]: {} } } });
  mcp.registerTool('echo', { description: 'Echoes text back', inputSchema: z.object({ text: z.string() }) },
    async ({ text }) => ({ content: [{ type: 'text', text }] }));
  mcp.registerTool('report', {
    description: 'Runs as a task (tasks extension): works for steps*intervalMs, then completes',
    inputSchema: z.object({ topic: z.string().default('tides'), steps: z.number().int().min(1).max(1000).default(5), intervalMs: z.number().int().min(0).max(60000).default(200) }),
  }, async ({ topic, steps, intervalMs }) => {
    if (!mcp.server.getClientCapabilities()?.extensions?.[EXT]) {
      throw new ProtocolError(-32021, 'Missing required client capability', { requiredCapabilities: { extensions: { [EXT]: {} } } });
    }
    const t = startTask(topic, steps, intervalMs);
    return { resultType: 'task', ...view(t) };
  });
  mcp.registerTool('review', {
    description: 'Runs as a task that asks for approval (input_required, answered with tasks/update)',
    inputSchema: z.object({ topic: z.string().default('tides'), holdMs: z.number().int().min(0).max(60000).default(300) }),
  }, async ({ topic, holdMs }) => {
    if (!mcp.server.getClientCapabilities()?.extensions?.[EXT]) {
      throw new ProtocolError(-32021, 'Missing required client capability', { requiredCapabilities: { extensions: { [EXT]: {} } } });
    }
    return { resultType: 'task', ...view(startReview(topic, holdMs)) };
  });
  mcp.registerTool('updates', { description: 'How many tasks/update requests carried each inputResponses key', inputSchema: z.object({}) },
    async () => ({ content: [{ type: 'text', text: JSON.stringify(updates) }] }));
  mcp.server.setRequestHandler('tasks/get', { params: taskParams }, async ({ taskId }) => ({ resultType: 'complete', ...view(known(taskId)) }));
  // The SDK lifts inputResponses (an MRTR retry field) out of every request's
  // params into ctx.mcpReq.inputResponses, so that is where they are read.
  mcp.server.setRequestHandler('tasks/update', { params: taskParams }, async ({ taskId }, ctx) => {
    const t = known(taskId);
    const inputResponses = ctx.mcpReq.inputResponses || {};
    for (const k of Object.keys(inputResponses)) updates[k] = (updates[k] || 0) + 1;
    t.answer?.(inputResponses);
    return { resultType: 'complete' };
  });
  mcp.server.setRequestHandler('tasks/cancel', { params: taskParams }, async ({ taskId }) => {
    const t = known(taskId);
    if (t.task.status === 'working' || t.task.status === 'input_required') {
      clearTimeout(t.timer);
      update(t, { status: 'cancelled', statusMessage: 'cancelled by the client' });
    }
    return { resultType: 'complete' };
  });
  return mcp;
}

// serveTaskListen answers a subscriptions/listen that asks for taskIds: an
// SSE stream, acknowledged with the known ids, then notifications/tasks for
// each, starting with their current state.
function serveTaskListen(msg, res) {
  const caps = msg.params?._meta?.[CLIENT_CAPS];
  if (!caps?.extensions?.[EXT]) {
    res.writeHead(200, { 'Content-Type': 'application/json' }).end(JSON.stringify({ jsonrpc: '2.0', id: msg.id,
      error: { code: -32021, message: 'Missing required client capability', data: { requiredCapabilities: { extensions: { [EXT]: {} } } } } }));
    return;
  }
  const subscriptionId = msg.id; // the listen request's id names the subscription
  const ids = new Set((msg.params.notifications.taskIds || []).filter((id) => tasks.has(id)));
  const meta = { 'io.modelcontextprotocol/subscriptionId': subscriptionId };
  res.writeHead(200, { 'Content-Type': 'text/event-stream', 'Cache-Control': 'no-cache' });
  const send = (method, params) => res.write(`data: ${JSON.stringify({ jsonrpc: '2.0', method, params: { ...params, _meta: meta } })}\n\n`);
  send('notifications/subscriptions/acknowledged', { notifications: { taskIds: [...ids] } });
  const w = { ids, send: (task) => send('notifications/tasks', task) };
  watchers.add(w);
  res.on('close', () => watchers.delete(w));
  for (const id of ids) w.send(view(tasks.get(id)));
}

const handler = createMcpHandler(factory, { onerror: (e) => process.stderr.write(`ts-v2-tasks: ${e.message}\n`) });
const serve = toNodeHandler(handler);
const validateHost = localhostHostValidation();
const http = createServer(async (req, res) => {
  if (!validateHost(req, res)) return;
  if (new URL(req.url, 'http://x').pathname !== '/mcp') {
    res.writeHead(404, { 'Content-Type': 'text/plain' }).end('not found\n');
    return;
  }
  if (req.method !== 'POST') {
    serve(req, res);
    return;
  }
  const chunks = [];
  for await (const c of req) chunks.push(c);
  let body;
  try {
    body = JSON.parse(Buffer.concat(chunks).toString('utf8'));
  } catch {
    res.writeHead(400, { 'Content-Type': 'application/json' }).end(JSON.stringify({ jsonrpc: '2.0', id: null, error: { code: -32700, message: 'Parse error' } }));
    return;
  }
  if (body?.method === 'subscriptions/listen' && Array.isArray(body.params?.notifications?.taskIds) && body.params.notifications.taskIds.length > 0) {
    serveTaskListen(body, res);
    return;
  }
  serve(req, res, body);
});
http.listen(Number(process.env.PORT || 0), '127.0.0.1', () => {
  process.stdout.write(`listening http://127.0.0.1:${http.address().port}/mcp\n`);
});
const stop = () => { for (const t of tasks.values()) clearTimeout(t.timer); handler.close().catch(() => {}); http.close(); process.exit(0); };
process.on('SIGTERM', stop);
process.on('SIGINT', stop);
