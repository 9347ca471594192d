// warden-plugin: write a warden:plugin@0.3.0 component in JavaScript the way the MCP
// TypeScript SDK's McpServer registers tools, resources and prompts. A handler can ask
// the client for input (a confirmation, a form, the client's model, its roots) through
// `extra.input` (./input.js), and is called again with the answers; a tool can declare
// that its calls may run as MCP tasks (`task` in registerTool's config).
//
// Runs inside the component (componentize-js, StarlingMonkey): no Node APIs, no
// dependencies. The exports the component model needs live in ./component.js, which
// `warden-plugin build` appends to the author's module; the author writes none.

import {
  log as hostLog,
  progress as hostProgress,
  cancelled as hostCancelled,
  canAsk as hostCanAsk,
} from 'warden:plugin/host@0.3.0';
import { INTERACTIONS } from './input.js';

export { schema, completable } from './schema.js';
export { Input, RefusedError, PENDING, isPending, CONFIRM_SCHEMA } from './input.js';
import { objectSchema, completerOf, isOptional } from './schema.js';

const LEVELS = ['debug', 'info', 'notice', 'warning', 'error', 'critical', 'alert', 'emergency'];

/**
 * How a tool's calls may run (the contract's `task-support`, MCP tasks): `forbidden`,
 * always an ordinary call; `optional`, a task for a client that supports tasks when the
 * call outlives a short first wait; `required`, only ever a task.
 */
export const TASK_SUPPORT = Object.freeze(['forbidden', 'optional', 'required']);

/** Sends a message to Warden's log (and to the client, when it asked for that level). */
export function log(level, message) {
  if (!LEVELS.includes(level)) {
    throw new TypeError(`log level must be one of ${LEVELS.join(', ')}, got ${JSON.stringify(level)}`);
  }
  hostLog(level, String(message));
}

/** Reports progress to the client, when the request asked for it. */
export function progress(done, total, message) {
  hostProgress(Number(done), total === undefined || total === null ? undefined : Number(total), message ?? undefined);
}

/** True once the client has cancelled the current call. */
export function cancelled() {
  return hostCancelled();
}

/**
 * Whether this call may ask for `what` — "elicit-form", "elicit-url", "sample",
 * "sample-with-tools" or "list-roots": the operator granted it (the manifest's
 * `[interaction]`) and the client declared it. Ask only then, or fall back.
 */
export function canAsk(what) {
  if (!INTERACTIONS.includes(what)) {
    throw new TypeError(`canAsk: ${JSON.stringify(what)} is not one of ${INTERACTIONS.join(', ')}`);
  }
  return hostCanAsk(what);
}

/** Error classes that reach Warden as the contract's `error` variant instead of an isError result. */
export class NotFoundError extends Error {
  constructor(message) {
    super(message);
    this.name = 'NotFoundError';
  }
}
export class InvalidArgumentsError extends Error {
  constructor(message) {
    super(message);
    this.name = 'InvalidArgumentsError';
  }
}

/** An RFC 6570 URI template (level 1 `{var}` and reserved `{+var}`), as in the MCP SDK. */
export class ResourceTemplate {
  /**
   * @param {string} uriTemplate e.g. `notes://{name}`
   * @param {{list?: () => {resources: object[]}, complete?: Record<string, (value: string) => string[]>}} callbacks
   */
  constructor(uriTemplate, callbacks = {}) {
    this.uriTemplate = String(uriTemplate);
    this.list = callbacks.list;
    this.complete = callbacks.complete ?? {};
    this.variables = [];
    let pattern = '^';
    let rest = this.uriTemplate;
    const expression = /\{(\+?)([A-Za-z0-9_.]+)\}/g;
    let last = 0;
    for (const found of rest.matchAll(expression)) {
      pattern += escapeRegExp(rest.slice(last, found.index));
      pattern += found[1] === '+' ? '(.+)' : '([^/?#,]+)';
      this.variables.push(found[2]);
      last = found.index + found[0].length;
    }
    pattern += escapeRegExp(rest.slice(last)) + '$';
    this.pattern = new RegExp(pattern);
  }

  /** The variables of `uri` when it matches, else undefined. */
  match(uri) {
    const found = this.pattern.exec(uri);
    if (!found) return undefined;
    const variables = {};
    this.variables.forEach((name, i) => {
      variables[name] = safeDecode(found[i + 1]);
    });
    return variables;
  }
}

let current;

/** The plugin being defined; `warden-plugin build` exports it as the component. */
export function currentPlugin() {
  if (!current) {
    throw new Error('no Plugin was created: call `new Plugin({ name })` in the plugin module');
  }
  return current;
}

export class Plugin {
  /** @param {{name: string, version?: string}} info */
  constructor(info = {}) {
    if (current) {
      throw new Error('a component holds one Plugin; this module created a second one');
    }
    this.info = { ...info };
    this.tools = new Map();
    this.resources = new Map();
    this.templates = new Map();
    this.prompts = new Map();
    current = this;
  }

  /**
   * Registers a tool, as McpServer.registerTool does.
   * @param {string} name
   * @param {{title?: string, description: string, inputSchema?: object, outputSchema?: object, annotations?: object, task?: 'forbidden' | 'optional' | 'required'}} config
   *   `inputSchema` / `outputSchema`: a JSON Schema with `type: "object"`, or a shape
   *   (property name → JSON Schema, e.g. built with `schema`). `task`: whether its calls
   *   may run as MCP tasks (left out, the tool is not listed, and so forbidden); the
   *   operator's manifest (`[tasks]`) decides over it.
   * @param {(args: object, extra: object) => object | string} handler
   */
  registerTool(name, config, handler) {
    if (typeof config === 'function') {
      handler = config;
      config = {};
    }
    if (this.tools.has(name)) throw new Error(`tool ${name} is already registered`);
    if (typeof handler !== 'function') throw new TypeError(`tool ${name}: the handler must be a function`);
    if (!config.description) throw new Error(`tool ${name}: a description is required (Warden refuses a tool without one)`);
    const task = config.task ?? undefined;
    if (task !== undefined && !TASK_SUPPORT.includes(task)) {
      throw new TypeError(
        `tool ${name}: task ${describeValue(task)} is not a task support: write "forbidden", "optional" or "required", ` +
          'or leave task out (then the tool is forbidden to run as a task)',
      );
    }
    const inputSchema = config.inputSchema === undefined ? { type: 'object', properties: {} } : asObjectSchema(config.inputSchema);
    const outputSchema = config.outputSchema === undefined ? undefined : asObjectSchema(config.outputSchema);
    this.tools.set(name, { name, config, inputSchema, outputSchema, handler, task });
    return this;
  }

  /**
   * Registers a resource, as McpServer.registerResource does: a fixed URI or a ResourceTemplate.
   * @param {string} name
   * @param {string | ResourceTemplate} uriOrTemplate
   * @param {{title?: string, description?: string, mimeType?: string, size?: number}} metadata
   * @param {(uri: URL | string, variables: object) => {contents: object[]} | string} read
   */
  registerResource(name, uriOrTemplate, metadata, read) {
    if (typeof metadata === 'function') {
      read = metadata;
      metadata = {};
    }
    if (typeof read !== 'function') throw new TypeError(`resource ${name}: the read callback must be a function`);
    if (uriOrTemplate instanceof ResourceTemplate) {
      const key = uriOrTemplate.uriTemplate;
      if (this.templates.has(key)) throw new Error(`resource template ${key} is already registered`);
      this.templates.set(key, { name, template: uriOrTemplate, metadata: metadata ?? {}, read });
    } else {
      const uri = String(uriOrTemplate);
      if (this.resources.has(uri)) throw new Error(`resource ${uri} is already registered`);
      this.resources.set(uri, { name, uri, metadata: metadata ?? {}, read });
    }
    return this;
  }

  /**
   * Registers a prompt, as McpServer.registerPrompt does.
   * @param {string} name
   * @param {{title?: string, description?: string, argsSchema?: object}} config
   *   `argsSchema`: argument name → JSON Schema (`schema.string(...)`), `schema.optional`
   *   for an optional one, `completable(...)` for one with completions.
   * @param {(args: object, extra: object) => {description?: string, messages: object[]} | string} handler
   */
  registerPrompt(name, config, handler) {
    if (typeof config === 'function') {
      handler = config;
      config = {};
    }
    if (this.prompts.has(name)) throw new Error(`prompt ${name} is already registered`);
    if (typeof handler !== 'function') throw new TypeError(`prompt ${name}: the handler must be a function`);
    const args = Object.entries(config.argsSchema ?? {}).map(([argument, schema]) => ({
      name: argument,
      description: schema?.description,
      required: !isOptional(schema),
      complete: completerOf(schema),
    }));
    this.prompts.set(name, { name, config, args, handler });
    return this;
  }
}

// ---- conversions between the author's (MCP-shaped) values and the contract's ----

export function asObjectSchema(value) {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) {
    throw new TypeError('a schema must be a JSON Schema object or a shape of property schemas');
  }
  if (value.type === 'object' && typeof value.type === 'string') return value;
  return objectSchema(value);
}

function describeValue(value) {
  if (typeof value === 'string') return JSON.stringify(value);
  if (typeof value === 'function') return 'a function';
  try {
    return JSON.stringify(value) ?? String(value);
  } catch {
    return String(value);
  }
}

function escapeRegExp(text) {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

function safeDecode(text) {
  try {
    return decodeURIComponent(text);
  } catch {
    return text;
  }
}
