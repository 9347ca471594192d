#!/usr/bin/env node
// warden-plugin build ENTRY.js [-o OUT.wasm] [--keep-bundle]
// warden-plugin dev-loader -o OUT.wasm        (warden dev: the loader component, built once)
// warden-plugin dev-bundle ENTRY.js -o OUT.js (warden dev: the author's code, at every save)
//
// Bundles the plugin module (which creates a `Plugin`) with this SDK into one ES module
// (esbuild), appends the component exports, and turns it into a warden:plugin@0.3.0
// component with componentize-js against the WIT shipped in this package (world
// `plugin`). esbuild and @bytecodealliance/componentize-js are resolved from the
// plugin's folder, then from the current folder (install them as devDependencies).
// WASI features the SDK does not need are disabled, so the component imports only
// the contract's host interface and what StarlingMonkey itself needs of WASI 0.2.

import { copyFile, mkdir, mkdtemp, readdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const sdk = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const wit = join(sdk, 'wit');

function usage(message) {
  if (message) console.error(`warden-plugin: ${message}`);
  console.error('usage: warden-plugin build ENTRY.js [-o OUT.wasm] [--keep-bundle]');
  console.error('       warden-plugin dev-loader -o OUT.wasm');
  console.error('       warden-plugin dev-bundle ENTRY.js -o OUT.js');
  process.exit(2);
}

// The package folder node_modules/NAME in BASE or a folder above it.
async function packageDir(name, base) {
  for (let dir = base; ; dir = dirname(dir)) {
    const candidate = join(dir, 'node_modules', name);
    if (await stat(join(candidate, 'package.json')).catch(() => false)) return candidate;
    if (dirname(dir) === dir) return undefined;
  }
}

async function load(name, entryDir) {
  for (const base of [entryDir, process.cwd()]) {
    const dir = await packageDir(name, base);
    if (!dir) continue;
    const manifest = JSON.parse(await readFile(join(dir, 'package.json'), 'utf8'));
    let main = manifest.exports?.['.'] ?? manifest.exports ?? manifest.module ?? manifest.main ?? 'index.js';
    while (main && typeof main === 'object') main = main.import ?? main.default ?? main.node;
    return await import(pathToFileURL(join(dir, main)).href);
  }
  console.error(`warden-plugin: cannot find ${name}; install it: npm install --save-dev ${name}@${PINS[name]}`);
  process.exit(2);
}

const PINS = { esbuild: '0.28.2', '@bytecodealliance/componentize-js': '0.23.0' };

async function build(entry, out, keepBundle) {
  const entryPath = resolve(entry);
  await stat(entryPath).catch(() => usage(`no such file: ${entry}`));
  const entryDir = dirname(entryPath);
  const esbuild = await load('esbuild', entryDir);
  const { componentize } = await load('@bytecodealliance/componentize-js', entryDir);

  // The plugin module runs first (it registers everything), then the exports.
  const stub = [
    `import ${JSON.stringify(entryPath)};`,
    `export { tools, resources, prompts, completions } from ${JSON.stringify(join(sdk, 'src', 'component.js'))};`,
  ].join('\n');
  const bundled = await esbuild.build({
    stdin: { contents: stub, resolveDir: entryDir, sourcefile: 'warden-plugin-entry.js', loader: 'js' },
    bundle: true,
    format: 'esm',
    platform: 'neutral',
    target: 'es2022',
    write: false,
    // Whatever the author's folder resolves, the SDK is this copy (one Plugin registry).
    alias: { 'warden-plugin': join(sdk, 'src', 'index.js') },
    external: ['warden:plugin/*', 'wasi:*'],
    logLevel: 'warning',
  });
  const source = bundled.outputFiles[0].text;
  const outPath = resolve(out);
  await mkdir(dirname(outPath), { recursive: true });
  const bundlePath = outPath.replace(/\.wasm$/, '') + '.bundle.js';
  await writeFile(bundlePath, source);

  const { component } = await componentize({
    sourcePath: bundlePath,
    witPath: wit,
    worldName: 'plugin',
    disableFeatures: ['stdio', 'random', 'clocks', 'http', 'fetch-event'],
  });
  await writeFile(outPath, component);
  if (!keepBundle) await rm(bundlePath);
  console.log(`${outPath}: ${component.length} bytes (${(component.length / 2 ** 20).toFixed(1)} MiB)`);
}

// `warden dev`'s loader (dev/loader.js with this SDK inside), built against the plugin
// world plus read access to a mounted folder (dev/wit). It does not depend on the
// author's code, so `warden dev` builds it once per SDK and componentize-js version.
async function devLoader(out) {
  const here = process.cwd();
  const esbuild = await load('esbuild', here);
  const { componentize } = await load('@bytecodealliance/componentize-js', here);
  const witDir = await mkdtemp(join(tmpdir(), 'warden-dev-wit-'));
  try {
    await mkdir(join(witDir, 'deps'));
    await copyFile(join(wit, 'plugin.wit'), join(witDir, 'plugin.wit'));
    await copyFile(join(sdk, 'dev', 'wit', 'dev.wit'), join(witDir, 'dev.wit'));
    for (const file of await readdir(join(sdk, 'dev', 'wit', 'deps'))) {
      await copyFile(join(sdk, 'dev', 'wit', 'deps', file), join(witDir, 'deps', file));
    }
    const bundled = await esbuild.build({
      entryPoints: [join(sdk, 'dev', 'loader.js')],
      bundle: true,
      format: 'esm',
      platform: 'neutral',
      target: 'es2022',
      write: false,
      alias: { 'warden-plugin/component': join(sdk, 'src', 'component.js'), 'warden-plugin': join(sdk, 'src', 'index.js') },
      external: ['warden:plugin/*', 'wasi:*'],
      logLevel: 'warning',
    });
    const bundlePath = join(witDir, 'loader.bundle.js');
    await writeFile(bundlePath, bundled.outputFiles[0].text);
    const { component } = await componentize({
      sourcePath: bundlePath,
      witPath: witDir,
      worldName: 'dev-plugin',
      disableFeatures: ['stdio', 'random', 'clocks', 'http', 'fetch-event'],
    });
    const outPath = resolve(out);
    await mkdir(dirname(outPath), { recursive: true });
    await writeFile(outPath, component);
    console.log(`${outPath}: ${component.length} bytes`);
  } finally {
    await rm(witDir, { recursive: true, force: true });
  }
}

// The author's module for the loader: one CommonJS script with everything but the SDK,
// which the loader's `require` hands over (its own copy: one Plugin registry).
async function devBundle(entry, out) {
  const entryPath = resolve(entry);
  await stat(entryPath).catch(() => usage(`no such file: ${entry}`));
  const esbuild = await load('esbuild', dirname(entryPath));
  await esbuild.build({
    entryPoints: [entryPath],
    outfile: resolve(out),
    bundle: true,
    format: 'cjs',
    platform: 'neutral',
    target: 'es2022',
    external: ['warden-plugin', 'warden:plugin/*', 'wasi:*'],
    logLevel: 'warning',
  });
}

const [command, ...rest] = process.argv.slice(2);
if (!['build', 'dev-loader', 'dev-bundle'].includes(command)) usage(command ? `unknown command ${command}` : undefined);
let entry;
let out;
let keepBundle = false;
for (let i = 0; i < rest.length; i++) {
  if (rest[i] === '-o' || rest[i] === '--output') out = rest[++i];
  else if (rest[i] === '--keep-bundle') keepBundle = true;
  else if (!entry) entry = rest[i];
  else usage(`unexpected argument ${rest[i]}`);
}
let run;
if (command === 'dev-loader') {
  if (entry || !out) usage('dev-loader takes only -o OUT.wasm');
  run = devLoader(out);
} else if (command === 'dev-bundle') {
  if (!entry || !out) usage('dev-bundle takes ENTRY.js -o OUT.js');
  run = devBundle(entry, out);
} else {
  if (!entry) usage('no entry module');
  run = build(entry, out ?? 'plugin.wasm', keepBundle);
}
await run.catch((error) => {
  console.error(`warden-plugin: ${error?.stack ?? error}`);
  process.exit(1);
});
