"""Drives `warden serve` over stdio with the official Python MCP SDK, in both
protocol eras, with exact-value assertions on the example plugins.

usage: python python_stdio.py WARDEN_BINARY PLUGINS_DIR
       python python_stdio.py --http URL
"""

import asyncio
import sys

from mcp import Client, StdioServerParameters


async def check(server, mode: str) -> None:
    async with Client(server, mode=mode) as client:
        listed = await client.list_tools()
        names = sorted(tool.name for tool in listed.tools)
        assert names == [
            "change_case", "date_add", "date_diff", "delete_note", "fetch_url", "find_snippets", "list_notes",
            "now", "read_note", "search_notes", "slugify", "summarize_note", "text_stats", "weekday", "write_note",
        ], names
        stats = next(t for t in listed.tools if t.name == "text_stats")
        assert stats.input_schema["required"] == ["text"], stats.input_schema
        assert stats.output_schema is not None and stats.output_schema["type"] == "object"

        result = await client.call_tool("text_stats", {"text": "Hello world. How are you?"})
        assert not result.is_error, result
        assert result.structured_content == {
            "bytes": 25, "characters": 25, "lines": 1, "sentences": 2, "words": 5,
        }, result.structured_content
        assert result.content[0].text == "25 characters (25 bytes), 5 words, 1 line, 2 sentences."

        result = await client.call_tool("change_case", {"text": "parseHTTPRequest now", "case": "snake"})
        assert result.content[0].text == "parse_http_request_now", result

        result = await client.call_tool("date_diff", {"start": "2024-01-01", "end": "2024-12-25"})
        assert not result.is_error, result
        assert result.structured_content["days"] == 359, result.structured_content

        result = await client.call_tool("date_diff", {"start": "yesterday"})
        assert result.is_error, result
        assert "input schema of `date_diff`" in result.content[0].text, result

        print(f"python mcp client, {'http' if isinstance(server, str) else 'stdio'}, mode={mode}: ok ({client.session.protocol_version if hasattr(client.session, 'protocol_version') else 'connected'})")


async def main() -> None:
    if sys.argv[1] == "--http":
        server = sys.argv[2]
    else:
        server = StdioServerParameters(command=sys.argv[1], args=["serve", "--plugins", sys.argv[2]])
    for mode in ("legacy", "auto"):
        await check(server, mode)


if __name__ == "__main__":
    asyncio.run(main())
