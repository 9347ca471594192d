"""What the drivers that check one component served over stdio share
(python_component.py, python_sdk_plugin.py, js_sdk_plugin.py): Warden's command
line, timed tools/call round trips, the checks of tool errors and of arguments
the schema refuses, and the two connections (cold, then warm) with their figures;
and a tool call run as an MCP task over Streamable HTTP (`run_as_task`: raw
2026-07-28 JSON-RPC, since the Python SDK has no client for the tasks extension)."""

import asyncio
import hashlib
import json
import os
import statistics
import subprocess
import time
import urllib.request
from typing import Any, Awaitable, Callable, Optional

from mcp import StdioServerParameters

from checks import Checks, texts

Latencies = dict[str, list[float]]
# One connection's checks: (checks, server, mode, latencies) → seconds from spawning Warden to its tools/list answer.
Session = Callable[[Checks, StdioServerParameters, str, Latencies], Awaitable[float]]
# A timed tools/call: (tool, arguments, kind) → its result.
Call = Callable[..., Awaitable[Any]]


def serve_component(warden: str, plugins: str, cache: str, *extra: str) -> StdioServerParameters:
    """Prints the size of the component(s) in PLUGINS; `warden serve` of them with the
    compiled-code cache CACHE and no watcher (the folder does not change)."""
    wasm = [f for f in os.listdir(plugins) if f.endswith(".wasm")]
    size = sum(os.path.getsize(os.path.join(plugins, f)) for f in wasm)
    print(f"component: {', '.join(wasm)}, {size} bytes ({size / 2**20:.1f} MiB)")
    return StdioServerParameters(
        command=warden, args=["serve", "--plugins", plugins, "--cache-dir", cache, "--no-watch", *extra]
    )


def timed_calls(client, latencies: Latencies) -> Call:
    """`call(tool, arguments, kind="called")`: a tools/call whose round trip is added to latencies[kind]."""

    async def call(name: str, arguments: dict, kind: str = "called"):
        began = time.perf_counter()
        result = await client.call_tool(name, arguments)
        latencies.setdefault(kind, []).append(time.perf_counter() - began)
        return result

    return call


def shown(arguments: dict, width: Optional[int]) -> str:
    """The arguments as JSON for a check's name, cut to `width` characters (None: whole)."""
    return json.dumps(arguments, ensure_ascii=False)[:width]


async def check_tool_errors(
    checks: Checks, mode: str, call: Call, tool_errors, width: Optional[int] = None, no_structured: bool = False
) -> None:
    """Each (tool, arguments, text) answers isError with exactly that text (and, with
    `no_structured`, no structuredContent)."""
    for name, arguments, text in tool_errors:
        what = f"[{mode}] {name} {shown(arguments, width)}"
        result = await call(name, arguments)
        checks.equal(f"{what} isError", result.is_error, True)
        checks.equal(f"{what} text", texts(result), [text])
        if no_structured:
            checks.equal(f"{what} structuredContent", result.structured_content, None)


async def check_refused(
    checks: Checks, mode: str, call: Call, refused, width: Optional[int] = None, printed: Optional[int] = None
) -> None:
    """Each (tool, arguments, named) is refused by the schema with an error naming `named`;
    the legacy connection prints each refusal (its arguments cut to `printed` characters)."""
    for name, arguments, named in refused:
        what = f"[{mode}] {name} {shown(arguments, width)}"
        result = await call(name, arguments, "refused")
        got = texts(result)
        checks.equal(f"{what} isError", result.is_error, True)
        checks.true(f"{what} names `{named}`", any(named in t for t in got), f"text {got}")
        if mode == "legacy":
            print(f"  refused {name} {json.dumps(arguments)[:printed]}: {' '.join(got)}")


async def cold_then_warm(checks: Checks, server: StdioServerParameters, session: Session) -> None:
    """Runs `session` on a legacy connection (cold: the cache is empty) and an auto one
    (warm: from the cache); prints each one's load time and tools/call round trips."""
    for mode, cold in (("legacy", "cold: compiled, cache empty"), ("auto", "warm: from the compiled-code cache")):
        latencies: Latencies = {}
        try:
            load = await session(checks, server, mode, latencies)
        except Exception as error:
            checks.failed.append(f"[{mode}] session failed: {type(error).__name__}: {error}")
            continue
        print(f"mode={mode}: tools/list answered {load:.2f} s after starting warden ({cold})")
        if mode == "legacy":
            await optimised_code_cached(checks, server)
        for kind, what in (("called", "reaching the component"), ("refused", "refused by the schema")):
            if kind in latencies:
                ms = sorted(1000 * t for t in latencies[kind])
                print(
                    f"mode={mode}: {len(ms)} tools/call round trips {what}: min {ms[0]:.1f} ms, "
                    f"median {statistics.median(ms):.1f} ms, max {ms[-1]:.1f} ms"
                )


async def optimised_code_cached(checks: Checks, server: StdioServerParameters, limit: float = 900) -> None:
    """Makes sure the compiled-code cache named in `server`'s arguments holds every
    component's optimised code before the warm session. A large component is served on
    baseline code first and its optimised code compiled in the background (README:
    Performance), which the cold session, ending first, may have cut short: a `warden serve`
    of the same folder is then kept running until the cache holds the code."""
    cache = server.args[server.args.index("--cache-dir") + 1]
    plugins = server.args[server.args.index("--plugins") + 1]
    components = {
        hashlib.sha256(open(os.path.join(plugins, f), "rb").read()).hexdigest()
        for f in os.listdir(plugins)
        if f.endswith(".wasm")
    }

    def cached() -> bool:
        return sum(name.endswith(".cwasm") for name in os.listdir(cache)) >= len(components)

    if cached():
        return
    began = time.perf_counter()
    warden = subprocess.Popen([server.command, *server.args], stdin=subprocess.PIPE, stdout=subprocess.DEVNULL)
    try:
        while not cached():
            if time.perf_counter() - began > limit or warden.poll() is not None:
                checks.failed.append(f"no optimised code in {cache} {time.perf_counter() - began:.0f} s on")
                return
            await asyncio.sleep(0.1)
    finally:
        warden.stdin.close()
        warden.wait(timeout=60)
    print(f"optimised code in the cache {time.perf_counter() - began:.1f} s after a warden serve started for it")


TASKS_EXTENSION = "io.modelcontextprotocol/tasks"


def post_2026(url: str, method: str, params: dict) -> dict:
    """One 2026-07-28 JSON-RPC request to `warden serve --http` at URL, as a client that
    declared the tasks extension sends it (in the request's `_meta`, with the `Mcp-Method`
    and `Mcp-Name` headers); the JSON-RPC answer (plain JSON or one SSE event)."""
    params = dict(params)
    params["_meta"] = {
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientInfo": {"name": "warden-interop-tasks", "version": "1"},
        "io.modelcontextprotocol/clientCapabilities": {"extensions": {TASKS_EXTENSION: {}}},
    }
    headers = {
        "Content-Type": "application/json",
        "Accept": "application/json, text/event-stream",
        "MCP-Protocol-Version": "2026-07-28",
        "Mcp-Method": method,
    }
    name = params.get("name") or params.get("taskId")
    if name:
        headers["Mcp-Name"] = name
    body = json.dumps({"jsonrpc": "2.0", "id": 1, "method": method, "params": params}, separators=(",", ":")).encode()
    with urllib.request.urlopen(urllib.request.Request(url, body, headers), timeout=60) as response:
        text = response.read().decode()
    if text.lstrip().startswith("{"):
        return json.loads(text)
    for line in text.splitlines():
        if line.startswith("data:") and line[5:].strip():
            message = json.loads(line[5:])
            if message.get("id") == 1:
                return message
    raise RuntimeError(f"{method}: no answer in {text[:300]!r}")


def run_as_task(
    checks: Checks,
    url: str,
    tool: str,
    arguments: dict,
    structured: Any,
    text: str,
    messages: Optional[set] = None,
    limit: float = 300.0,
) -> None:
    """Calls TOOL over HTTP as a client that supports tasks and checks that the call became
    a task (`resultType: "task"`, `working`), then polls `tasks/get` every `pollIntervalMs`
    (the server's own interval; at most `limit` seconds in all) until it ends, and checks it
    `completed` with exactly `structured` as structuredContent and `text` as its one text
    (and every `statusMessage` seen while it ran among `messages`). Prints the figures."""
    what = f"[task {tool}]"
    began = time.perf_counter()
    created = post_2026(url, "tools/call", {"name": tool, "arguments": arguments})
    answered = time.perf_counter() - began
    result = created.get("result", {})
    if not checks.equal(f"{what} tools/call answered resultType", result.get("resultType"), "task"):
        checks.failed.append(f"{what} not a task (after {answered * 1000:.0f} ms): {json.dumps(created)[:400]}")
        return
    checks.equal(f"{what} created `working`", result.get("status"), "working")
    task_id, interval = result.get("taskId"), result.get("pollIntervalMs")
    checks.true(f"{what} a taskId", isinstance(task_id, str) and len(task_id) >= 20, f"taskId {task_id!r}")
    checks.true(f"{what} pollIntervalMs and ttlMs", isinstance(interval, int) and interval > 0
                and isinstance(result.get("ttlMs"), int), f"created {json.dumps(result)}")
    if not isinstance(task_id, str) or not isinstance(interval, int) or interval <= 0:
        return
    polls, seen = 0, []
    while True:
        time.sleep(interval / 1000)  # the poll interval the server asked for
        got = post_2026(url, "tasks/get", {"taskId": task_id})
        task = got.get("result")
        polls += 1
        if task is None:
            checks.failed.append(f"{what} tasks/get answered {json.dumps(got)[:400]}")
            return
        if "statusMessage" in task and task["status"] == "working":
            seen.append(task["statusMessage"])
        if task.get("status") != "working" or time.perf_counter() - began > limit:
            break
    took = time.perf_counter() - began
    checks.equal(f"{what} tasks/get id", task.get("taskId"), task_id)
    checks.equal(f"{what} polled to `completed`", task.get("status"), "completed")
    done = task.get("result") or {}
    checks.equal(f"{what} result isError", done.get("isError"), False)
    checks.equal(f"{what} result structuredContent", done.get("structuredContent"), structured)
    checks.equal(f"{what} result text", [c.get("text") for c in done.get("content", [])], [text])
    if messages is not None:
        checks.true(f"{what} each statusMessage is the plugin's progress", all(m in messages for m in seen), f"seen {seen}")
    shown = f"; statusMessage seen: {', '.join(dict.fromkeys(seen))}" if seen else ""
    print(
        f"task {tool}: created in {answered * 1000:.0f} ms (resultType task, pollIntervalMs {interval}), "
        f"{task.get('status')} after {took:.2f} s and {polls} tasks/get{shown}"
    )
