// Warms, at build time, the realm in which componentize-js's bindings run.
//
// Every call runs in a fresh instance made from the snapshot componentize-js takes after
// the plugin's module has run. The bindings that lift a call's arguments and lower its
// result run in a realm of their own, beside the plugin's, and SpiderMonkey creates a
// realm's standard classes (Uint8Array, String, the async-function and promise machinery)
// on their first use. Nothing in that realm used them before the snapshot, so every call
// created them again: about half of a trivial tool call's instructions (measured with
// Wasmtime's fuel: 1.43 M before, 0.65 M after, for a tool that returns a constant).
// Using them once here puts them in the snapshot.
//
// The bindings' realm is reached through one of its functions: the host imports are
// defined there, so their constructor is that realm's Function. The code it runs is pure
// (it calls no import: none is there while the snapshot is taken); a failure only
// leaves the realm as it was.

import { cancelled } from 'warden:plugin/host@0.3.0';

// What the bindings use on a call's path (componentize-js 0.23's generated lifting and
// lowering code): typed arrays over the memory, DataView reads and writes, string and
// number checks, arrays, and an async function that awaits the export's result.
const BINDINGS_WARM_UP = `
  const bytes = new Uint8Array(new ArrayBuffer(16), 0, 16);
  const view = new DataView(bytes.buffer);
  view.setUint32(0, 1, true);
  view.setUint8(4, view.getUint32(0, true) + view.getUint8(4, true));
  view.setBigInt64(8, view.getBigInt64(8, true), true);
  bytes.set(bytes.slice(0, 4), 4);
  const items = [];
  items.push({ tag: 'text', val: String(bytes.length) });
  for (const item of items) {
    if (!Array.isArray(items) || !Number.isInteger(item.val.charCodeAt(0))) break;
  }
  items.map((item) => JSON.stringify(item.tag)).join('').split('');
  BigInt.asUintN(64, BigInt(1));
  (async () => await items)();
`;

/** Runs BINDINGS_WARM_UP in the bindings' realm, when it is not this one (it is in Node). */
export function warmBindingsRealm() {
  try {
    const BindingsFunction = cancelled.constructor;
    if (typeof BindingsFunction !== 'function' || BindingsFunction === Function) return;
    new BindingsFunction(BINDINGS_WARM_UP)();
  } catch {
    // Only an optimisation: the calls work the same without it.
  }
}
