// Interaction (contract warden:plugin@0.2.0 and later): a tool, a resource read or a
// prompt asks the client for input — a confirmation, a form, a URL to open, the client's
// model, its roots — through `extra.input`, and is called again with the answers.
//
// Each ask names its request with a key (1 to 64 characters from A-Z a-z 0-9 _ -). When the
// answer under that key is there, the method returns it; otherwise it records the request and
// throws the `PENDING` sentinel, which ends the round: the SDK replies `input-required` with
// every request recorded in this round, and Warden puts them to the client and calls the
// handler again — in a fresh sandbox, with the same arguments — with the answers. Answers of
// earlier rounds travel in the state, so each later round replays the handler from the start
// and gets them again: ask the same things in the same order for the same arguments. An
// answer the host could not get (not granted, the client cannot answer, a bound broken)
// throws a `RefusedError`.
//
// This module imports nothing of the host, so Node can run it (unit tests).

import { objectSchema } from './schema.js';

/** Thrown by an ask whose answer is not there yet; the SDK catches it. Rethrow it if you catch everything. */
export const PENDING = Object.freeze({ warden: 'input-pending', message: "waiting for the client's input" });

/** True for the sentinel an ask throws while its answer is not there yet. */
export function isPending(error) {
  return error === PENDING;
}

/** The request was not put to the client, or it could not answer: `reason` says why. */
export class RefusedError extends Error {
  constructor(reason) {
    super(`refused: ${reason}`);
    this.name = 'RefusedError';
    this.reason = String(reason);
  }
}

export const INTERACTIONS = ['elicit-form', 'elicit-url', 'sample', 'sample-with-tools', 'list-roots'];

/** The form `confirm` shows: one boolean field, `confirm` (the Rust and Python SDKs' too). */
export const CONFIRM_SCHEMA = {
  type: 'object',
  properties: { confirm: { type: 'boolean', title: 'Confirm', default: false } },
  required: ['confirm'],
};

const KEY = /^[A-Za-z0-9_-]{1,64}$/;
const MAGIC = [0x77, 0x70, 0x73, 0x31]; // "wps1"
const FORM_KEYWORDS = ['$schema', 'type', 'title', 'description', 'properties', 'required'];

// The JSON the contract carries as text, parsed; text that does not parse is a refusal.
function parsed(text, what) {
  try {
    return JSON.parse(text);
  } catch (error) {
    throw new RefusedError(`${what} is not JSON: ${error.message}`);
  }
}

/** A contract `input-answer` ({tag, val}) as the SDK keeps it. */
function fromContract(answer) {
  const { tag, val } = answer;
  try {
    switch (tag) {
      case 'elicit':
        return { kind: 'elicit', action: val.action, content: val.content === undefined ? undefined : parsed(val.content, 'the form content') };
      case 'sample':
        return {
          kind: 'sample',
          role: val.role,
          content: parsed(val.content, 'the sampled content'),
          text: val.text,
          model: val.model,
          stopReason: val.stopReason,
        };
      case 'roots':
        return { kind: 'roots', roots: val.map((root) => ({ uri: root.uri, name: root.name })) };
      default:
        return { kind: 'refused', reason: String(val) };
    }
  } catch (error) {
    if (error instanceof RefusedError) return { kind: 'refused', reason: error.reason };
    throw error;
  }
}

// An answer as the state keeps it (the Rust SDK's format: content as JSON text).
function stored(answer) {
  switch (answer.kind) {
    case 'elicit':
      return { kind: 'elicit', action: answer.action, content: answer.content === undefined ? null : JSON.stringify(answer.content) };
    case 'sample':
      return {
        kind: 'sample',
        role: answer.role,
        content: JSON.stringify(answer.content),
        text: answer.text ?? null,
        model: answer.model,
        stop_reason: answer.stopReason ?? null,
      };
    case 'roots':
      return { kind: 'roots', roots: answer.roots.map((root) => [root.uri, root.name ?? null]) };
    default:
      return { kind: 'refused', reason: answer.reason };
  }
}

function loaded(entry) {
  switch (entry.kind) {
    case 'elicit':
      return {
        kind: 'elicit',
        action: entry.action === 'accept' || entry.action === 'decline' ? entry.action : 'cancel',
        content: entry.content === null || entry.content === undefined ? undefined : JSON.parse(entry.content),
      };
    case 'sample':
      return {
        kind: 'sample',
        role: entry.role === 'user' ? 'user' : 'assistant',
        content: JSON.parse(entry.content),
        text: entry.text ?? undefined,
        model: String(entry.model ?? ''),
        stopReason: entry.stop_reason ?? undefined,
      };
    case 'roots':
      return { kind: 'roots', roots: (entry.roots ?? []).map(([uri, name]) => ({ uri, name: name ?? undefined })) };
    default:
      return { kind: 'refused', reason: String(entry.reason ?? '') };
  }
}

const encoder = new TextEncoder();
const decoder = new TextDecoder();

// The SDK's envelope (the keys asked last, the answers so far) and the plugin's own bytes,
// when `state` starts with one.
function open(state) {
  if (state.length < 8 || MAGIC.some((b, i) => state[i] !== b)) return undefined;
  const length = state[4] | (state[5] << 8) | (state[6] << 16) | (state[7] * 2 ** 24);
  if (state.length < 8 + length) return undefined;
  try {
    const envelope = JSON.parse(decoder.decode(state.subarray(8, 8 + length)));
    const asked = envelope.asked.map(String);
    const answers = envelope.answers.map(([key, entry]) => [String(key), loaded(entry)]);
    return { asked, answers, own: state.slice(8 + length) };
  } catch {
    return undefined;
  }
}

function seal(asked, answers, own) {
  const json = encoder.encode(JSON.stringify({ asked, answers: answers.map(([key, answer]) => [key, stored(answer)]) }));
  const out = new Uint8Array(8 + json.length + own.length);
  out.set(MAGIC, 0);
  const n = json.length;
  out.set([n & 0xff, (n >>> 8) & 0xff, (n >>> 16) & 0xff, (n >>> 24) & 0xff], 4);
  out.set(json, 8);
  out.set(own, 8 + json.length);
  return out;
}

function asBytes(value) {
  if (value instanceof Uint8Array) return value;
  if (value === undefined || value === null) return new Uint8Array(0);
  if (typeof value === 'string') return encoder.encode(value);
  return Uint8Array.from(value);
}

// A sampling message's content ({type: "text", text} or a string, image, audio) as the contract's.
function samplingContent(content) {
  if (typeof content === 'string') return { tag: 'text', val: content };
  if (content?.type === 'text') return { tag: 'text', val: String(content.text) };
  if (content?.type === 'image' || content?.type === 'audio') {
    const data = content.data instanceof Uint8Array ? content.data : base64Bytes(String(content.data));
    return { tag: content.type, val: { data, mimeType: String(content.mimeType) } };
  }
  throw new TypeError(`a sampling message holds text, an image or audio, got ${JSON.stringify(content?.type)}`);
}

function base64Bytes(text) {
  const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/';
  const clean = text.replace(/[\s=]/g, '');
  const out = new Uint8Array(Math.floor((clean.length * 3) / 4));
  let bits = 0;
  let buffer = 0;
  let at = 0;
  for (const char of clean) {
    const digit = alphabet.indexOf(char);
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

/** A sampling request in MCP's shape (or a prompt string) as the contract's `sampling-request`. */
function samplingRequest(request) {
  if (typeof request === 'string') request = { messages: [{ role: 'user', content: request }] };
  const maxTokens = Number(request.maxTokens ?? 256);
  if (!Number.isInteger(maxTokens) || maxTokens < 0) throw new TypeError('maxTokens must be a non-negative integer');
  return {
    messages: (request.messages ?? []).map((message) => {
      const role = typeof message === 'string' ? 'user' : message.role;
      if (role !== 'user' && role !== 'assistant') throw new TypeError(`a sampling message's role is user or assistant, got ${JSON.stringify(role)}`);
      return { role, content: samplingContent(typeof message === 'string' ? message : message.content) };
    }),
    systemPrompt: request.systemPrompt === undefined ? undefined : String(request.systemPrompt),
    maxTokens,
    temperature: request.temperature === undefined ? undefined : Number(request.temperature),
    stopSequences: (request.stopSequences ?? []).map(String),
    modelPreferences: request.modelPreferences === undefined ? undefined : JSON.stringify(request.modelPreferences),
    tools: request.tools === undefined ? undefined : JSON.stringify(request.tools),
  };
}

function wrongKind(key, wanted) {
  return new RefusedError(`the answer under ${JSON.stringify(key)} is not ${wanted}`);
}

/**
 * The interaction of one call: the answers the host passed (this round's and, carried in the
 * state, earlier rounds'), the plugin's own state, and the requests recorded in this round.
 * A handler gets it as `extra.input`. `new Input()` is a first round; `new Input(given)` a
 * later one, with `given` the contract's `input-answers` as componentize-js passes it
 * (`{answers: [{key, answer: {tag, val}}], state: Uint8Array}`).
 */
export class Input {
  constructor(given, canAsk) {
    this.firstRound = given === undefined || given === null;
    /** The plugin's own state (a Uint8Array; a string is stored as UTF-8): empty on the first round, then what it set (or had) when it last asked. */
    this.state = new Uint8Array(0);
    this._answers = [];
    this._requests = [];
    this._together = 0;
    this._canAsk = canAsk;
    if (this.firstRound) return;
    const state = asBytes(given.state);
    const opened = open(state);
    let asked;
    if (opened) {
      asked = opened.asked;
      this._answers = opened.answers;
      this.state = opened.own;
    } else {
      // Not state this SDK wrote: all of it is the plugin's, and every answer counts.
      this.state = state;
    }
    for (const { key, answer } of given.answers ?? []) {
      const wanted = asked === undefined || asked.includes(key);
      if (wanted && !this._answers.some(([k]) => k === key)) this._answers.push([key, fromContract(answer)]);
    }
  }

  /** The answer under `key` ({kind: "elicit" | "sample" | "roots" | "refused", ...}), if there is one. */
  answer(key) {
    return this._answers.find(([k]) => k === key)?.[1];
  }

  /** Every answer there is, by key. */
  get answers() {
    return Object.fromEntries(this._answers);
  }

  /** The requests recorded in this round, as the contract's keyed requests. */
  get requests() {
    return this._requests.slice();
  }

  /** Whether this call may ask for `what` (elicit-form, elicit-url, sample, sample-with-tools, list-roots). */
  canAsk(what) {
    if (!INTERACTIONS.includes(what)) throw new TypeError(`${JSON.stringify(what)} is not one of ${INTERACTIONS.join(', ')}`);
    return this._canAsk ? Boolean(this._canAsk(what)) : true;
  }

  /** Any request (the contract's `input-request`, {tag, val}): its answer, or PENDING thrown after recording it. */
  ask(key, request) {
    if (typeof key !== 'string' || !KEY.test(key)) {
      throw new TypeError(`${JSON.stringify(key)} is not a valid key: 1 to 64 characters from A-Z a-z 0-9 _ -`);
    }
    const answer = this.answer(key);
    if (answer?.kind === 'refused') throw new RefusedError(answer.reason);
    if (answer !== undefined) return answer;
    if (!this._requests.some((r) => r.key === key)) this._requests.push({ key, request });
    if (this._together) return undefined;
    throw PENDING;
  }

  /**
   * Asks several things in one round: inside `fn`, an ask whose answer is not there yet
   * records its request and returns undefined instead of ending the round; the round ends
   * after `fn` if any answer was missing. Returns what `fn` returns.
   */
  together(fn) {
    const before = this._requests.length;
    this._together += 1;
    let value;
    try {
      value = fn();
    } finally {
      this._together -= 1;
    }
    if (this._requests.length > before) throw PENDING;
    return value;
  }

  /** A form with your own JSON Schema; the answer as the host passed it: {action, content?}. */
  elicitForm(key, message, requestedSchema) {
    const answer = this.ask(key, { tag: 'elicit-form', val: { message: String(message), requestedSchema: JSON.stringify(requestedSchema) } });
    if (answer === undefined) return undefined;
    if (answer.kind !== 'elicit') throw wrongKind(key, 'an elicitation');
    return { action: answer.action, content: answer.content };
  }

  /**
   * A form (elicitation, form mode): `schema` is a JSON Schema object or a shape (property
   * name → schema, as for inputSchema; properties are strings, numbers, integers, booleans or
   * enums). Returns {action: "accept" | "decline" | "cancel", content} (content when accepted).
   */
  elicit(key, message, schema) {
    if (schema === null || typeof schema !== 'object' || Array.isArray(schema)) {
      throw new TypeError('a form is a JSON Schema object or a shape of property schemas');
    }
    const form = schema.type === 'object' ? schema : objectSchema(schema);
    const requested = Object.fromEntries(Object.entries(form).filter(([k]) => FORM_KEYWORDS.includes(k)));
    const answer = this.elicitForm(key, message, requested);
    if (answer === undefined) return undefined;
    if (answer.action !== 'accept') return { action: answer.action, content: undefined };
    const content = answer.content ?? {};
    if (content === null || typeof content !== 'object' || Array.isArray(content)) {
      throw new RefusedError(`the form's content is not an object: ${JSON.stringify(content)}`);
    }
    for (const name of requested.required ?? []) {
      if (!(name in content)) throw new RefusedError(`the form's content lacks ${JSON.stringify(name)}`);
    }
    return { action: 'accept', content };
  }

  /** A yes-or-no question (a form with one boolean field, `confirm`): true only when submitted checked. */
  confirm(key, message) {
    const answer = this.elicitForm(key, message, CONFIRM_SCHEMA);
    if (answer === undefined) return undefined;
    if (answer.action !== 'accept' || answer.content === undefined) return false;
    const value = answer.content?.confirm;
    if (typeof value !== 'boolean') {
      throw new RefusedError(`the confirmation's content is not {"confirm": bool}: ${JSON.stringify(answer.content)}`);
    }
    return value;
  }

  /** Asks the user to open `url` (elicitation, URL mode); the answer is the action: accept, decline or cancel. */
  elicitUrl(key, message, url, elicitationId) {
    const answer = this.ask(key, { tag: 'elicit-url', val: { message: String(message), url: String(url), elicitationId: String(elicitationId) } });
    if (answer === undefined) return undefined;
    if (answer.kind !== 'elicit') throw wrongKind(key, 'an elicitation');
    return answer.action;
  }

  /**
   * Asks the client's model: a prompt string, or MCP's shape {messages: [{role, content}],
   * maxTokens (default 256), systemPrompt?, temperature?, stopSequences?, modelPreferences?,
   * tools?}. Returns {role, content (MCP content JSON), text, model, stopReason}.
   */
  sample(key, request) {
    const answer = this.ask(key, { tag: 'sample', val: samplingRequest(request) });
    if (answer === undefined) return undefined;
    if (answer.kind !== 'sample') throw wrongKind(key, 'a sampling answer');
    return { role: answer.role, content: answer.content, text: answer.text, model: answer.model, stopReason: answer.stopReason };
  }

  /** The client's roots: [{uri, name?}]. */
  roots(key) {
    const answer = this.ask(key, { tag: 'list-roots' });
    if (answer === undefined) return undefined;
    if (answer.kind !== 'roots') throw wrongKind(key, 'roots');
    return answer.roots.map((root) => ({ ...root }));
  }

  /** The contract's `input-required` when requests were recorded, else undefined. */
  inputRequired() {
    if (this._requests.length === 0) return undefined;
    const asked = this._requests.map((r) => r.key);
    return { requests: this.requests, state: seal(asked, this._answers, asBytes(this.state)) };
  }
}
