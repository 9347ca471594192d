"""Calls third-party plain components (built by tests/interop/third_party.sh from the
sources published in registry packages) through `warden serve` over stdio, with the
official Python MCP SDK in both protocol eras, and checks exact values: the tools
listed, their descriptions (signatures: none of the WIT is documented) and schemas,
results, the components' own errors, arguments refused, and Warden's log lines for
the function it skips and the component it refuses.

usage: python third_party.py WARDEN_BINARY PLUGINS_DIR PLUGINS_JS_DIR CACHE_DIR LOG PORT

PLUGINS_DIR holds sandbox (componentize-py, stub mode, described by its manifest), greet
(componentize-qjs), hello (cargo-component's template), say-hello (componentize-js's README example, refused: it imports its
host's logger) and fetch-hello (componentize-js's README fetch example, not granted);
PLUGINS_JS_DIR holds greet-js (componentize-js) and fetch-hello (jco componentize) granted its fetch to
127.0.0.1:PORT, where this script serves HTTP. Warden's stderr goes to LOG.FOLDER.MODE.
CACHE_DIR should be empty: each folder's first connection is a cold load.
Prints what it checked and the figures; exits 1 if any check failed.
"""

import asyncio
import http.server
import json
import os
import sys
import threading
import time

from mcp import Client, StdioServerParameters

from checks import Checks, texts
from component_driver import Latencies, check_refused, check_tool_errors, timed_calls

STRING_RESULT = {
    "type": "object",
    "properties": {"result": {"type": "string"}},
    "required": ["result"],
    "additionalProperties": False,
}


def one_string(name: str) -> dict:
    return {
        "type": "object",
        "properties": {name: {"type": "string"}},
        "required": [name],
        "additionalProperties": False,
    }


# Each folder: the tools it lists (name → description, inputSchema, outputSchema),
# calls with their exact results, the components' own errors, refusals, and the log
# lines Warden must write while loading it.
FOLDERS = {
    "plugins": {
        "tools": {
            # componentize-py examples/sandbox/sandbox.wit has no doc comments: the
            # operator's descriptions, from sandbox.toml.
            "eval": (
                "Evaluates one Python expression in a fresh interpreter and returns its value as JSON. "
                "Nothing persists between calls; the interpreter has no files, clock or network.",
                one_string("expression"),
                STRING_RESULT,
            ),
            "exec": (
                "Runs Python statements in a fresh interpreter; succeeds with no value, or fails with "
                "the exception. Nothing persists between calls.",
                one_string("statements"),
                None,
            ),
            # componentize-qjs README Quick Start.
            "greet": ("greet(name: string) -> string", one_string("name"), STRING_RESULT),
            # componentize-js README Async Support.
            "say-hello": ("say-hello(name: string)", one_string("name"), None),
            # cargo-component's library template: its WIT has no doc comment on the function.
            "hello-world": (
                "hello-world() -> string",
                {"type": "object", "properties": {}, "required": [], "additionalProperties": False},
                STRING_RESULT,
            ),
        },
        "titles": {"eval": "Evaluate a Python expression", "exec": "Run Python statements"},
        # (tool, arguments, structuredContent["result"], text)
        "results": [
            ("eval", {"expression": "2 + 2"}, "4", "4"),
            ("eval", {"expression": "[x * x for x in range(5)]"}, "[0, 1, 4, 9, 16]", "[0, 1, 4, 9, 16]"),
            ("eval", {"expression": "{'a': 1, 'b': [True, None]}"}, '{"a": 1, "b": [true, null]}', '{"a": 1, "b": [true, null]}'),
            ("eval", {"expression": "'é' * 3"}, '"\\u00e9\\u00e9\\u00e9"', '"\\u00e9\\u00e9\\u00e9"'),
            ("greet", {"name": "World"}, "Hello, World!", "Hello, World!"),
            ("greet", {"name": "Ünïcødé 🦀"}, "Hello, Ünïcødé 🦀!", "Hello, Ünïcødé 🦀!"),
            ("greet", {"name": ""}, "Hello, !", "Hello, !"),
            ("hello-world", {}, "Hello, World!", "Hello, World!"),
        ],
        # exec returns result<_, string>: ok is an empty result.
        "empty": [
            ("exec", {"statements": "x = 1\nassert x == 1"}),
            ("exec", {"statements": "global foo\ndef foo(): return 42"}),
        ],
        # (tool, arguments, exact error text)
        "errors": [
            ("eval", {"expression": "1/0"}, "ZeroDivisionError: division by zero"),
            ("eval", {"expression": "undefined_name"}, "NameError: name 'undefined_name' is not defined"),
            # Every call runs in a fresh instance: what an earlier exec defined is gone
            # (the example's host keeps one instance for its exec and eval strings).
            ("eval", {"expression": "foo()"}, "NameError: name 'foo' is not defined"),
            ("eval", {"expression": "2 +"}, "SyntaxError: invalid syntax (<string>, line 1)"),
            ("exec", {"statements": "raise ValueError('nope')"}, "ValueError: nope"),
            # README "Memory limit": 100 MiB past the 40 MB limit (the manifest's).
            ("exec", {"statements": "global foo\nfoo = bytes(100 * 1024 * 1024)"}, "MemoryError"),
            # Stub mode: every WASI function is the component's own trap, so reading a file or
            # the clock crashes the call before Warden is asked; the crash names the stub
            # (third_party.sh checks that the same source built without stubs gets an OSError).
            ("eval", {"expression": "open('/etc/passwd').read()"},
             "plugin `sandbox` crashed while running `eval`: the plugin panicked (wasm `unreachable` executed)"
             " in its own stub for `wasi:filesystem/preopens@0.2.0#get-directories`: it was built with WASI"
             " replaced by functions that only trap (e.g. `componentize-py --stub-wasi`), so the call never"
             " reached Warden and no grant changes that; built without stubbing WASI, the call reaches Warden"
             " and is answered (a path that is not granted gets an error: no such file or directory)"),
            ("eval", {"expression": "__import__('time').time()"},
             "plugin `sandbox` crashed while running `eval`: the plugin panicked (wasm `unreachable` executed)"
             " in its own stub for `wasi:clocks/wall-clock@0.2.0#now`: it was built with WASI replaced by"
             " functions that only trap (e.g. `componentize-py --stub-wasi`), so the call never reached Warden"
             " and no grant changes that; built without stubbing WASI, the call reaches Warden and is answered"),
        ],
        # (tool, arguments, the name the refusal must contain)
        "refused": [
            ("eval", {"expression": 2}, "expression"),
            ("eval", {}, "expression"),
            ("exec", {"statements": ["x = 1"]}, "statements"),
            ("eval", {"expression": "1", "globals": {}}, "globals"),
            ("greet", {"name": None}, "name"),
            ("greet", {"name": 42}, "name"),
        ],
        # Exact refusal texts for one wrong type each (what a model reads back).
        "refusal_texts": [
            ("eval", {"expression": 2},
             'the arguments do not match the input schema of `eval`:\n- /expression: 2 is not of type "string"'),
        ],
        "log": [
            "function `exports#init` is not served as a tool: componentize-py's initialisation hook"
            " (it runs once, when the component is built) plugin=\"sandbox\"",
            "function `init` is not served as a tool: componentize-qjs's initialisation hook"
            " (it runs once, when the component is built) plugin=\"greet\"",
            "it imports `local:hello/logger`, which Warden does not provide",
        ],
        "log_plugin_refused": "say-hello",
    },
    "plugins-js": {
        "tools": {
            "greet": ("greet(name: string) -> string", one_string("name"), STRING_RESULT),
            "say-hello": ("say-hello(name: string)", one_string("name"), None),
        },
        "titles": {},
        "results": [
            ("greet", {"name": "World"}, "Hello, World!", "Hello, World!"),
            ("greet", {"name": "Ünïcødé 🦀"}, "Hello, Ünïcødé 🦀!", "Hello, Ünïcødé 🦀!"),
        ],
        # say-hello returns nothing; the test server records the request.
        "empty": [("say-hello", {"name": "World"})],
        "errors": [],
        "refused": [
            ("greet", {"name": 42}, "name"),
            ("greet", {}, "name"),
        ],
        "refusal_texts": [
            ("greet", {}, 'the arguments do not match the input schema of `greet`:\n- (root): "name" is a required property'),
        ],
        "log": [],
        "log_plugin_refused": None,
    },
}


def add_fetch_checks(port: int) -> None:
    """What depends on the test server's port: the refusal of the ungranted fetch."""
    FOLDERS["plugins"]["errors"].append(
        (
            "say-hello",
            {"name": "World"},
            "plugin `fetch-hello` crashed while running `say-hello`: the plugin panicked (wasm `unreachable`"
            f" executed), after the sandbox refused it: network access to localhost:{port} is not granted; add"
            f' "localhost:{port}" and, as it is a loopback, the exact address it resolves to ("127.0.0.1:{port}")'
            " to [network] allow in fetch-hello.toml — it printed: Redirecting call to abort() to mozalloc_abort",
        )
    )


class Recorder(http.server.BaseHTTPRequestHandler):
    """The test's HTTP server: answers every GET and records its path."""

    paths: list = []

    def do_GET(self) -> None:
        Recorder.paths.append(self.path)
        body = f"Hello from the test server, {self.path[1:]}".encode()
        self.send_response(200)
        self.send_header("Content-Type", "text/plain")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args) -> None:
        pass


def server(warden: str, plugins: str, cache: str, log: str) -> StdioServerParameters:
    """`warden serve` of PLUGINS (no watcher), its stderr to LOG."""
    return StdioServerParameters(
        command="sh",
        args=[
            "-c",
            'exec "$0" serve --plugins "$1" --cache-dir "$2" --no-watch 2>"$3"',
            warden,
            plugins,
            cache,
            log,
        ],
    )


async def session(checks: Checks, params: StdioServerParameters, mode: str, want: dict, latencies: Latencies) -> float:
    started = time.perf_counter()
    async with Client(params, mode=mode) as client:
        listed = await client.list_tools()
        load = time.perf_counter() - started
        tools = {tool.name: tool for tool in listed.tools}
        checks.equal(f"[{mode}] tools/list names", sorted(tools), sorted(want["tools"]))
        for name, (description, input_schema, output_schema) in want["tools"].items():
            if name not in tools:
                continue
            checks.equal(f"[{mode}] description of {name}", tools[name].description, description)
            checks.equal(f"[{mode}] inputSchema of {name}", tools[name].input_schema, input_schema)
            checks.equal(f"[{mode}] outputSchema of {name}", tools[name].output_schema, output_schema)
            checks.equal(f"[{mode}] title of {name}", tools[name].title, want["titles"].get(name))

        call = timed_calls(client, latencies)
        for name, arguments, value, text in want["results"]:
            what = f"[{mode}] {name} {json.dumps(arguments, ensure_ascii=False)}"
            try:
                result = await call(name, arguments)
            except Exception as error:
                checks.failed.append(f"{what}: raised {type(error).__name__}: {error}")
                continue
            checks.equal(f"{what} isError", result.is_error, False)
            checks.equal(f"{what} structuredContent", result.structured_content, {"result": value})
            checks.equal(f"{what} text", texts(result), [text])
        for name, arguments in want["empty"]:
            what = f"[{mode}] {name} {json.dumps(arguments, ensure_ascii=False)}"
            result = await call(name, arguments)
            checks.equal(f"{what} isError", result.is_error, False)
            checks.equal(f"{what} content", [c.model_dump() for c in result.content], [])
            checks.equal(f"{what} structuredContent", result.structured_content, None)
        await check_tool_errors(checks, mode, call, want["errors"])
        await check_refused(checks, mode, call, want["refused"])
        for name, arguments, text in want["refusal_texts"]:
            what = f"[{mode}] {name} {json.dumps(arguments)} refusal"
            result = await call(name, arguments, "refused")
            checks.equal(f"{what} isError", result.is_error, True)
            checks.equal(f"{what} text", texts(result), [text])
    return load


def check_log(checks: Checks, label: str, mode: str, log: str, want: dict) -> None:
    with open(log, encoding="utf-8") as f:
        text = f.read()
    for line in want["log"]:
        checks.true(f"{label} log names it", line in text, f"no line with {line!r} in {log}")
    refused = want["log_plugin_refused"]
    if refused:
        lines = [l for l in text.splitlines() if f"{refused}.wasm" in l or f'plugin="{refused}"' in l]
        checks.true(f"{label} log line refusing {refused}", any("local:hello/logger" in l for l in lines), f"lines {lines}")
        if lines and mode == "legacy":
            print(f"  refused plugin: {lines[0][lines[0].index('skipped plugin'):]}")
    # No function is skipped but those named above.
    skipped = [l for l in text.splitlines() if "is not served as a tool" in l]
    checks.equal(f"{label} functions skipped", len(skipped), sum("is not served as a tool" in l for l in want["log"]))
    if mode == "legacy":
        for l in skipped:
            print(f"  skipped: {l[l.index('function'):]}")


async def main() -> None:
    warden, plugins, plugins_js, cache, log, port = sys.argv[1:7]
    add_fetch_checks(int(port))
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", int(port)), Recorder)
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    checks = Checks()
    for folder, path in (("plugins", plugins), ("plugins-js", plugins_js)):
        want = FOLDERS[folder]
        wasm = sorted(f for f in os.listdir(path) if f.endswith(".wasm"))
        print(f"== {folder}: {', '.join(wasm)}")
        for mode, cold in (("legacy", "cold: compiled, cache empty"), ("auto", "warm: from the compiled-code cache")):
            latencies: Latencies = {}
            mode_log = f"{log}.{folder}.{mode}"
            try:
                load = await session(checks, server(warden, path, cache, mode_log), mode, want, latencies)
            except Exception as error:
                checks.failed.append(f"[{folder} {mode}] session failed: {type(error).__name__}: {error}")
                continue
            check_log(checks, f"[{folder} {mode}]", mode, mode_log, want)
            # Only the granted fetch reached the server, once per session.
            checks.equal(f"[{folder} {mode}] requests the test server saw", Recorder.paths, ["/World"] if folder == "plugins-js" else [])
            Recorder.paths.clear()
            print(f"{folder} mode={mode}: tools/list answered {load:.2f} s after starting warden ({cold})")
            for kind, what in (("called", "reaching a component"), ("refused", "refused by the schema")):
                if kind in latencies:
                    ms = sorted(1000 * t for t in latencies[kind])
                    print(
                        f"{folder} mode={mode}: {len(ms)} tools/call round trips {what}: min {ms[0]:.1f} ms, "
                        f"median {ms[len(ms) // 2]:.1f} ms, max {ms[-1]:.1f} ms"
                    )
    sys.exit(checks.summary("third-party components"))


if __name__ == "__main__":
    asyncio.run(main())
