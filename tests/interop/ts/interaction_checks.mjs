// Interactive plugins (warden:plugin@0.2.0) with an official TypeScript MCP SDK client,
// which answers elicitation and sampling through its request handlers:
//   v2  @modelcontextprotocol/client 2.4.0, versionNegotiation auto (2026-07-28: Warden answers
//       input_required and the client's MRTR driver retries)
//   v1  @modelcontextprotocol/sdk 1.32.2 (2025-11-25: Warden sends the requests during the call)
// against plugins/notes (granted [interaction] elicit and sample by its manifest): delete_note's
// confirmation declined, cancelled and accepted, summarize_note's sampling; and two rounds in
// one call (test_input_required_result_multi_round of tests/plugins/conformance-interactive).
// Run by tests/interop/python_interaction.sh, with both plugins staged.
//
// usage: node interaction_checks.mjs v1|v2 --stdio WARDEN_BINARY PLUGINS_DIR
//        node interaction_checks.mjs v1|v2 --http URL
// Prints one line per check; exits 1 if any failed.

const [sdk, transportFlag, ...rest] = process.argv.slice(2);
const transportName = transportFlag === '--http' ? 'http' : 'stdio';
const capabilities = { capabilities: { elicitation: {}, sampling: {} } };

let elicitAnswers = [];
const asked = [];
async function onElicit(request) {
  asked.push(['elicit', request.params.message]);
  if (request.params.message.startsWith('Step 1')) return { action: 'accept', content: { name: 'Alice' } };
  if (request.params.message.startsWith('Step 2')) return { action: 'accept', content: { color: 'blue' } };
  const [action, content] = elicitAnswers.shift();
  return content === undefined ? { action } : { action, content };
}
async function onSample(request) {
  const first = request.params.messages[0].content.text.split('\n')[0];
  asked.push(['sample', `${request.params.maxTokens} ${first}`]);
  return { role: 'assistant', content: { type: 'text', text: 'Two plans for the week.' }, model: 'test-model', stopReason: 'endTurn' };
}

async function connect() {
  if (sdk === 'v2') {
    const { Client, StreamableHTTPClientTransport } = await import('@modelcontextprotocol/client');
    const { StdioClientTransport } = await import('@modelcontextprotocol/client/stdio');
    const transport =
      transportName === 'http'
        ? new StreamableHTTPClientTransport(new URL(rest[0]))
        : new StdioClientTransport({ command: rest[0], args: ['serve', '--plugins', rest[1]], stderr: 'ignore' });
    const client = new Client({ name: 'warden-interop-ts-v2', version: '0.0.0' }, { ...capabilities, versionNegotiation: { mode: 'auto' } });
    client.setRequestHandler('elicitation/create', onElicit);
    client.setRequestHandler('sampling/createMessage', onSample);
    await client.connect(transport);
    return { label: `ts @modelcontextprotocol/client 2.4.0, ${transportName}, era ${client.getProtocolEra()}`, client };
  }
  const { Client } = await import('@modelcontextprotocol/sdk/client/index.js');
  const { StdioClientTransport } = await import('@modelcontextprotocol/sdk/client/stdio.js');
  const { StreamableHTTPClientTransport } = await import('@modelcontextprotocol/sdk/client/streamableHttp.js');
  const { ElicitRequestSchema, CreateMessageRequestSchema } = await import('@modelcontextprotocol/sdk/types.js');
  const transport =
    transportName === 'http'
      ? new StreamableHTTPClientTransport(new URL(rest[0]))
      : new StdioClientTransport({ command: rest[0], args: ['serve', '--plugins', rest[1]], stderr: 'ignore' });
  const client = new Client({ name: 'warden-interop-ts-v1', version: '0.0.0' }, capabilities);
  client.setRequestHandler(ElicitRequestSchema, onElicit);
  client.setRequestHandler(CreateMessageRequestSchema, onSample);
  await client.connect(transport);
  return { label: `ts @modelcontextprotocol/sdk 1.32.2, ${transportName}, era legacy`, client };
}

let failed = 0;
function check(label, what, got, want) {
  const ok = JSON.stringify(got) === JSON.stringify(want);
  if (!ok) failed++;
  console.log(`${label}: ${what}: ${ok ? 'ok' : `FAILED\n    got  ${JSON.stringify(got)}\n    want ${JSON.stringify(want)}`}`);
}

const { label, client } = await connect();
const call = async (name, args) => {
  const result = await client.callTool({ name, arguments: args });
  return [Boolean(result.isError), result.content.filter(c => c.type === 'text').map(c => c.text)];
};
const name = `plan-ts-${sdk}-${transportName}`;
await call('write_note', { name, content: '# Plan\n\nMonday: write. Tuesday: review.\n' });
for (const [action, done] of [['decline', 'declined'], ['cancel', 'cancelled']]) {
  elicitAnswers.push([action]);
  check(label, `delete_note, ${done}`, await call('delete_note', { name }), [
    false,
    [`Did not delete note "${name}": the user did not confirm (declined, cancelled or left unchecked).`]
  ]);
}
check(label, 'summarize_note', await call('summarize_note', { name }), [false, ['Two plans for the week.']]);
elicitAnswers.push(['accept', { confirm: true }]);
check(label, 'delete_note, accepted', await call('delete_note', { name }), [false, [`Deleted note "${name}".`]]);
check(label, 'two rounds in one call', await call('test_input_required_result_multi_round', {}), [
  false,
  ["Alice's favorite color is blue."]
]);
check(label, 'what the client was asked', asked, [
  ['elicit', `Delete note ${name}?`],
  ['elicit', `Delete note ${name}?`],
  ['sample', `200 Summarize the note "${name}":`],
  ['elicit', `Delete note ${name}?`],
  ['elicit', 'Step 1: What is your name?'],
  ['elicit', 'Step 2: What is your favorite color?']
]);
await client.close();
process.exit(failed ? 1 : 0);
