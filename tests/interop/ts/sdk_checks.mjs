// Drives `warden serve` on the example plugins with an official TypeScript MCP SDK:
//   v2  @modelcontextprotocol/client 2.4.0, versionNegotiation auto (2026-07-28 era)
//   v1  @modelcontextprotocol/sdk 1.32.2 (legacy era, 2025-11-25)
// over stdio or Streamable HTTP, with exact values read from sdk_expected.json.
//
// usage: node sdk_checks.mjs v1|v2 FIXTURE --stdio WARDEN_BINARY PLUGINS_DIR
//        node sdk_checks.mjs v1|v2 FIXTURE --http URL
//
// sdk_clients.sh copies this file next to the node_modules it installs, so the bare
// package imports below resolve there. Prints one line per check and exits 1 if any failed.

import { readFileSync } from 'node:fs';

const [sdk, fixturePath, transportFlag, ...rest] = process.argv.slice(2);
const fx = JSON.parse(readFileSync(fixturePath, 'utf8'));
const transportName = transportFlag === '--http' ? 'http' : 'stdio';

const CODE_NAMES = { [-32601]: 'method not found', [-32602]: 'invalid params', [-32002]: 'resource not found' };

async function connect() {
  if (sdk === 'v2') {
    const { Client, StreamableHTTPClientTransport } = await import('@modelcontextprotocol/client');
    const { StdioClientTransport } = await import('@modelcontextprotocol/client/stdio');
    const transport =
      transportName === 'http'
        ? new StreamableHTTPClientTransport(new URL(rest[0]))
        : new StdioClientTransport({ command: rest[0], args: ['serve', '--plugins', rest[1]], stderr: 'inherit' });
    const client = new Client(
      { name: 'warden-interop-ts-v2', version: '0.0.0' },
      { versionNegotiation: { mode: 'auto' } }
    );
    await client.connect(transport);
    return {
      label: `ts @modelcontextprotocol/client 2.4.0, ${transportName}, mode=auto`,
      client,
      version: client.getNegotiatedProtocolVersion(),
      era: client.getProtocolEra()
    };
  }
  if (sdk === 'v1') {
    const { Client } = await import('@modelcontextprotocol/sdk/client/index.js');
    const { StdioClientTransport } = await import('@modelcontextprotocol/sdk/client/stdio.js');
    const { StreamableHTTPClientTransport } = await import('@modelcontextprotocol/sdk/client/streamableHttp.js');
    const transport =
      transportName === 'http'
        ? new StreamableHTTPClientTransport(new URL(rest[0]))
        : new StdioClientTransport({ command: rest[0], args: ['serve', '--plugins', rest[1]], stderr: 'inherit' });
    // v1 exposes the negotiated version only by handing it to the transport.
    let version;
    const setProtocolVersion = transport.setProtocolVersion?.bind(transport);
    transport.setProtocolVersion = v => {
      version = v;
      setProtocolVersion?.(v);
    };
    const client = new Client({ name: 'warden-interop-ts-v1', version: '0.0.0' });
    await client.connect(transport);
    return { label: `ts @modelcontextprotocol/sdk 1.32.2, ${transportName}`, client, version, era: 'legacy' };
  }
  throw new Error(`unknown sdk ${sdk}: use v1 or v2`);
}

const failures = [];
let label = `ts ${sdk}, ${transportName}`;
let connection;
try {
  connection = await connect();
} catch (error) {
  console.log(`${label}: connect: FAILED: ${error?.stack ?? error}`);
  process.exit(1);
}
const { client } = connection;
const modern = !String(connection.version).startsWith('2025');
label = `${connection.label} (protocol ${connection.version}, era ${connection.era})`;
const caps = Object.keys(client.getServerCapabilities() ?? {}).sort();
console.log(`${label}: server capabilities ${JSON.stringify(caps)}`);

function describe(error) {
  if (typeof error?.code === 'number') {
    return `error ${error.code}${CODE_NAMES[error.code] ? ` (${CODE_NAMES[error.code]})` : ''}: ${error.message}`;
  }
  if (error?.name === 'AssertionError') return error.message;
  if (error?.data?.status !== undefined) {
    // v2's HTTP transport hands a JSON-RPC error to the caller as a protocol error only
    // when it comes with HTTP 400; with any other non-2xx status it throws SdkHttpError.
    return `${error.name} [${error.code}] HTTP ${error.data.status} ${error.data.statusText ?? ''}: ${error.message}`;
  }
  return `${error?.name ?? 'Error'}${error?.code ? ` [${error.code}]` : ''}: ${error?.message ?? error}`;
}

class AssertionError extends Error {
  name = 'AssertionError';
}
function assert(condition, message) {
  if (!condition) throw new AssertionError(message);
}
const same = (a, b) => JSON.stringify(a) === JSON.stringify(b);

async function check(name, body) {
  try {
    const detail = await body();
    console.log(`${label}: ${name}: ok${detail ? ` (${detail})` : ''}`);
  } catch (error) {
    failures.push(`${name}: ${describe(error)}`);
    console.log(`${label}: ${name}: FAILED: ${describe(error)}`);
  }
}

async function expectError(promise, codes) {
  let result;
  try {
    result = await promise;
  } catch (error) {
    assert(
      typeof error?.code === 'number' && codes.includes(error.code),
      `expected an error with code ${JSON.stringify(codes)}, got ${describe(error)}`
    );
    return `error ${error.code}`;
  }
  throw new AssertionError(`expected an error with code ${JSON.stringify(codes)}, got a result: ${JSON.stringify(result)}`);
}

function messageView(message) {
  const content = message.content;
  const view = { type: content.type };
  if (content.type === 'text') view.text = content.text;
  if (content.type === 'resource') {
    const { uri, mimeType, text } = content.resource;
    view.resource = { uri, mimeType, text };
  }
  return { role: message.role, content: view };
}

const capabilityHint = kind =>
  caps.includes(kind) ? '' : ` (the server does not advertise ${kind}, so the SDK lists nothing)`;

await check('tools/list', async () => {
  const names = (await client.listTools()).tools.map(tool => tool.name).sort();
  assert(same(names, fx.tools), `tools ${JSON.stringify(names)} != ${JSON.stringify(fx.tools)}`);
});

await check('tools/call date_add', async () => {
  const result = await client.callTool({ name: 'date_add', arguments: fx.date_add.arguments });
  assert(!result.isError, JSON.stringify(result));
  assert(result.structuredContent?.date === fx.date_add.date, JSON.stringify(result.structuredContent));
});

await check('tools/call find_snippets', async () => {
  const result = await client.callTool({ name: 'find_snippets', arguments: fx.find_snippets.arguments });
  assert(!result.isError, JSON.stringify(result));
  const uris = result.structuredContent.matches.map(match => match.uri);
  assert(same(uris, fx.find_snippets.uris), `structuredContent URIs ${JSON.stringify(uris)}`);
  const lines = result.content[0].text.split('\n').map(line => line.split(' — ')[0]);
  assert(same(lines, fx.find_snippets.uris), `text ${JSON.stringify(result.content[0].text)}`);
});

await check('resources/list', async () => {
  const resources = (await client.listResources()).resources;
  const found = resources.find(resource => resource.uri === fx.index.uri);
  assert(found, `${fx.index.uri} not among ${JSON.stringify(resources.map(r => r.uri))}${capabilityHint('resources')}`);
  assert(found.name === fx.index.name && found.mimeType === fx.index.mimeType, JSON.stringify(found));
});

await check('resources/templates/list', async () => {
  const templates = (await client.listResourceTemplates()).resourceTemplates;
  const found = templates.find(template => template.uriTemplate === fx.template.uriTemplate);
  assert(
    found,
    `${fx.template.uriTemplate} not among ${JSON.stringify(templates.map(t => t.uriTemplate))}${capabilityHint('resources')}`
  );
  assert(found.name === fx.template.name, JSON.stringify(found));
});

await check('resources/read', async () => {
  const { contents } = await client.readResource({ uri: fx.read.uri });
  assert(contents.length === 1, JSON.stringify(contents));
  const [content] = contents;
  assert(content.uri === fx.read.uri && content.mimeType === fx.read.mimeType, JSON.stringify(content));
  assert(content.text === fx.read.text, `text ${JSON.stringify(content.text)}`);
});

await check('resources/read unknown', async () => {
  const codes = modern ? fx.read_unknown.modern_codes : fx.read_unknown.legacy_codes;
  return expectError(client.readResource({ uri: fx.read_unknown.uri }), codes);
});

await check('prompts/list', async () => {
  const names = (await client.listPrompts()).prompts.map(prompt => prompt.name).sort();
  assert(same(names, fx.prompts), `prompts ${JSON.stringify(names)} != ${JSON.stringify(fx.prompts)}${capabilityHint('prompts')}`);
});

await check('prompts/get explain_snippet', async () => {
  const result = await client.getPrompt({ name: 'explain_snippet', arguments: fx.explain.arguments });
  const messages = result.messages.map(messageView);
  assert(same(messages, fx.explain.messages), `messages ${JSON.stringify(messages)}`);
});

await check('prompts/get without name', async () =>
  expectError(
    client.getPrompt({ name: 'explain_snippet', arguments: fx.explain_missing_name.arguments }),
    fx.explain_missing_name.codes
  )
);

for (const key of ['complete_prompt', 'complete_template']) {
  const name = key === 'complete_prompt' ? 'completion/complete prompt' : 'completion/complete template';
  await check(name, async () => {
    const { ref, argument, values } = fx[key];
    const result = await client.complete({ ref, argument });
    assert(same(result.completion.values, values), `values ${JSON.stringify(result.completion.values)}`);
  });
}

await client.close();
if (failures.length > 0) {
  console.log(`${connection.label}: ${failures.length} check(s) FAILED`);
  process.exit(1);
}
