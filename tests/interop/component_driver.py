"""What the drivers that check one component served over stdio share
(python_component.py, python_sdk_plugin.py, js_sdk_plugin.py): Warden's command
line, timed tools/call round trips, the checks of tool errors and of arguments
the schema refuses, and the two connections (cold, then warm) with their figures."""

import json
import os
import statistics
import time
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
        for kind, what in (("called", "reaching the component"), ("refused", "refused by the schema")):
            if kind in latencies:
                ms = sorted(1000 * t for t in latencies[kind])
                print(
                    f"mode={mode}: {len(ms)} tools/call round trips {what}: min {ms[0]:.1f} ms, "
                    f"median {statistics.median(ms):.1f} ms, max {ms[-1]:.1f} ms"
                )
