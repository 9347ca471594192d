"""The official Python MCP SDK (mcp 2.3.0) against three Warden replicas behind nginx
(tests/interop/replicas.sh).

usage: python replicas.py clients URL ACCESS_LOG REPLICAS_JSON
       python replicas.py session-gone URL ACCESS_LOG REPLICAS_JSON

REPLICAS_JSON maps each replica's name to {"addr": "127.0.0.1:PORT", "pid": PID}.

`clients`: several clients on the 2026-07-28 wire (round robin) and on 2025-11-25
sessions (routed by the `rN.` prefix of the session id) each list the tools and call
`text_stats`; nginx's access log must then show the stateless requests spread over
the replicas, and every request of a session sent to the replica named by its prefix.

`session-gone`: a 2025-11-25 session works, its replica is killed (SIGKILL), and the
session's next call must fail at once with the SDK's "Session terminated" (nginx
falls back to another replica, which answers 404 for a session it does not hold), after
which a new session works.

Prints what it checked and exits 1 on the first failure.
"""

import asyncio
import json
import os
import re
import signal
import sys
import time

from mcp import Client, MCPError

ROUNDS = 6


def fail(message: str) -> None:
    print(f"FAILED: {message}")
    sys.exit(1)


def access_log(path: str) -> list[dict]:
    """nginx lines written with the `warden` log_format of replicas.sh."""
    entries = []
    with open(path) as log:
        for line in log:
            msec, status, method, session, upstream = line.rstrip("\n").split(" ", 4)
            entries.append(
                {
                    "status": int(status),
                    "upstream": upstream,
                    "method": method,
                    "session": session.strip('"') if session != '"-"' else None,
                }
            )
    return entries


async def use(url: str, mode: str) -> None:
    async with Client(url, mode=mode) as client:
        tools = [tool.name for tool in (await client.list_tools()).tools]
        if "text_stats" not in tools:
            fail(f"mode={mode}: text_stats is not among the tools: {tools}")
        result = await client.call_tool("text_stats", {"text": "one two three"})
        if result.is_error or result.structured_content["words"] != 3:
            fail(f"mode={mode}: text_stats answered {result}")


async def clients(url: str, log_path: str, replicas: dict) -> None:
    names = {info["addr"]: name for name, info in replicas.items()}
    for mode in ("auto", "legacy"):
        before = len(access_log(log_path))
        for _ in range(ROUNDS):
            await use(url, mode)
        time.sleep(0.2)  # nginx writes a line once the response is done
        entries = access_log(log_path)[before:]
        bad = [e for e in entries if e["status"] >= 400]
        if bad:
            fail(f"mode={mode}: nginx answered errors: {bad}")
        stateless = [e for e in entries if e["session"] is None]
        reached = sorted({names.get(e["upstream"], e["upstream"]) for e in stateless})
        wire = "2026-07-28 (stateless)" if mode == "auto" else "2025-11-25 initialize"
        print(f"ok: {mode}: {ROUNDS} clients listed tools and called text_stats; "
              f"{len(stateless)} requests without a session ({wire}) reached {reached}")
        if len(reached) < 2:
            fail(f"mode={mode}: round robin should reach several replicas, reached {reached}")
        if mode == "auto":
            if len(stateless) != len(entries):
                fail("mode=auto: the 2026-07-28 wire carried a session id")
            continue
        sessions: dict[str, set] = {}
        for e in entries:
            if e["session"]:
                sessions.setdefault(e["session"], set()).add(e["upstream"])
        if len(sessions) != ROUNDS:
            fail(f"expected {ROUNDS} sessions in the log, saw {len(sessions)}: {sessions}")
        holders = set()
        for session, upstreams in sessions.items():
            prefix = session.split(".", 1)[0]
            if prefix not in replicas:
                fail(f"session id {session} does not start with a replica name")
            if upstreams != {replicas[prefix]["addr"]}:
                fail(f"session {session} was sent to {upstreams}, not only to {prefix}")
            holders.add(prefix)
        print(f"ok: legacy: each of the {len(sessions)} sessions was served only by the replica its id "
              f"names; sessions were held by {sorted(holders)}")


async def session_gone(url: str, log_path: str, replicas: dict) -> None:
    async with Client(url, mode="legacy") as client:
        result = await client.call_tool("text_stats", {"text": "before the kill"})
        if result.is_error:
            fail(f"the first call failed: {result}")
        time.sleep(0.2)
        session = next(e["session"] for e in reversed(access_log(log_path)) if e["session"])
        victim = session.split(".", 1)[0]
        pid = replicas[victim]["pid"]
        os.kill(pid, signal.SIGKILL)
        print(f"killed {victim} (pid {pid}), which holds session {session}")
        time.sleep(0.5)
        started = time.monotonic()
        try:
            result = await asyncio.wait_for(client.call_tool("text_stats", {"text": "after the kill"}), 10)
        except MCPError as error:
            elapsed = time.monotonic() - started
            if "Session terminated" not in error.message:
                fail(f"expected the SDK's 'Session terminated' (a 404), got {error.code}: {error.message}")
            print(f"ok: the next call of that session failed in {elapsed:.2f} s with error "
                  f"{error.code}: {error.message}")
        except TimeoutError:
            fail("the call of a session whose replica is gone hung for 10 s")
        else:
            fail(f"a call of a session whose replica is gone succeeded: {result}")
    time.sleep(0.2)
    last = [e for e in access_log(log_path) if e["session"] == session][-2:]
    print(f"nginx: the session's last requests: {[(e['method'], e['status'], e['upstream']) for e in last]}")
    await use(url, "legacy")
    print("ok: a new session works")


def main() -> None:
    command, url, log_path, replicas = sys.argv[1], sys.argv[2], sys.argv[3], json.loads(sys.argv[4])
    for name in replicas:
        if not re.fullmatch(r"[a-z0-9-]+", name):
            fail(f"bad replica name {name}")
    if command == "clients":
        asyncio.run(clients(url, log_path, replicas))
    elif command == "session-gone":
        asyncio.run(session_gone(url, log_path, replicas))
    else:
        fail(f"unknown command {command}")


if __name__ == "__main__":
    main()
