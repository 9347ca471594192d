// MCP tasks (SEP-2663) driven by released official client code, against `warden serve --http`
// serving tests/plugins/conformance-interactive (slow_compute and confirm_delete may become tasks):
//   @modelcontextprotocol/client (the pin of tests/interop/ts/package.json): connects, negotiates
//     2026-07-28 (server/discover), and its StreamableHTTPClientTransport sends every request,
//     with the Mcp-Method / Mcp-Name headers it derives from the body;
//   @modelcontextprotocol/ext-tasks 0.2.2 (the requester side of the extension): declares
//     `io.modelcontextprotocol/tasks` in each request's _meta, turns a `resultType: "task"` reply
//     into an execution, polls tasks/get, answers input_required with tasks/update through its
//     onInputRequest callback, and cancels with tasks/cancel.
// The Client itself rejects a `resultType: "task"` reply (UNSUPPORTED_RESULT_TYPE, checked below),
// so ext-tasks asks the host for a `rawDispatch`: here a small coordinator that sends through the
// Client's own transport under request ids of its own and takes their responses off it.
//
// usage: node tasks_clients.mjs URL      (run from the folder whose node_modules hold both)
// Prints one line per check; exits 1 if any failed.

import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { createTaskSessionFromClient, DispatchError, JsonRpcResponseError } from '@modelcontextprotocol/ext-tasks/client';
import { readFileSync } from 'node:fs';

const url = new URL(process.argv[2]);
const EXT = 'io.modelcontextprotocol/tasks';
const versions = ['@modelcontextprotocol/client', '@modelcontextprotocol/ext-tasks']
  .map(name => `${name} ${JSON.parse(readFileSync(new URL(`./node_modules/${name}/package.json`, import.meta.url))).version}`)
  .join(', ');
console.log(`== ${versions} against ${url}`);

let failed = 0;
let passed = 0;
function check(what, got, want) {
  const ok = JSON.stringify(got) === JSON.stringify(want);
  if (ok) passed++;
  else failed++;
  console.log(`${ok ? 'ok  ' : 'FAIL'} ${what}${ok ? '' : `\n    got  ${JSON.stringify(got)}\n    want ${JSON.stringify(want)}`}`);
}
const seconds = since => ((performance.now() - since) / 1000).toFixed(2);

// Every HTTP request the transport makes, as Warden receives it.
const wire = [];
const recordingFetch = async (input, init) => {
  if (init?.method === 'POST' && typeof init.body === 'string') {
    const body = JSON.parse(init.body);
    const headers = new Headers(init.headers);
    wire.push({
      method: body.method,
      id: body.id,
      mcpMethod: headers.get('mcp-method'),
      mcpName: headers.get('mcp-name'),
      taskId: body.params?.taskId,
      declared: Object.hasOwn(body.params?._meta?.['io.modelcontextprotocol/clientCapabilities']?.extensions ?? {}, EXT),
    });
  }
  return fetch(input, init);
};

const clientInfo = { name: 'warden-interop-tasks-clients', version: '0.0.0' };
const clientCapabilities = { elicitation: { form: {} } };

async function connect(capabilities) {
  const transport = new StreamableHTTPClientTransport(url, { fetch: recordingFetch });
  const client = new Client(clientInfo, { capabilities, versionNegotiation: { mode: 'auto' } });
  await client.connect(transport);
  return { client, transport };
}

// 1. The Client alone, declaring the extension itself: Warden makes the call a task, and the
//    Client's 2026 codec refuses the reply.
{
  const { client } = await connect({ ...clientCapabilities, extensions: { [EXT]: {} } });
  check('the Client negotiates 2026-07-28', [client.getProtocolEra(), client.getNegotiatedProtocolVersion()], ['modern', '2026-07-28']);
  check('Warden advertises the extension in server/discover', client.getServerCapabilities()?.extensions?.[EXT], {});
  let refusal;
  try {
    await client.callTool({ name: 'slow_compute', arguments: { seconds: 1, label: 'plain-client' } });
    refusal = 'a result';
  } catch (error) {
    refusal = [error.code, error.data?.resultType];
  }
  check("the Client alone refuses Warden's CreateTaskResult", refusal, ['UNSUPPORTED_RESULT_TYPE', 'task']);
  await client.close();
}

// 2. The Client with ext-tasks.
const { client, transport } = await connect(clientCapabilities);

// rawDispatch: sends through the Client's transport with ids of its own ("ext-tasks-N") and
// takes their responses before the Client's Protocol sees them; everything else goes on to it.
const pending = new Map();
let nextId = 0;
const clientOnMessage = transport.onmessage;
transport.onmessage = (message, extra) => {
  const waiter = message && typeof message === 'object' && !('method' in message) ? pending.get(message.id) : undefined;
  if (waiter === undefined) return clientOnMessage?.call(transport, message, extra);
  pending.delete(message.id);
  waiter.resolve('error' in message ? { kind: 'error', error: message.error } : { kind: 'result', result: message.result });
};
function rawDispatch(request, options = {}) {
  const id = `ext-tasks-${++nextId}`;
  return new Promise((resolve, reject) => {
    const abort = () => {
      pending.delete(id);
      reject(options.signal.reason ?? new DOMException('aborted', 'AbortError'));
    };
    if (options.signal?.aborted) return abort();
    options.signal?.addEventListener('abort', abort, { once: true });
    const settle = fn => value => {
      options.signal?.removeEventListener('abort', abort);
      fn(value);
    };
    pending.set(id, { resolve: settle(resolve) });
    transport
      .send({ jsonrpc: '2.0', id, ...request }, { headers: options.context?.headers, requestSignal: options.signal })
      .catch(error => {
        if (!pending.delete(id)) return;
        settle(reject)(new DispatchError(`transport send failed: ${error}`, false, { cause: error }));
      });
  });
}

const asked = [];
const answers = { 'Delete ts-clients.txt?': { action: 'accept', content: { confirm: true } } };
const session = createTaskSessionFromClient(client, {
  endpointId: `warden-interop:${url}`,
  rawDispatch,
  v2RequestFraming: { protocolVersion: '2026-07-28', clientInfo, clientCapabilities },
  onInputRequest: async (request, context) => {
    asked.push({ kind: request.kind, message: request.params.message, scope: context.scope, delivery: context.delivery, taskId: context.taskId });
    return answers[request.params.message] ?? { action: 'decline' };
  },
  onError: error => {
    failed++;
    console.log(`FAIL ext-tasks reported: ${error}`);
  },
});
check('ext-tasks sees a 2026 tasks server (execution, cancellation, input responses)',
  [session.capabilities.execution, session.capabilities.cancellation, session.capabilities.inputResponses], [true, true, true]);

const text = result => result?.content?.filter(c => c.type === 'text').map(c => c.text);
const wireFor = taskId => wire.filter(w => w.taskId === taskId);

// 2a. Created, polled to completion, with the exact result.
{
  const started = performance.now();
  const execution = await session.callTool('slow_compute', { seconds: 1.5, label: 'ts-complete' }, { task: { preference: 'require' } });
  const taskId = execution.handle?.taskId;
  check('slow_compute (1.5 s) comes back as a task', [execution.kind, typeof taskId], ['task', 'string']);
  const seen = [];
  const { outcome } = await execution.settle({ onEvent: event => void (event.type === 'task' && seen.push(event.task.status)) });
  check('it completes, polled through tasks/get, with the exact result',
    [outcome.status, outcome.result?.isError ?? false, text(outcome.result)], ['completed', false, ['slow_compute `ts-complete` finished after 1.5 s']]);
  check('the executions saw it working before it completed', [seen[0], seen.at(-1)], ['working', 'completed']);
  const polls = wireFor(taskId).filter(w => w.method === 'tasks/get');
  check('each tasks/get declared the extension and named the task in Mcp-Name',
    polls.length > 0 && polls.every(w => w.declared && w.mcpName === taskId && w.mcpMethod === 'tasks/get'), true);
  const call = wire.find(w => w.method === 'tools/call' && String(w.id).startsWith('ext-tasks-'));
  check('the tools/call declared the extension (Mcp-Name: slow_compute)', [call?.declared, call?.mcpName], [true, 'slow_compute']);
  console.log(`figure: slow_compute 1.5 s, created to completed: ${seconds(started)} s, ${polls.length} tasks/get`);
}

// 2b. Cancelled mid-run.
{
  const execution = await session.callTool('slow_compute', { seconds: 60, label: 'ts-cancel' }, { task: { preference: 'require' } });
  const taskId = execution.handle?.taskId;
  check('slow_compute (60 s) comes back as a task', execution.kind, 'task');
  const controller = session.task(taskId);
  const before = await controller.snapshot();
  check('it is working before the cancel', before.status, 'working');
  const cancelAt = performance.now();
  await execution.cancel();
  const outcome = await execution.result();
  check('execution.cancel() ends it `cancelled`', outcome.status, 'cancelled');
  const cancels = wireFor(taskId).filter(w => w.method === 'tasks/cancel');
  check('one tasks/cancel went out, with Mcp-Name', cancels.map(w => [w.declared, w.mcpName === taskId]), [[true, true]]);
  let after;
  for (const end = performance.now() + 10_000; performance.now() < end; await new Promise(r => setTimeout(r, 100))) {
    after = await controller.snapshot();
    if (after.status !== 'working') break;
  }
  check('Warden reports it `cancelled` to a fresh tasks/get', after.status, 'cancelled');
  console.log(`figure: tasks/cancel to \`cancelled\`: ${seconds(cancelAt)} s`);
}

// 2c. input_required, answered through onInputRequest and tasks/update.
{
  const started = performance.now();
  const execution = await session.callTool('confirm_delete', { filename: 'ts-clients.txt' }, { task: { preference: 'require' } });
  const taskId = execution.handle?.taskId;
  check('confirm_delete comes back as a task', execution.kind, 'task');
  const { outcome } = await execution.settle();
  check('its question reached onInputRequest once, as a task-update', asked,
    [{ kind: 'elicitation', message: 'Delete ts-clients.txt?', scope: 'task', delivery: 'task-update', taskId }]);
  const updates = wireFor(taskId).filter(w => w.method === 'tasks/update');
  check('the answer went back in one tasks/update, with Mcp-Name', updates.map(w => [w.declared, w.mcpName === taskId]), [[true, true]]);
  check('the task completes with the answer applied', [outcome.status, text(outcome.result)], ['completed', ['deleted ts-clients.txt']]);
  console.log(`figure: confirm_delete, asked, answered and completed: ${seconds(started)} s`);
}

// 2d. An id Warden never issued.
{
  let code;
  try {
    await session.task('made-up-task-id').snapshot();
  } catch (error) {
    code = error instanceof JsonRpcResponseError ? error.code : String(error);
  }
  check('tasks/get of a made-up id is -32602', code, -32602);
}

check('every ext-tasks request got its response through the coordinator', pending.size, 0);
await session.close();
await client.close();
console.log(`tasks: ${passed} passed, ${failed} failed`);
process.exit(failed === 0 ? 0 : 1);
