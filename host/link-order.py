#!/usr/bin/env python3
"""Records which functions of the release `warden` binary run, into
host/link-order.txt: the order the linker lays `.text` out in (host/build.rs).

    cargo xtask bench --only memory   # builds the benchmark plugins, once
    python3 host/link-order.py        # needs valgrind; perf is used if present

It builds `warden` in release mode and runs it through what a server does —
start, load 20 plugins plus the benchmark plugin from a warm cache, list and
call tools over stdio, over HTTP with a 2025-11-25 session and on the
2026-07-28 wire (each transport alone, then both), shut down — under
callgrind, which names every function that runs. Then the same with a cold
cache (the compiler's functions, placed after the rest). Valgrind cannot run
the pooling allocator (it cannot reserve the pool's address space), so with
perf it also samples a real run at a high rate and, once linked by that
order, records the page faults of real runs: a function that still faults
in a code window of its own is added. Functions are listed in the order
first seen.

Run it again after a dependency update (the file's symbol names carry
hashes that change with versions): a stale entry is skipped by the linker,
and the memory benchmark shows what the layout still buys.
"""

import http.client
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
WARDEN = os.path.join(ROOT, "target", "release", "warden")
GUESTS = os.path.join(ROOT, "target", "guests", "wasm32-wasip2", "release")
OUT = os.path.join(ROOT, "host", "link-order.txt")
PORT = 18733
META = {
    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    "io.modelcontextprotocol/clientInfo": {"name": "link-order", "version": "1"},
    "io.modelcontextprotocol/clientCapabilities": {},
}


def plugins_folder(tmp):
    folder = os.path.join(tmp, "plugins")
    os.mkdir(folder)
    for name in ("bench", "prefixed"):
        if not os.path.exists(os.path.join(GUESTS, f"{name}.wasm")):
            sys.exit(f"{GUESTS}/{name}.wasm is missing: run `cargo xtask bench --only memory` first")
    shutil.copy(os.path.join(GUESTS, "bench.wasm"), folder)
    for i in range(20):
        shutil.copy(os.path.join(GUESTS, "prefixed.wasm"), os.path.join(folder, f"p{i}.wasm"))
        with open(os.path.join(folder, f"p{i}.toml"), "w") as manifest:
            manifest.write(f'[environment]\nset = {{ TOOL_PREFIX = "p{i}" }}\n')
    return folder


def post(body, headers):
    connection = http.client.HTTPConnection("127.0.0.1", PORT, timeout=300)
    connection.request("POST", "/mcp", json.dumps(body), {
        "content-type": "application/json",
        "accept": "application/json, text/event-stream",
        **headers,
    })
    response = connection.getresponse()
    data = response.read()
    if response.status >= 300:
        raise RuntimeError(f"HTTP {response.status}: {data[:200]!r}")
    return response.getheader("mcp-session-id"), data


def wait_for_http():
    for _ in range(600):
        try:
            http.client.HTTPConnection("127.0.0.1", PORT, timeout=5).request("GET", "/healthz")
            return
        except OSError:
            time.sleep(0.1)
    raise RuntimeError("the HTTP listener never opened")


MODES = ("stdio", "http", "both")
# Rounds of recording page faults and relinking, at most.
FAULT_ROUNDS = 4


def workload(prefix, plugins, cache, mode):
    """Runs `prefix + warden serve …` through a server's day: over stdio,
    over HTTP, or both (their start-up paths differ)."""
    command = prefix + [WARDEN, "serve", "--plugins", plugins, "--cache-dir", cache, "--no-watch"]
    if mode != "stdio":
        command += ["--http", f"127.0.0.1:{PORT}"]
    if mode == "both":
        command.append("--stdio")
    server = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    if mode != "http":
        serve_stdio(server)
    if mode != "stdio":
        serve_http()
    server.send_signal(signal.SIGTERM)
    server.wait(timeout=300)


def serve_stdio(server):

    def rpc(id, method, params):
        server.stdin.write((json.dumps({"jsonrpc": "2.0", "id": id, "method": method, "params": params}) + "\n").encode())
        server.stdin.flush()
        while True:
            message = json.loads(server.stdout.readline())
            if message.get("id") == id:
                if "error" in message:
                    raise RuntimeError(message)
                return message["result"]

    rpc(1, "initialize", {"protocolVersion": "2025-11-25", "capabilities": {},
                          "clientInfo": {"name": "link-order", "version": "1"}})
    server.stdin.write(b'{"jsonrpc":"2.0","method":"notifications/initialized"}\n')
    server.stdin.flush()
    tools = rpc(2, "tools/list", {})["tools"]
    assert len(tools) == 22, tools
    for i in range(20):
        rpc(10 + i, "tools/call", {"name": "echo", "arguments": {"text": "hi"}})
        rpc(100 + i, "tools/call", {"name": f"p{i}_echo", "arguments": {"text": "hi"}})
    rpc(200, "tools/call", {"name": "hash", "arguments": {"seed": 1}})


def serve_http():
    wait_for_http()
    for i in range(30):
        post({"jsonrpc": "2.0", "id": i, "method": "tools/call",
              "params": {"name": "echo", "arguments": {"text": "hi"}, "_meta": META}},
             {"mcp-protocol-version": "2026-07-28", "mcp-method": "tools/call", "mcp-name": "echo"})
        post({"jsonrpc": "2.0", "id": i, "method": "tools/list", "params": {"_meta": META}},
             {"mcp-protocol-version": "2026-07-28", "mcp-method": "tools/list"})
    session = {"mcp-protocol-version": "2025-11-25"}
    sid, _ = post({"jsonrpc": "2.0", "id": 1, "method": "initialize",
                   "params": {"protocolVersion": "2025-11-25", "capabilities": {},
                              "clientInfo": {"name": "link-order", "version": "1"}}}, session)
    session["mcp-session-id"] = sid
    post({"jsonrpc": "2.0", "method": "notifications/initialized"}, session)
    for i in range(5):
        post({"jsonrpc": "2.0", "id": 2 + i, "method": "tools/list", "params": {}}, session)
        post({"jsonrpc": "2.0", "id": 20 + i, "method": "tools/call",
              "params": {"name": "hash", "arguments": {"seed": i}}}, session)
    connection = http.client.HTTPConnection("127.0.0.1", PORT)
    connection.request("DELETE", "/mcp", headers=session)
    connection.getresponse().read()


def callgrind_functions(path):
    names = []
    with open(path, errors="replace") as profile:
        for line in profile:
            match = re.match(r"c?fn=\(\d+\) (.*)", line)
            if match:
                names.append(re.sub(r"'\d+$", "", match.group(1).strip()))
    return names


def perf_functions(data):
    report = subprocess.run(["perf", "report", "-i", data, "--no-inline", "--no-demangle", "--no-children",
                             "--sort", "dso,sym", "-q", "--stdio"], capture_output=True, text=True, check=True)
    return [line.split("[.] ", 1)[1].strip() for line in report.stdout.splitlines()
            if "warden " in line and "[.] " in line]


def fault_functions(data):
    """The functions whose first instruction fetch in a 64 KiB window
    faulted, from `perf record -e page-faults -d`."""
    script = subprocess.run(["perf", "script", "-i", data, "-F", "addr,ip,sym,dso", "--no-demangle"],
                            capture_output=True, text=True, check=True)
    names = []
    for line in script.stdout.splitlines():
        match = re.match(r"(\S+) \S+ \(\S+\)\s+(\S+) (\S+) \((\S+)\)", line.strip())
        if match and match[1] == match[2] and match[4] == WARDEN:
            names.append(match[3])
    return names


def text_symbols():
    symbols = subprocess.run(["nm", "--defined-only", WARDEN], capture_output=True, text=True, check=True)
    return {parts[2] for parts in map(str.split, symbols.stdout.splitlines())
            if len(parts) == 3 and parts[1] in "tTwW"}


def write_order(*lists):
    code = text_symbols()
    order, seen = [], set()
    for name in (name for names in lists for name in names):
        if name in code and name not in seen:
            seen.add(name)
            order.append(name)
    with open(OUT, "w") as out:
        out.write("\n".join(order) + "\n")
    return len(order)


def build():
    subprocess.run(["cargo", "build", "--release", "--package", "warden"], cwd=ROOT, check=True)


def main():
    if shutil.which("valgrind") is None:
        sys.exit("valgrind is needed (apt-get install valgrind)")
    perf = shutil.which("perf") is not None
    if not perf:
        print("perf is not installed: the pooling allocator's path is not recorded", file=sys.stderr)
    build()
    with tempfile.TemporaryDirectory() as tmp:
        plugins = plugins_folder(tmp)
        warm = os.path.join(tmp, "warm-cache")
        workload([], plugins, warm, "both")  # fills the cache
        grind = lambda out: ["valgrind", "--tool=callgrind", "--demangle=no", f"--callgrind-out-file={out}"]
        ran = []
        for mode in MODES:
            out = os.path.join(tmp, f"warm-{mode}.cg")
            workload(grind(out), plugins, warm, mode)
            ran += callgrind_functions(out)
        out = os.path.join(tmp, "cold.cg")
        workload(grind(out), plugins, os.path.join(tmp, "cold-cache"), "both")
        compiled = callgrind_functions(out)
        sampled = []
        if perf:
            data = os.path.join(tmp, "perf.data")
            workload(["perf", "record", "-q", "-F", "25000", "-o", data], plugins, warm, "both")
            sampled = perf_functions(data)
        count = write_order(ran, sampled, compiled)
        faulted = []
        for _ in range(FAULT_ROUNDS if perf else 0):
            # What still faults in a window of its own once laid out by the
            # order so far: code callgrind did not see run (the pooling
            # path). A window's first fault names one function, so again.
            build()
            before = count
            for mode in MODES:
                data = os.path.join(tmp, f"faults-{mode}.data")
                workload(["perf", "record", "-q", "-e", "page-faults", "-c", "1", "-d", "-o", data],
                         plugins, warm, mode)
                faulted += fault_functions(data)
            count = write_order(ran, sampled, faulted, compiled)
            if count == before:
                break
    build()
    print(f"{count} functions written to {OUT}, and `warden` linked by them")

if __name__ == "__main__":
    main()
