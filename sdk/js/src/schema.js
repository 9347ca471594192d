// A tiny JSON Schema builder: each function returns a plain JSON Schema object.
// `schema.optional(s)` marks a property that may be omitted (a symbol key, which
// JSON.stringify never writes); `completable(s, fn)` attaches completions to a
// prompt argument, as the MCP SDK's `completable` does.

const OPTIONAL = Symbol('warden-plugin optional');
const COMPLETE = Symbol('warden-plugin complete');

function withOptions(base, options = {}) {
  return { ...base, ...options };
}

export const schema = {
  string: (options) => withOptions({ type: 'string' }, options),
  number: (options) => withOptions({ type: 'number' }, options),
  integer: (options) => withOptions({ type: 'integer' }, options),
  boolean: (options) => withOptions({ type: 'boolean' }, options),
  /** Any JSON value (no `type`). */
  any: (options) => withOptions({}, options),
  array: (items, options) => withOptions({ type: 'array', items }, options),
  enum: (values, options) => withOptions({ type: 'string', enum: [...values] }, options),
  /** An object with these properties; the ones not wrapped in `optional` are required. */
  object: (shape, options) => withOptions(objectSchema(shape), options),
  /** A property that may be omitted. */
  optional: (inner) => {
    const copy = { ...inner };
    copy[OPTIONAL] = true;
    if (inner[COMPLETE]) copy[COMPLETE] = inner[COMPLETE];
    return copy;
  },
};

/** A prompt argument (or any string schema) with completions: `(value) => string[]`. */
export function completable(inner, complete) {
  if (typeof complete !== 'function') throw new TypeError('completable: the second argument must be a function');
  const copy = { ...inner };
  if (inner[OPTIONAL]) copy[OPTIONAL] = true;
  copy[COMPLETE] = complete;
  return copy;
}

export function isOptional(value) {
  return Boolean(value && value[OPTIONAL]);
}

export function completerOf(value) {
  return value ? value[COMPLETE] : undefined;
}

export function objectSchema(shape) {
  const properties = {};
  const required = [];
  for (const [name, property] of Object.entries(shape)) {
    if (property === null || typeof property !== 'object') {
      throw new TypeError(`property ${name}: its schema must be a JSON Schema object`);
    }
    properties[name] = property;
    if (!property[OPTIONAL]) required.push(name);
  }
  const result = { type: 'object', properties };
  if (required.length > 0) result.required = required;
  result.additionalProperties = false;
  return result;
}
