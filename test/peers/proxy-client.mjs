// A host for mcpscope proxy's transparency tests: runs a fixed script with
// the TypeScript SDK v1 (@modelcontextprotocol/sdk) or v2
// (@modelcontextprotocol/client) client and prints every result as one JSON
// line, so a run through the proxy can be compared with a direct one.
//
//   node proxy-client.mjs v1|v2 stdio CMD ARGS...
//   node proxy-client.mjs v1|v2 http URL
const [sdk, kind, ...rest] = process.argv.slice(2);

let Client, Stdio, Http;
if (sdk === 'v1') {
  ({ Client } = await import('@modelcontextprotocol/sdk/client/index.js'));
  ({ StdioClientTransport: Stdio } = await import('@modelcontextprotocol/sdk/client/stdio.js'));
  ({ StreamableHTTPClientTransport: Http } = await import('@modelcontextprotocol/sdk/client/streamableHttp.js'));
} else {
  ({ Client, StreamableHTTPClientTransport: Http } = await import('@modelcontextprotocol/client'));
  ({ StdioClientTransport: Stdio } = await import('@modelcontextprotocol/client/stdio'));
}

const transport = kind === 'stdio'
  ? new Stdio({ command: rest[0], args: rest.slice(1), stderr: 'ignore' })
  : new Http(new URL(rest[0]));
const client = new Client({ name: 'proxy-test-host', version: '1.0.0' });
await client.connect(transport);

const out = [];
const put = (what, r) => out.push(JSON.stringify({ what, r }));
const tools = await client.listTools();
put('tools', tools);
const names = tools.tools.map((t) => t.name);
const echo = tools.tools.find((t) => t.name === 'echo');
const arg = echo && echo.inputSchema?.properties?.message ? 'message' : 'text';
for (const s of ['hello', 'é ✓ \u2028 "quoted" ' + 'x'.repeat(100000)]) {
  put('echo', await client.callTool({ name: 'echo', arguments: { [arg]: s } }));
}
if (names.includes('get-sum')) put('sum', await client.callTool({ name: 'get-sum', arguments: { a: 2, b: 40 } }));
if (names.includes('slow')) {
  const progress = [];
  put('slow', await client.callTool({ name: 'slow', arguments: { steps: 3, intervalMs: 10 } }, undefined, { onprogress: (p) => progress.push(p) }));
  put('progress', progress.length > 0); // how many arrive before the result varies from run to run, direct too
}
if (names.includes('trigger-long-running-operation')) {
  const progress = [];
  put('long', await client.callTool({ name: 'trigger-long-running-operation', arguments: { duration: 0.3, steps: 3 } }, undefined, { onprogress: (p) => progress.push(p) }));
  put('progress', progress.length > 0); // how many arrive before the result varies from run to run, direct too
}
const caps = client.getServerCapabilities() || {};
if (caps.resources) {
  const res = await client.listResources();
  put('resources', res);
  if (res.resources.length) put('read', await client.readResource({ uri: res.resources[0].uri }));
}
if (caps.prompts) put('prompts', await client.listPrompts());
try {
  await client.callTool({ name: 'no-such-tool', arguments: {} });
} catch (e) {
  put('error', String(e.code ?? e.message));
}
await client.close();
// Exit once the pipe has taken everything (a plain exit cuts it at 64 KiB).
process.stdout.write(out.join('\n') + '\n', () => process.exit(0));
