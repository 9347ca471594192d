// json-tools: look into, compare and tidy JSON documents. A warden:plugin component
// written in JavaScript with the warden-plugin SDK (sdk/js).
//
//   tools      json_pointer  (RFC 6901: the value at a pointer)
//              json_diff     (RFC 6902: the JSON Patch that turns one document into another;
//                            it may run as an MCP task, contract 0.3.0)
//              json_format   (re-indent, optionally sort keys)
//              json_delete   (remove the value at a pointer, once the user confirms)
//              json_set      (set the value at a pointer to what the user types in a form)
//              json_explain_diff (the client's model explains the changes: sampling)
//              json_find_folders (the client's roots that look like JSON folders)
//              — the last four ask the client (contract 0.2.0 interaction; the manifest,
//              warden.toml, grants `[interaction] elicit`, `sample` and `roots`)
//   resources  json-tools://pointer-syntax, json-tools://examples/{name}
//   prompt     explain_changes (before/after → a review of the changes), with completions

import { Plugin, ResourceTemplate, RefusedError, schema, completable, log } from 'warden-plugin';

const plugin = new Plugin({ name: 'json-tools', version: '0.1.0' });

// ---- RFC 6901 JSON Pointer ----

function parsePointer(pointer) {
  if (pointer === '') return [];
  if (!pointer.startsWith('/')) {
    throw new Error(`a JSON Pointer is empty or starts with "/", got ${JSON.stringify(pointer)}`);
  }
  return pointer
    .slice(1)
    .split('/')
    .map((token) => token.replace(/~1/g, '/').replace(/~0/g, '~'));
}

function escapeToken(token) {
  return String(token).replace(/~/g, '~0').replace(/\//g, '~1');
}

function kind(value) {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'array';
  return typeof value === 'object' ? 'object' : typeof value;
}

function resolvePointer(document, pointer) {
  let value = document;
  let at = '';
  for (const token of parsePointer(pointer)) {
    if (Array.isArray(value)) {
      if (!/^(0|[1-9][0-9]*)$/.test(token) || Number(token) >= value.length) {
        throw new Error(`no value at ${pointer}: the array at ${at || '/'} has ${value.length} items, and "${token}" is not one of their indexes`);
      }
      value = value[Number(token)];
    } else if (value !== null && typeof value === 'object') {
      if (!Object.prototype.hasOwnProperty.call(value, token)) {
        const keys = Object.keys(value);
        throw new Error(`no value at ${pointer}: the object at ${at || '/'} has no key "${token}" (its keys: ${keys.join(', ') || 'none'})`);
      }
      value = value[token];
    } else {
      throw new Error(`no value at ${pointer}: the value at ${at || '/'} is ${value === null ? 'null' : `a ${kind(value)}`}, not an object or array`);
    }
    at += '/' + escapeToken(token);
  }
  return value;
}

// ---- RFC 6902 JSON Patch, computed (objects by key, arrays by index) ----

function equal(a, b) {
  if (a === b) return true;
  if (kind(a) !== kind(b)) return false;
  if (Array.isArray(a)) return a.length === b.length && a.every((item, i) => equal(item, b[i]));
  if (a !== null && typeof a === 'object') {
    const keys = Object.keys(a);
    return keys.length === Object.keys(b).length && keys.every((k) => Object.prototype.hasOwnProperty.call(b, k) && equal(a[k], b[k]));
  }
  return false;
}

function diff(before, after, path = '', patch = []) {
  if (equal(before, after)) return patch;
  if (Array.isArray(before) && Array.isArray(after)) {
    const common = Math.min(before.length, after.length);
    for (let i = 0; i < common; i++) diff(before[i], after[i], `${path}/${i}`, patch);
    // Removed from the end backwards, so each index is still valid when applied.
    for (let i = before.length - 1; i >= common; i--) patch.push({ op: 'remove', path: `${path}/${i}` });
    for (let i = common; i < after.length; i++) patch.push({ op: 'add', path: `${path}/-`, value: after[i] });
    return patch;
  }
  if (kind(before) === 'object' && kind(after) === 'object') {
    for (const key of Object.keys(before)) {
      const child = `${path}/${escapeToken(key)}`;
      if (!Object.prototype.hasOwnProperty.call(after, key)) patch.push({ op: 'remove', path: child });
      else diff(before[key], after[key], child, patch);
    }
    for (const key of Object.keys(after)) {
      if (!Object.prototype.hasOwnProperty.call(before, key)) {
        patch.push({ op: 'add', path: `${path}/${escapeToken(key)}`, value: after[key] });
      }
    }
    return patch;
  }
  patch.push({ op: 'replace', path, value: after });
  return patch;
}

function describe(patch) {
  if (patch.length === 0) return 'The documents are equal.';
  const lines = patch.map(({ op, path, value }) =>
    op === 'remove' ? `remove ${path || '/'}` : `${op} ${path || '/'} = ${JSON.stringify(value)}`,
  );
  return `${patch.length} ${patch.length === 1 ? 'change' : 'changes'}:\n${lines.join('\n')}`;
}

// ---- formatting ----

function sortKeys(value) {
  if (Array.isArray(value)) return value.map(sortKeys);
  if (value !== null && typeof value === 'object') {
    return Object.fromEntries(
      Object.keys(value)
        .sort()
        .map((key) => [key, sortKeys(value[key])]),
    );
  }
  return value;
}

// ---- tools ----

const anyJson = (description) => schema.any({ description });

plugin.registerTool(
  'json_pointer',
  {
    title: 'Read a value by JSON Pointer',
    description:
      'Returns the value at an RFC 6901 JSON Pointer (e.g. "/users/0/name"; "" is the whole document) in a JSON document.',
    inputSchema: {
      document: anyJson('The JSON document to read from.'),
      pointer: schema.string({ description: 'An RFC 6901 JSON Pointer: "" or "/"-separated keys and array indexes, with "~1" for "/" and "~0" for "~".' }),
    },
    outputSchema: {
      value: anyJson('The value at the pointer.'),
      type: schema.enum(['null', 'boolean', 'number', 'string', 'array', 'object'], { description: 'Its JSON type.' }),
    },
    annotations: { readOnlyHint: true, idempotentHint: true },
  },
  ({ document, pointer }) => {
    const value = resolvePointer(document, pointer);
    return {
      content: [{ type: 'text', text: JSON.stringify(value) }],
      structuredContent: { value, type: kind(value) },
    };
  },
);

plugin.registerTool(
  'json_diff',
  {
    title: 'Compare two JSON documents',
    description:
      'Computes the RFC 6902 JSON Patch that turns `before` into `after` (object members by key, arrays by index) and lists the changes.',
    inputSchema: {
      before: anyJson('The original document.'),
      after: anyJson('The changed document.'),
    },
    outputSchema: {
      patch: schema.array(
        schema.object({
          op: schema.enum(['add', 'remove', 'replace']),
          path: schema.string(),
          value: schema.optional(schema.any()),
        }),
        { description: 'The JSON Patch operations, in order.' },
      ),
      changes: schema.integer({ minimum: 0, description: 'How many operations.' }),
    },
    annotations: { readOnlyHint: true, idempotentHint: true },
    // Its work grows with the documents (every member and element of both): a call may
    // run as an MCP task (contract 0.3.0), for a client that supports tasks and when it
    // outlives a short first wait; an ordinary call otherwise.
    task: 'optional',
  },
  ({ before, after }) => {
    const patch = diff(before, after);
    log('debug', `json_diff: ${patch.length} operations`);
    return {
      content: [{ type: 'text', text: describe(patch) }],
      structuredContent: { patch, changes: patch.length },
    };
  },
);

plugin.registerTool(
  'json_format',
  {
    title: 'Format JSON',
    description: 'Re-indents a JSON text (0 puts it on one line) and optionally sorts object keys, for stable, reviewable output.',
    inputSchema: {
      text: schema.string({ description: 'The JSON text.' }),
      indent: schema.optional(schema.integer({ minimum: 0, maximum: 8, description: 'Spaces per level; 0 for one line (default 2).' })),
      sort_keys: schema.optional(schema.boolean({ description: 'Sort object keys (default false).' })),
    },
    annotations: { readOnlyHint: true, idempotentHint: true },
  },
  ({ text, indent = 2, sort_keys = false }) => {
    let value;
    try {
      value = JSON.parse(text);
    } catch {
      throw new Error('the text is not valid JSON');
    }
    return JSON.stringify(sort_keys ? sortKeys(value) : value, null, indent);
  },
);

// ---- tools that ask the user (elicitation) ----

// What they say when they cannot ask: the client does not support form elicitation, or
// the operator did not grant `[interaction] elicit`.
const CANNOT_ASK =
  "it needs the user's answer, and that cannot be asked here (the client does not support form elicitation, " +
  'or the operator has not granted `[interaction] elicit` to this plugin)';

// The parent of the value at `pointer` and the last token (not for "").
function parentOf(document, pointer) {
  const tokens = parsePointer(pointer);
  if (tokens.length === 0) throw new Error('the pointer "" names the whole document: name a member or an element');
  const last = tokens.pop();
  const parent = resolvePointer(document, tokens.map((t) => '/' + escapeToken(t)).join(''));
  if (parent === null || typeof parent !== 'object') {
    throw new Error(`no value at ${pointer}: its parent is ${parent === null ? 'null' : `a ${kind(parent)}`}, not an object or array`);
  }
  return { parent, last };
}

plugin.registerTool(
  'json_delete',
  {
    title: 'Delete a value by JSON Pointer',
    description:
      'Removes the value at an RFC 6901 JSON Pointer from a JSON document and returns the document, once the user has confirmed it in a form the client shows.',
    inputSchema: {
      document: anyJson('The JSON document to change.'),
      pointer: schema.string({ description: 'The RFC 6901 JSON Pointer of the value to remove (not "").' }),
    },
  },
  ({ document, pointer }, { input }) => {
    const value = resolvePointer(document, pointer);
    const { parent, last } = parentOf(document, pointer);
    if (!input.canAsk('elicit-form')) throw new Error(`did not delete ${pointer}: ${CANNOT_ASK}`);
    let confirmed;
    try {
      confirmed = input.confirm('confirm', `Delete the ${kind(value)} at ${pointer}?`);
    } catch (error) {
      if (error instanceof RefusedError) throw new Error(`did not delete ${pointer}: the confirmation could not be asked (${error.reason})`);
      throw error;
    }
    if (!confirmed) return 'Deleted nothing: the user did not confirm (declined, cancelled or left unchecked).';
    if (Array.isArray(parent)) parent.splice(Number(last), 1);
    else delete parent[last];
    log('info', `json_delete: removed ${pointer}`);
    return JSON.stringify(document);
  },
);

plugin.registerTool(
  'json_set',
  {
    title: 'Set a value by JSON Pointer',
    description:
      'Asks the user, in a form, for the value to put at an RFC 6901 JSON Pointer (a member of an object, or an element of an array: "-" appends) and returns the changed document.',
    inputSchema: {
      document: anyJson('The JSON document to change.'),
      pointer: schema.string({ description: 'The RFC 6901 JSON Pointer to set (not "").' }),
    },
  },
  ({ document, pointer }, { input }) => {
    const { parent, last } = parentOf(document, pointer);
    if (Array.isArray(parent) && !(last === '-' || (/^(0|[1-9][0-9]*)$/.test(last) && Number(last) < parent.length))) {
      throw new Error(`cannot set ${pointer}: the array has ${parent.length} items; use an index below that or "-" to append`);
    }
    if (!input.canAsk('elicit-form')) throw new Error(`did not set ${pointer}: ${CANNOT_ASK}`);
    const answer = input.elicit('value', `The new value at ${pointer}`, {
      value: schema.string({ title: 'Value', description: 'JSON (42, true, "text", [1, 2]) or plain text' }),
      as_text: schema.optional(schema.boolean({ title: 'Plain text', description: 'Keep the value as a string', default: false })),
    });
    if (answer.action !== 'accept') return `Set nothing: the user chose ${answer.action}.`;
    const { value: typed, as_text: asText = false } = answer.content;
    let value = typed;
    if (!asText) {
      try {
        value = JSON.parse(typed);
      } catch {
        value = typed;
      }
    }
    if (Array.isArray(parent)) {
      if (last === '-') parent.push(value);
      else parent[Number(last)] = value;
    } else {
      parent[last] = value;
    }
    return JSON.stringify(document);
  },
);

// ---- tools that ask the client's model (sampling) and its roots ----

const AUDIENCES = ['developer', 'reviewer', 'operator'];

const CANNOT_SAMPLE =
  "it needs the client's model, and that cannot be asked here (the client does not support sampling, " +
  'or the operator has not granted `[interaction] sample` to this plugin)';
const CANNOT_LIST_ROOTS =
  "it needs the client's roots, and they cannot be asked for here (the client does not support roots, " +
  'or the operator has not granted `[interaction] roots` to this plugin)';

plugin.registerTool(
  'json_explain_diff',
  {
    title: 'Explain the changes between two JSON documents',
    description:
      "Computes the JSON Patch from `before` to `after` and asks the client's model (sampling) to explain the changes for a reader; equal documents need no model.",
    inputSchema: {
      before: anyJson('The original document.'),
      after: anyJson('The changed document.'),
      audience: schema.optional(schema.enum(AUDIENCES, { description: 'Who reads the explanation (default developer).' })),
    },
    annotations: { readOnlyHint: true },
  },
  ({ before, after, audience = 'developer' }, { input }) => {
    const patch = diff(before, after);
    if (patch.length === 0) return 'The documents are equal: nothing to explain.';
    if (!input.canAsk('sample')) throw new Error(`explained nothing: ${CANNOT_SAMPLE}`);
    let answer;
    try {
      answer = input.sample('explain', {
        messages: [{ role: 'user', content: `Explain these changes to a JSON document for the ${audience}, most important first.\n\n${describe(patch)}` }],
        systemPrompt: 'You review changes to configuration and data files. Be brief: one sentence per change.',
        maxTokens: 80 * patch.length,
        temperature: 0,
      });
    } catch (error) {
      if (error instanceof RefusedError) throw new Error(`explained nothing: the client's model could not be asked (${error.reason})`);
      throw error;
    }
    if (!answer.text) throw new Error(`the model (${answer.model}) answered without text`);
    log('info', `json_explain_diff: ${patch.length} changes explained by ${answer.model}`);
    return `${answer.text.trim()}\n\n(explained by ${answer.model})`;
  },
);

// A `file:` root that is a .json file, or whose last path segment or name mentions json,
// config or schema. (The plugin cannot look inside: it has no file access.)
function looksLikeJson({ uri, name }) {
  const match = /^file:\/\/[^/]*(\/[^?#]*)/i.exec(uri);
  if (!match) return false;
  let path;
  try {
    path = decodeURIComponent(match[1]);
  } catch {
    path = match[1];
  }
  const last = path.replace(/\/+$/, '').split('/').pop().toLowerCase();
  if (last.endsWith('.json')) return true;
  const words = `${last} ${(name ?? '').toLowerCase()}`;
  return ['json', 'config', 'schema'].some((word) => words.includes(word));
}

plugin.registerTool(
  'json_find_folders',
  {
    title: 'Find JSON folders',
    description:
      "Asks the client for its roots (the folders it works in) and lists those that look like they hold JSON documents: a `file:` root that is a .json file, or whose last path segment or name mentions json, config or schema.",
    inputSchema: {},
    outputSchema: {
      folders: schema.array(
        schema.object({ uri: schema.string(), name: schema.optional(schema.string()) }),
        { description: 'The roots that look like they hold JSON documents.' },
      ),
      others: schema.integer({ minimum: 0, description: 'How many roots do not.' }),
    },
    annotations: { readOnlyHint: true },
  },
  (_args, { input }) => {
    if (!input.canAsk('list-roots')) throw new Error(`found nothing: ${CANNOT_LIST_ROOTS}`);
    let roots;
    try {
      roots = input.roots('roots');
    } catch (error) {
      if (error instanceof RefusedError) throw new Error(`found nothing: the client's roots could not be asked for (${error.reason})`);
      throw error;
    }
    const folders = roots.filter(looksLikeJson).map(({ uri, name }) => (name === undefined ? { uri } : { uri, name }));
    const structured = { folders, others: roots.length - folders.length };
    return { content: [{ type: 'text', text: JSON.stringify(structured) }], structuredContent: structured };
  },
);

// ---- resources ----

const POINTER_SYNTAX = `# JSON Pointer (RFC 6901)

- "" is the whole document; "/a" is member "a" of the top-level object.
- "/items/0" is the first element of the array "items".
- In a key, write "~0" for "~" and "~1" for "/": "/a~1b" is member "a/b".
- A pointer names exactly one value; there are no wildcards.
`;

plugin.registerResource(
  'pointer-syntax',
  'json-tools://pointer-syntax',
  { title: 'JSON Pointer syntax', description: 'A short guide to RFC 6901 JSON Pointers.', mimeType: 'text/markdown' },
  (uri) => ({ contents: [{ uri: uri.href, text: POINTER_SYNTAX }] }),
);

const EXAMPLES = {
  config: { server: { host: 'localhost', port: 8080 }, features: ['search', 'export'], debug: false },
  package: { name: 'demo', version: '1.2.0', dependencies: { left: '^1.0.0', right: '~2.3.1' } },
  users: [
    { id: 1, name: 'Ada', roles: ['admin'] },
    { id: 2, name: 'Grace', roles: [] },
  ],
};

plugin.registerResource(
  'example',
  new ResourceTemplate('json-tools://examples/{name}', {
    list: () => ({
      resources: Object.keys(EXAMPLES).map((name) => ({ uri: `json-tools://examples/${name}`, name: `example ${name}` })),
    }),
    complete: { name: (value) => Object.keys(EXAMPLES).filter((name) => name.startsWith(value)) },
  }),
  { title: 'Example documents', description: 'Small JSON documents to try the tools on.', mimeType: 'application/json' },
  (uri, { name }) => {
    if (!Object.prototype.hasOwnProperty.call(EXAMPLES, name)) {
      throw new Error(`no example named "${name}"; there are: ${Object.keys(EXAMPLES).join(', ')}`);
    }
    return { contents: [{ uri: uri.href, text: JSON.stringify(EXAMPLES[name], null, 2) }] };
  },
);

// ---- prompt ----

plugin.registerPrompt(
  'explain_changes',
  {
    title: 'Explain the changes between two JSON documents',
    description: 'Asks the model to explain what changed between two JSON documents, given the computed JSON Patch.',
    argsSchema: {
      before: schema.string({ description: 'The original JSON text.' }),
      after: schema.string({ description: 'The changed JSON text.' }),
      audience: schema.optional(
        completable(schema.string({ description: `Who reads the explanation: ${AUDIENCES.join(', ')} (default developer).` }), (value) =>
          AUDIENCES.filter((audience) => audience.startsWith(value)),
        ),
      ),
    },
  },
  ({ before, after, audience = 'developer' }) => {
    let patch;
    try {
      patch = diff(JSON.parse(before), JSON.parse(after));
    } catch {
      throw new Error('before and after must be JSON texts');
    }
    return {
      description: `What changed, for the ${audience}`,
      messages: [
        {
          role: 'user',
          content: {
            type: 'text',
            text: `Explain these changes to a JSON document for the ${audience}, most important first.\n\n${describe(patch)}`,
          },
        },
      ],
    };
  },
);
