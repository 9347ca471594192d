// `warden dev`'s loader (`warden-plugin dev-loader`): a component built once, with this
// copy of the SDK inside. At the first export call of each instance (Warden makes a fresh
// one per call) it reads the author's bundle (`warden-plugin dev-bundle`: CommonJS, the
// SDK left to `require`) from the folder `warden dev` mounts read-only at /0, and runs it
// against this SDK, so a save needs a new bundle, not a new component.
import { getDirectories } from 'wasi:filesystem/preopens@0.2.12';
import * as sdk from 'warden-plugin';
import * as component from 'warden-plugin/component';

const MOUNT = '/0';
const FILE = 'plugin.bundle.js';

let loaded = false;
let failure;

function readText(dir, path) {
  const fd = dir.openAt({ symlinkFollow: false }, path, {}, { read: true });
  try {
    const chunks = [];
    let offset = 0n;
    for (;;) {
      const [bytes, eof] = fd.read(65536n, offset);
      chunks.push(bytes);
      offset += BigInt(bytes.length);
      if (eof || bytes.length === 0) break;
    }
    const all = new Uint8Array(Number(offset));
    let at = 0;
    for (const chunk of chunks) {
      all.set(chunk, at);
      at += chunk.length;
    }
    return new TextDecoder().decode(all);
  } finally {
    fd[Symbol.dispose]?.();
  }
}

// Reads and runs the bundle, once per instance (never while componentize snapshots
// this module: the folder is only there when Warden serves it).
function ensure() {
  if (loaded) {
    if (failure) throw failure;
    return;
  }
  loaded = true;
  try {
    const found = getDirectories().find(([, path]) => path === MOUNT);
    if (!found) throw new Error(`no folder mounted at ${MOUNT}: this component is served by \`warden dev\` only`);
    let source;
    try {
      source = readText(found[0], FILE);
    } catch (error) {
      // A WASI error is an Error whose payload names the error code (no-entry, …).
      throw new Error(`cannot read ${MOUNT}/${FILE} (${error?.payload ?? error?.message ?? error})`);
    }
    const module = { exports: {} };
    const require = (name) => {
      if (name === 'warden-plugin') return sdk;
      throw new Error(`cannot require ${JSON.stringify(name)}: the bundle holds everything but the SDK`);
    };
    // Indirect eval of a function expression that starts on line 1: stack traces keep
    // the bundle's line numbers.
    const run = (0, eval)(`(function (require, module, exports) {${source}\n})\n//# sourceURL=${MOUNT}/${FILE}`);
    run(require, module, module.exports);
  } catch (error) {
    failure = error instanceof Error ? error : new Error(String(error));
    // A trap's message is lost (stdio is disabled, as in a production build): say why in
    // Warden's log first.
    try {
      sdk.log('error', `warden dev loader: ${failure}${failure.stack ? `\n${failure.stack}` : ''}`);
    } catch {}
    throw failure;
  }
}

// A load failure is the contract's `failed` error where the function has a result, and a
// trap where it has none.
function forwarded(target, withError) {
  const out = {};
  for (const [name, fn] of Object.entries(target)) {
    out[name] = (...args) => {
      try {
        ensure();
      } catch (error) {
        if (withError.includes(name)) throw { tag: 'failed', val: `warden dev loader: ${error.message}` };
        throw error;
      }
      return fn(...args);
    };
  }
  return out;
}

export const tools = forwarded(component.tools, ['callTool']);
export const resources = forwarded(component.resources, ['readResource']);
export const prompts = forwarded(component.prompts, ['getPrompt']);
export const completions = forwarded(component.completions, []);
