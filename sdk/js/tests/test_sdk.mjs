// Unit tests of the JavaScript SDK in plain Node (no component, no host): the exports of
// src/component.js called as Warden calls them, with the contract's values as
// componentize-js passes them — tools with and without interaction (input-required, the
// replayed rounds with answers, refusals, two asks in one round, the state), a resource and
// a prompt that ask, the host's can-ask, and task support (`task` in registerTool,
// `list-tool-execution`). The contract's host interface
// (`warden:plugin/host@0.3.0`) is a stand-in module, resolved by a loader hook.
//
//   node sdk/js/tests/test_sdk.mjs
//
// Prints one line per test; exits 1 on the first failure.

import { register } from 'node:module';
import assert from 'node:assert/strict';

const HOST = `
const host = () => globalThis.wardenTestHost;
export function log(level, message) { host().logged.push([level, message]); }
export function progress() {}
export function cancelled() { return false; }
export function canAsk(what) { return host().canAsk(what); }
`;
const HOOKS = `
export async function resolve(specifier, context, next) {
  if (specifier === 'warden:plugin/host@0.3.0') {
    return { url: 'data:text/javascript,' + encodeURIComponent(${JSON.stringify(HOST)}), shortCircuit: true };
  }
  return next(specifier, context);
}
`;
register('data:text/javascript,' + encodeURIComponent(HOOKS));

const granted = new Set(['elicit-form', 'list-roots', 'sample']);
globalThis.wardenTestHost = { logged: [], canAsk: (what) => granted.has(what) };

const { Plugin, ResourceTemplate, RefusedError, CONFIRM_SCHEMA, Input, isPending, schema, TASK_SUPPORT } = await import('../src/index.js');
const { tools, resources, prompts } = await import('../src/component.js');

// ---- the plugin under test ----

const plugin = new Plugin({ name: 'interactive' });

plugin.registerTool('plain', { description: 'A 0.1-era tool: no input.', inputSchema: { n: schema.integer() } }, ({ n }, extra) => {
  extra.log('info', `plain ${n}`);
  return { structuredContent: { double: n * 2 } };
});

plugin.registerTool('drop', { description: 'Drops a table, once the user confirms.', inputSchema: { table: schema.string() } }, ({ table }, { input }) => {
  try {
    if (!input.confirm('sure', `Drop table ${table}?`)) return `kept ${table}`;
  } catch (error) {
    if (error instanceof RefusedError) return `kept ${table}: could not ask (${error.reason})`;
    throw error;
  }
  return `dropped ${table}`;
});

plugin.registerTool('drop_unguarded', { description: 'The same, a refusal not caught.', inputSchema: { table: schema.string() } }, ({ table }, { input }) =>
  input.confirm('sure', `Drop table ${table}?`) ? `dropped ${table}` : `kept ${table}`,
);

plugin.registerTool('onboard', { description: 'Two rounds and the own state.', inputSchema: { team: schema.string() } }, ({ team }, { input }) => {
  if (input.firstRound) input.state = new TextEncoder().encode(`team=${team}`);
  const who = input.elicit('who', `Who joins ${team}?`, {
    name: schema.string({ description: 'Their name.' }),
    age: schema.optional(schema.integer()),
  });
  if (who.action !== 'accept') return `nobody joins ${team} (${who.action})`;
  if (!input.confirm('ok', `Add ${who.content.name} to ${team}?`)) return 'not added';
  return `added ${who.content.name} [${new TextDecoder().decode(input.state)}]`;
});

plugin.registerTool('survey', { description: 'Two asks in one round.' }, (_args, { input }) => {
  const [colour, roots] = input.together(() => [
    input.elicit('colour', 'Favourite colour?', { type: 'object', properties: { colour: { type: 'string' } } }),
    input.roots('roots'),
  ]);
  return { structuredContent: { colour: colour.content.colour, roots: roots.map((r) => r.uri) } };
});

plugin.registerTool('swallow', { description: 'Catches everything, the sentinel too.' }, (_args, { input }) => {
  try {
    input.confirm('ok', 'Go?');
  } catch {
    return 'swallowed';
  }
  return 'asked';
});

plugin.registerTool('muse', { description: 'Asks the model.', inputSchema: { topic: schema.string() } }, ({ topic }, { input }) => {
  const answer = input.sample('s', { messages: [{ role: 'user', content: { type: 'text', text: `About ${topic}` } }], maxTokens: 50, systemPrompt: 'Be brief.' });
  return `${answer.model}: ${answer.text}`;
});

plugin.registerTool('visit', { description: 'A URL elicitation; can-ask.' }, (_args, { input, canAsk }) => {
  const can = [input.canAsk('elicit-url'), canAsk('elicit-form')];
  return `${input.elicitUrl('login', 'Sign in', 'https://login.example.com/x', 'e1')} ${can}`;
});

plugin.registerResource('secret', new ResourceTemplate('secret://{name}'), { mimeType: 'text/plain' }, (uri, { name }, { input }) =>
  input.confirm('reveal', `Reveal ${name}?`) ? `secret ${name}` : 'hidden',
);

plugin.registerPrompt('greet', { description: 'Asks for a name first.' }, (_args, { input }) => {
  const who = input.elicit('who', 'Your name?', { name: schema.string() });
  return `Greet ${who.action === 'accept' ? who.content.name : 'someone'}.`;
});

// ---- helpers: the contract's values ----

const elicit = (action, content) => ({ tag: 'elicit', val: { action, content: content === undefined ? undefined : JSON.stringify(content) } });
const refused = (reason) => ({ tag: 'refused', val: reason });
const answers = (state, byKey) => ({ answers: Object.entries(byKey).map(([key, answer]) => ({ key, answer })), state });
const text = (value, isError = false) => ({ tag: 'done', val: { content: [{ tag: 'text', val: value }], structuredContent: undefined, isError } });
const call = (name, args, input) => tools.callTool(name, JSON.stringify(args), input);
const form = (message, requested) => ({ tag: 'elicit-form', val: { message, requestedSchema: JSON.stringify(requested) } });

function envelope(state) {
  assert.deepEqual([...state.subarray(0, 4)], [...new TextEncoder().encode('wps1')]);
  const length = state[4] | (state[5] << 8) | (state[6] << 16) | (state[7] << 24);
  return { json: JSON.parse(new TextDecoder().decode(state.subarray(8, 8 + length))), own: new TextDecoder().decode(state.subarray(8 + length)) };
}

function inputRequired(reply) {
  assert.equal(reply.tag, 'input-required', `not input-required: ${JSON.stringify(reply)}`);
  return reply.val;
}

// ---- tests ----

const NOT_A_TASK_SUPPORT =
  'is not a task support: write "forbidden", "optional" or "required", or leave task out (then the tool is forbidden to run as a task)';

const tests = {
  'task support: tools that declare nothing are not listed'() {
    // Every tool above was registered without `task`: none is listed (all forbidden).
    assert.equal(tools.listTools().length, 8);
    assert.deepEqual(tools.listToolExecution(), []);
    plugin.registerTool('undeclared', { description: 'task undefined.', task: undefined }, () => 'u');
    plugin.registerTool('nulled', { description: 'task null.', task: null }, () => 'n');
    plugin.registerTool('bare', { description: 'Nothing but a description.' }, () => 'bare');
    assert.deepEqual(tools.listToolExecution(), []);
  },

  'task support: the declared values are listed exactly, in registration order'() {
    const slow = ({ url }) => `crawled ${url}`;
    plugin.registerTool('crawl', { description: 'Crawls a site.', inputSchema: { url: schema.string() }, annotations: { readOnlyHint: true }, task: 'optional' }, slow);
    plugin.registerTool('export', { description: 'Exports everything.', task: 'required' }, () => 'exported');
    plugin.registerTool('ping', { description: 'Answers at once.', task: 'forbidden' }, () => 'pong');
    plugin.registerTool('after', { description: 'Declares nothing.' }, () => 'after');
    assert.deepEqual(tools.listToolExecution(), [
      { tool: 'crawl', taskSupport: 'optional' },
      { tool: 'export', taskSupport: 'required' },
      { tool: 'ping', taskSupport: 'forbidden' },
    ]);
    const listed = tools.listToolExecution().map((entry) => entry.tool);
    for (const name of ['plain', 'drop', 'undeclared', 'nulled', 'bare', 'after']) assert.ok(!listed.includes(name), `${name} is listed`);
    // The declaration changes nothing else: tools/list, the schema, the call.
    const crawl = tools.listTools().find((t) => t.name === 'crawl');
    assert.deepEqual(Object.keys(crawl), ['name', 'title', 'description', 'inputSchema', 'outputSchema', 'annotations']);
    assert.equal(crawl.annotations.readOnlyHint, true);
    assert.deepEqual(call('crawl', { url: 'x://y' }), text('crawled x://y'));
    assert.deepEqual(call('export', {}), text('exported'));
  },

  'task support: a value that is not one is refused at registration, naming the tool and the value'() {
    const bad = [
      ['always', '"always"'],
      ['Optional', '"Optional"'],
      ['', '""'],
      [true, 'true'],
      [1, '1'],
      [{ taskSupport: 'optional' }, '{"taskSupport":"optional"}'],
    ];
    for (const [value, shown] of bad) {
      assert.throws(() => plugin.registerTool('slow', { description: 'Slow.', task: value }, () => 'done'), {
        name: 'TypeError',
        message: `tool slow: task ${shown} ${NOT_A_TASK_SUPPORT}`,
      });
    }
    assert.deepEqual(TASK_SUPPORT, ['forbidden', 'optional', 'required']);
    assert.throws(() => TASK_SUPPORT.push('sometimes'), TypeError);
    // Refused before anything was registered: the name is still free.
    assert.equal(tools.listTools().some((t) => t.name === 'slow'), false);
    plugin.registerTool('slow', { description: 'Slow.', task: 'required' }, () => 'done');
    assert.deepEqual(tools.listToolExecution().at(-1), { tool: 'slow', taskSupport: 'required' });
    assert.equal(tools.listToolExecution().length, 4);
  },

  'a tool without input behaves as in 0.1'() {
    assert.deepEqual(call('plain', { n: 21 }), {
      tag: 'done',
      val: { content: [{ tag: 'text', val: '{"double":42}' }], structuredContent: '{"double":42}', isError: false },
    });
    assert.deepEqual(globalThis.wardenTestHost.logged.at(-1), ['info', 'plain 21']);
    assert.deepEqual(tools.listTools().find((t) => t.name === 'drop').inputSchema, JSON.stringify({ type: 'object', properties: { table: { type: 'string' } }, required: ['table'], additionalProperties: false }));
  },

  'confirm asks: input-required with the request, then the replayed round answers'() {
    const first = inputRequired(call('drop', { table: 'users' }));
    assert.deepEqual(first.requests, [{ key: 'sure', request: form('Drop table users?', CONFIRM_SCHEMA) }]);
    assert.equal(first.requests[0].request.val.requestedSchema, '{"type":"object","properties":{"confirm":{"type":"boolean","title":"Confirm","default":false}},"required":["confirm"]}');
    assert.deepEqual(envelope(first.state), { json: { asked: ['sure'], answers: [] }, own: '' });
    const again = (answer) => call('drop', { table: 'users' }, answers(first.state, { sure: answer }));
    assert.deepEqual(again(elicit('accept', { confirm: true })), text('dropped users'));
    assert.deepEqual(again(elicit('accept', { confirm: false })), text('kept users'));
    assert.deepEqual(again(elicit('decline')), text('kept users'));
    assert.deepEqual(again(elicit('cancel')), text('kept users'));
    // A key the round did not ask is ignored: the tool asks again.
    const stray = inputRequired(call('drop', { table: 'users' }, answers(first.state, { other: elicit('accept', { confirm: true }) })));
    assert.deepEqual(stray.requests.map((r) => r.key), ['sure']);
  },

  'a refused answer surfaces as a RefusedError'() {
    const first = inputRequired(call('drop', { table: 't' }));
    const no = answers(first.state, { sure: refused('not granted') });
    assert.deepEqual(call('drop', { table: 't' }, no), text('kept t: could not ask (not granted)'));
    assert.deepEqual(call('drop_unguarded', { table: 't' }, no), text('refused: not granted', true));
    const roots = answers(first.state, { sure: { tag: 'roots', val: [{ uri: 'file:///w', name: undefined }] } });
    assert.deepEqual(call('drop_unguarded', { table: 't' }, roots), text('refused: the answer under "sure" is not an elicitation', true));
    const bad = answers(first.state, { sure: elicit('accept', { confirm: 'yes' }) });
    assert.deepEqual(call('drop_unguarded', { table: 't' }, bad), text('refused: the confirmation\'s content is not {"confirm": bool}: {"confirm":"yes"}', true));
    const notJson = answers(first.state, { sure: { tag: 'elicit', val: { action: 'accept', content: '{nope' } } });
    assert.match(call('drop_unguarded', { table: 't' }, notJson).val.content[0].val, /^refused: the form content is not JSON: /);
    const direct = new Input(answers(new Uint8Array(0), { x: refused('over the limit') }));
    assert.throws(() => direct.sample('x', 'hi'), (error) => error instanceof RefusedError && error.reason === 'over the limit' && error.message === 'refused: over the limit');
    assert.throws(() => new Input().confirm('bad key!', '?'), /"bad key!" is not a valid key/);
  },

  'two rounds, the answers and the own state carried'() {
    const first = inputRequired(call('onboard', { team: 'core' }));
    assert.deepEqual(first.requests, [
      { key: 'who', request: form('Who joins core?', { type: 'object', properties: { name: { type: 'string', description: 'Their name.' }, age: { type: 'integer' } }, required: ['name'] }) },
    ]);
    assert.equal(envelope(first.state).own, 'team=core');
    const second = inputRequired(call('onboard', { team: 'core' }, answers(first.state, { who: elicit('accept', { name: 'Ada', age: 36 }) })));
    assert.deepEqual(second.requests, [{ key: 'ok', request: form('Add Ada to core?', CONFIRM_SCHEMA) }]);
    assert.deepEqual(envelope(second.state), {
      json: { asked: ['ok'], answers: [['who', { kind: 'elicit', action: 'accept', content: '{"name":"Ada","age":36}' }]] },
      own: 'team=core',
    });
    // Round 3 gets only the confirmation: the form's answer comes from the state.
    assert.deepEqual(call('onboard', { team: 'core' }, answers(second.state, { ok: elicit('accept', { confirm: true }) })), text('added Ada [team=core]'));
    assert.deepEqual(call('onboard', { team: 'core' }, answers(first.state, { who: elicit('decline') })), text('nobody joins core (decline)'));
    assert.deepEqual(call('onboard', { team: 'core' }, answers(first.state, { who: elicit('accept', { age: 3 }) })), text('refused: the form\'s content lacks "name"', true));
  },

  'the state round-trips, and state this SDK did not write is the plugin\'s'() {
    const one = new Input(undefined, () => true);
    one.state = Uint8Array.from([0, 255, 109]);
    assert.throws(() => one.sample('s', 'Hello'), (error) => isPending(error));
    const sampled = { tag: 'sample', val: { role: 'assistant', content: '{"type":"text","text":"Hi"}', text: 'Hi', model: 'm1', stopReason: 'endTurn' } };
    const two = new Input(answers(one.inputRequired().state, { s: sampled, stray: refused('?') }));
    assert.equal(two.firstRound, false);
    assert.deepEqual([...two.state], [0, 255, 109]);
    assert.deepEqual(Object.keys(two.answers), ['s']);
    const want = { role: 'assistant', content: { type: 'text', text: 'Hi' }, text: 'Hi', model: 'm1', stopReason: 'endTurn' };
    assert.deepEqual(two.sample('s', 'Hello'), want);
    assert.throws(() => two.roots('r'), (error) => isPending(error));
    const three = new Input(answers(two.inputRequired().state, { r: { tag: 'roots', val: [{ uri: 'file:///a', name: 'a' }] } }));
    assert.deepEqual([three.sample('s', 'ignored'), three.roots('r'), [...three.state]], [want, [{ uri: 'file:///a', name: 'a' }], [0, 255, 109]]);
    assert.equal(three.inputRequired(), undefined);
    const raw = new Input(answers(new TextEncoder().encode('raw bytes'), { k: { tag: 'roots', val: [] } }));
    assert.deepEqual([new TextDecoder().decode(raw.state), raw.roots('k')], ['raw bytes', []]);
  },

  'two asks in one round'() {
    const first = inputRequired(call('survey', {}));
    assert.deepEqual(first.requests, [
      { key: 'colour', request: form('Favourite colour?', { type: 'object', properties: { colour: { type: 'string' } } }) },
      { key: 'roots', request: { tag: 'list-roots' } },
    ]);
    const both = answers(first.state, { colour: elicit('accept', { colour: 'teal' }), roots: { tag: 'roots', val: [{ uri: 'file:///src' }, { uri: 'file:///doc', name: 'doc' }] } });
    assert.equal(call('survey', {}, both).val.structuredContent, '{"colour":"teal","roots":["file:///src","file:///doc"]}');
    const half = inputRequired(call('survey', {}, answers(first.state, { colour: elicit('accept', { colour: 'red' }) })));
    assert.deepEqual(half.requests, [{ key: 'roots', request: { tag: 'list-roots' } }]);
    assert.equal(call('survey', {}, answers(half.state, { roots: { tag: 'roots', val: [] } })).val.structuredContent, '{"colour":"red","roots":[]}');
  },

  'other kinds, a resource and a prompt that ask, can-ask'() {
    const swallowed = inputRequired(call('swallow', {}));
    assert.deepEqual(swallowed.requests.map((r) => r.key), ['ok']);
    assert.deepEqual(call('swallow', {}, answers(swallowed.state, { ok: elicit('cancel') })), text('asked'));

    const muse = inputRequired(call('muse', { topic: 'tea' }));
    assert.deepEqual(muse.requests, [{
      key: 's',
      request: { tag: 'sample', val: { messages: [{ role: 'user', content: { tag: 'text', val: 'About tea' } }], systemPrompt: 'Be brief.', maxTokens: 50, temperature: undefined, stopSequences: [], modelPreferences: undefined, tools: undefined } },
    }]);
    const sampled = { tag: 'sample', val: { role: 'assistant', content: '[{"type":"text","text":"Tea is leaves."}]', text: 'Tea is leaves.', model: 'm2', stopReason: undefined } };
    assert.deepEqual(call('muse', { topic: 'tea' }, answers(muse.state, { s: sampled })), text('m2: Tea is leaves.'));

    const visit = inputRequired(call('visit', {}));
    assert.deepEqual(visit.requests, [{ key: 'login', request: { tag: 'elicit-url', val: { message: 'Sign in', url: 'https://login.example.com/x', elicitationId: 'e1' } } }]);
    assert.deepEqual(call('visit', {}, answers(visit.state, { login: elicit('accept') })), text('accept false,true'));

    const read = inputRequired(resources.readResource('secret://plans'));
    assert.deepEqual(read.requests, [{ key: 'reveal', request: form('Reveal plans?', CONFIRM_SCHEMA) }]);
    assert.deepEqual(resources.readResource('secret://plans', answers(read.state, { reveal: elicit('accept', { confirm: true }) })), {
      tag: 'done',
      val: [{ uri: 'secret://plans', mimeType: 'text/plain', body: { tag: 'text', val: 'secret plans' } }],
    });
    const got = inputRequired(prompts.getPrompt('greet', []));
    assert.deepEqual(got.requests.map((r) => r.key), ['who']);
    assert.deepEqual(prompts.getPrompt('greet', [], answers(got.state, { who: elicit('accept', { name: 'Bo' }) })), {
      tag: 'done',
      val: { description: undefined, messages: [{ role: 'user', content: { tag: 'text', val: 'Greet Bo.' } }] },
    });
    assert.throws(() => new Input().canAsk('telepathy'), /is not one of/);
  },
};

let passed = 0;
for (const [name, test] of Object.entries(tests)) {
  try {
    test();
  } catch (error) {
    console.log(`FAILED ${name}: ${error.stack ?? error}`);
    process.exit(1);
  }
  console.log(`ok ${name}`);
  passed++;
}
console.log(`warden-plugin (JavaScript) unit tests: ${passed} passed`);
