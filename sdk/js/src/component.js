// The exports of world warden:plugin/plugin (contract warden:plugin@0.3.0), in the shape
// componentize-js expects (interfaces as objects of camelCase functions; records as
// objects with camelCase fields; option as a value or undefined; variants as {tag, val};
// enums as their kebab-case case names, strings; an exported result's err as a thrown
// value). `warden-plugin build` re-exports them from the bundle; authors never import
// this module.

import { currentPlugin, log, progress, cancelled, canAsk, NotFoundError, InvalidArgumentsError } from './index.js';
import { Input, isPending } from './input.js';
import { warmBindingsRealm } from './warm.js';

const extra = { log, progress, cancelled, canAsk };

/**
 * Runs `run` with the call's Input (`extra.input` for the handler): when it recorded
 * requests, the reply is `input-required` whatever `run` returned or threw; otherwise it
 * is `{tag: "done", val}` of what `run` returned (a throw other than the PENDING
 * sentinel passes through).
 */
function interact(given, run) {
  const input = new Input(given, canAsk);
  let value;
  try {
    value = run({ ...extra, input });
  } catch (error) {
    const required = input.inputRequired();
    if (required) return { tag: 'input-required', val: required };
    if (isPending(error)) throw { tag: 'failed', val: 'an ask was pending but no request was recorded' };
    throw error;
  }
  const required = input.inputRequired();
  if (required) return { tag: 'input-required', val: required };
  return { tag: 'done', val: value };
}

function contractError(error) {
  if (error instanceof NotFoundError) return { tag: 'not-found', val: error.message };
  if (error instanceof InvalidArgumentsError) return { tag: 'invalid-arguments', val: error.message };
  return { tag: 'failed', val: messageOf(error) };
}

function messageOf(error) {
  if (error instanceof Error) return error.message;
  return typeof error === 'string' ? error : JSON.stringify(error);
}

function settled(value, what) {
  if (value && typeof value.then === 'function') {
    throw new Error(`${what} returned a Promise: handlers run synchronously inside the component (drop \`async\`)`);
  }
  return value;
}

function optionalString(value) {
  return value === undefined || value === null ? undefined : String(value);
}

function optionalBool(value) {
  return value === undefined || value === null ? undefined : Boolean(value);
}

const BASE64 = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/';

/** Bytes from a Uint8Array, an ArrayBuffer, an array of numbers or a base64 string (as MCP sends them). */
export function bytes(value) {
  if (value instanceof Uint8Array) return value;
  if (value instanceof ArrayBuffer) return new Uint8Array(value);
  if (Array.isArray(value)) return Uint8Array.from(value);
  if (typeof value !== 'string') throw new TypeError('binary data must be a Uint8Array or a base64 string');
  const clean = value.replace(/[\s=]/g, '');
  const out = new Uint8Array(Math.floor((clean.length * 3) / 4));
  let bits = 0;
  let buffer = 0;
  let at = 0;
  for (const char of clean) {
    const digit = BASE64.indexOf(char === '-' ? '+' : char === '_' ? '/' : char);
    if (digit < 0) throw new TypeError(`not base64: ${JSON.stringify(char)}`);
    buffer = (buffer << 6) | digit;
    bits += 6;
    if (bits >= 8) {
      bits -= 8;
      out[at++] = (buffer >> bits) & 0xff;
    }
  }
  return out.subarray(0, at);
}

function resourceContents(item, fallbackUri) {
  const uri = String(item.uri ?? fallbackUri);
  const mimeType = optionalString(item.mimeType);
  if (item.blob !== undefined) return { uri, mimeType, body: { tag: 'blob', val: bytes(item.blob) } };
  return { uri, mimeType, body: { tag: 'text', val: String(item.text ?? '') } };
}

/** One MCP content item ({type: "text", text}, image, audio, resource_link, resource) as the contract's content. */
function content(item) {
  if (typeof item === 'string') return { tag: 'text', val: item };
  switch (item?.type) {
    case 'text':
      return { tag: 'text', val: String(item.text) };
    case 'image':
    case 'audio':
      return { tag: item.type, val: { data: bytes(item.data), mimeType: String(item.mimeType) } };
    case 'resource_link':
      return {
        tag: 'resource-link',
        val: {
          uri: String(item.uri),
          name: String(item.name),
          description: optionalString(item.description),
          mimeType: optionalString(item.mimeType),
        },
      };
    case 'resource':
      return { tag: 'embedded-resource', val: resourceContents(item.resource) };
    default:
      throw new TypeError(`unknown content type ${JSON.stringify(item?.type)}`);
  }
}

function callResult(value) {
  if (typeof value === 'string') return { content: [{ tag: 'text', val: value }], structuredContent: undefined, isError: false };
  if (value === undefined || value === null) return { content: [], structuredContent: undefined, isError: false };
  const structured = value.structuredContent;
  let items = value.content;
  if (items === undefined) {
    // As the MCP SDK advises: structured content is also given as its JSON text.
    items = structured === undefined ? [] : [{ type: 'text', text: JSON.stringify(structured) }];
  }
  return {
    content: items.map(content),
    structuredContent: structured === undefined ? undefined : JSON.stringify(structured),
    isError: Boolean(value.isError),
  };
}

export const tools = {
  listTools() {
    return [...currentPlugin().tools.values()].map(({ name, config, inputSchema, outputSchema }) => {
      const annotations = config.annotations;
      return {
        name,
        title: optionalString(config.title ?? annotations?.title),
        description: String(config.description),
        inputSchema: JSON.stringify(inputSchema),
        outputSchema: outputSchema === undefined ? undefined : JSON.stringify(outputSchema),
        annotations:
          annotations === undefined
            ? undefined
            : {
                title: optionalString(annotations.title),
                readOnlyHint: optionalBool(annotations.readOnlyHint),
                destructiveHint: optionalBool(annotations.destructiveHint),
                idempotentHint: optionalBool(annotations.idempotentHint),
                openWorldHint: optionalBool(annotations.openWorldHint),
              },
      };
    });
  },

  /** The tools that declared `task` (registration order): the contract's `tool-execution`s. */
  listToolExecution() {
    return [...currentPlugin().tools.values()]
      .filter(({ task }) => task !== undefined)
      .map(({ name, task }) => ({ tool: name, taskSupport: task }));
  },

  callTool(name, argumentsJson, input) {
    const tool = currentPlugin().tools.get(name);
    if (!tool) throw { tag: 'not-found', val: `no tool named ${name}` };
    const reply = interact(input, (withInput) => {
      try {
        const args = JSON.parse(argumentsJson);
        return { ok: settled(tool.handler(args, withInput), `tool ${name}`) };
      } catch (error) {
        if (isPending(error)) throw error;
        return { error };
      }
    });
    if (reply.tag === 'input-required') return reply;
    const { ok: result, error } = reply.val;
    if (error !== undefined) {
      if (error instanceof NotFoundError || error instanceof InvalidArgumentsError) throw contractError(error);
      // As the MCP SDK does: a thrown error is a result the model sees, with its message.
      return { tag: 'done', val: { content: [{ tag: 'text', val: messageOf(error) }], structuredContent: undefined, isError: true } };
    }
    try {
      return { tag: 'done', val: callResult(result) };
    } catch (failure) {
      throw { tag: 'failed', val: `tool ${name} returned a value that is not a tool result: ${messageOf(failure)}` };
    }
  },
};

function templateInfo(entry) {
  const { name, template, metadata } = entry;
  return {
    uriTemplate: template.uriTemplate,
    name: String(name),
    title: optionalString(metadata.title),
    description: optionalString(metadata.description),
    mimeType: optionalString(metadata.mimeType),
  };
}

function resourceInfo(uri, name, metadata) {
  return {
    uri: String(uri),
    name: String(name),
    title: optionalString(metadata.title),
    description: optionalString(metadata.description),
    mimeType: optionalString(metadata.mimeType),
    size: metadata.size === undefined || metadata.size === null ? undefined : BigInt(metadata.size),
  };
}

function readWith(entry, uri, variables, withInput) {
  const metadata = entry.metadata;
  let target = uri;
  if (typeof URL === 'function') {
    try {
      target = new URL(uri);
    } catch {
      target = uri;
    }
  }
  const value = settled(entry.read(target, variables, withInput), `resource ${entry.name}`);
  if (typeof value === 'string') return [{ uri, mimeType: optionalString(metadata.mimeType), body: { tag: 'text', val: value } }];
  return (value?.contents ?? []).map((item) =>
    resourceContents({ ...item, mimeType: item.mimeType ?? metadata.mimeType }, uri),
  );
}

function guarded(run) {
  try {
    return run();
  } catch (error) {
    if (error && typeof error === 'object' && typeof error.tag === 'string' && !(error instanceof Error)) throw error;
    throw contractError(error);
  }
}

export const resources = {
  listResources() {
    const plugin = currentPlugin();
    const listed = [...plugin.resources.values()].map(({ uri, name, metadata }) => resourceInfo(uri, name, metadata));
    for (const entry of plugin.templates.values()) {
      if (typeof entry.template.list !== 'function') continue;
      const more = settled(entry.template.list(extra), `the list callback of ${entry.template.uriTemplate}`);
      for (const item of more?.resources ?? []) {
        listed.push(resourceInfo(item.uri, item.name, { ...entry.metadata, ...item }));
      }
    }
    return listed;
  },

  listResourceTemplates() {
    return [...currentPlugin().templates.values()].map(templateInfo);
  },

  readResource(uri, input) {
    return guarded(() => {
      const plugin = currentPlugin();
      let found = plugin.resources.has(uri) ? [plugin.resources.get(uri), {}] : undefined;
      for (const entry of plugin.templates.values()) {
        if (found) break;
        const variables = entry.template.match(uri);
        if (variables) found = [entry, variables];
      }
      if (!found) throw new NotFoundError(`no resource ${uri}`);
      return interact(input, (withInput) => readWith(found[0], uri, found[1], withInput));
    });
  },
};

function message(item) {
  const role = item.role;
  if (role !== 'user' && role !== 'assistant') throw new TypeError(`a prompt message's role is user or assistant, got ${JSON.stringify(role)}`);
  return { role, content: content(item.content) };
}

export const prompts = {
  listPrompts() {
    return [...currentPlugin().prompts.values()].map(({ name, config, args }) => ({
      name,
      title: optionalString(config.title),
      description: optionalString(config.description),
      arguments: args.map(({ name: argument, description, required }) => ({
        name: argument,
        description: optionalString(description),
        required,
      })),
    }));
  },

  getPrompt(name, pairs, input) {
    return guarded(() => {
      const prompt = currentPlugin().prompts.get(name);
      if (!prompt) throw new NotFoundError(`no prompt named ${name}`);
      const args = Object.fromEntries(pairs);
      for (const argument of prompt.args) {
        if (argument.required && args[argument.name] === undefined) {
          throw new InvalidArgumentsError(`prompt ${name} needs the argument ${argument.name}`);
        }
      }
      for (const given of Object.keys(args)) {
        if (!prompt.args.some((argument) => argument.name === given)) {
          throw new InvalidArgumentsError(`prompt ${name} has no argument ${given}`);
        }
      }
      const reply = interact(input, (withInput) => settled(prompt.handler(args, withInput), `prompt ${name}`));
      if (reply.tag === 'input-required') return reply;
      const value = reply.val;
      if (typeof value === 'string') {
        return { tag: 'done', val: { description: undefined, messages: [{ role: 'user', content: { tag: 'text', val: value } }] } };
      }
      return {
        tag: 'done',
        val: { description: optionalString(value.description), messages: (value.messages ?? []).map(message) },
      };
    });
  },
};

export const completions = {
  complete(reference, argument, value) {
    const plugin = currentPlugin();
    let complete;
    if (reference.tag === 'prompt') {
      complete = plugin.prompts.get(reference.val)?.args.find((a) => a.name === argument)?.complete;
    } else {
      complete = plugin.templates.get(reference.val)?.template.complete[argument];
    }
    if (typeof complete !== 'function') return [];
    try {
      const suggestions = settled(complete(value, extra), `completion of ${argument}`);
      return (suggestions ?? []).map(String).slice(0, 100);
    } catch (error) {
      log('warning', `completion of ${argument} failed: ${messageOf(error)}`);
      return [];
    }
  },
};

// Runs while componentize-js takes the snapshot every call starts from (./warm.js).
warmBindingsRealm();
