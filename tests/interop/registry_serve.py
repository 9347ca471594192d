"""Serves plugins that `warden pull` fetched from a registry (registry.sh) and calls them
over stdio with the official Python MCP SDK (mcp 2.3.0), in both protocol eras, with
exact values: the tools listed are exactly TOOLS, and text_stats / date_diff (the
example plugins text and clock), whichever is listed, answer as they do when served
from the build folder.

usage: python registry_serve.py WARDEN_BINARY PLUGINS_DIR TOOLS [SERVE_ARG...]

TOOLS is a comma-separated list; SERVE_ARGs are added to `warden serve` (e.g. --trust
FILE --require-signature). Prints what it checked; exits 1 if any check failed.
"""

import asyncio
import sys

from mcp import Client, StdioServerParameters

from checks import Checks, texts


async def session(checks: Checks, server: StdioServerParameters, mode: str, tools: list[str]) -> None:
    async with Client(server, mode=mode) as client:
        listed = await client.list_tools()
        checks.equal(f"[{mode}] tools/list", sorted(t.name for t in listed.tools), sorted(tools))
        if "text_stats" in tools:
            result = await client.call_tool("text_stats", {"text": "Hello world. How are you?"})
            checks.equal(f"[{mode}] text_stats isError", result.is_error, False)
            checks.equal(
                f"[{mode}] text_stats structuredContent",
                result.structured_content,
                {"bytes": 25, "characters": 25, "lines": 1, "sentences": 2, "words": 5},
            )
            checks.equal(f"[{mode}] text_stats text", texts(result), ["25 characters (25 bytes), 5 words, 1 line, 2 sentences."])
            print(f"  [{mode}] text_stats: {texts(result)}")
        if "date_diff" in tools:
            result = await client.call_tool("date_diff", {"start": "2024-01-01", "end": "2024-12-25"})
            checks.equal(f"[{mode}] date_diff isError", result.is_error, False)
            checks.equal(f"[{mode}] date_diff days", (result.structured_content or {}).get("days"), 359)
            print(f"  [{mode}] date_diff: {texts(result)}")


async def main() -> int:
    warden, plugins, tools, extra = sys.argv[1], sys.argv[2], sys.argv[3].split(","), sys.argv[4:]
    server = StdioServerParameters(
        command=warden, args=["serve", "--plugins", plugins, "--no-watch", "--no-cache", *extra]
    )
    checks = Checks()
    for mode in ("legacy", "auto"):
        try:
            await session(checks, server, mode, tools)
        except Exception as error:  # noqa: BLE001 - reported as a failed check
            checks.true(f"[{mode}] session", False, repr(error))
    return checks.summary("registry_serve")


if __name__ == "__main__":
    sys.exit(asyncio.run(main()))
