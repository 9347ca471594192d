"""Interactive plugins (warden:plugin@0.2.0) with the official Python MCP SDK (mcp 2.3.0),
which answers elicitation and sampling through its callbacks: over stdio and Streamable
HTTP, in legacy mode (2025-11-25: Warden asks the client during the call) and auto mode
(2026-07-28: input-required results and the client's retries). Exact values:

- plugins/notes `delete_note`: a confirmation accepted (the note is gone), declined and
  cancelled (it stays);
- plugins/notes `summarize_note`: one sampling round (200 tokens, the note's text sent);
- conformance-interactive `test_input_required_result_multi_round`: two rounds in one call.

No SDK client may log a warning or an error meanwhile (e.g. "Session termination failed").

usage: python python_interaction.py WARDEN_BINARY PLUGINS_DIR
"""

import asyncio
import logging
import sys

from mcp import Client, StdioServerParameters
from mcp import types

from checks import Checks, texts


class Complaints(logging.Handler):
    """Every warning or error any logger of the client emits."""

    def __init__(self) -> None:
        super().__init__(logging.WARNING)
        self.records: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.records.append(f"{record.name}: {record.getMessage()}")


async def session(checks: Checks, target, label: str, mode: str) -> None:
    elicit_answers: list[tuple[str, dict | None]] = []
    asked: list[tuple[str, str]] = []

    async def on_elicit(context, params):
        asked.append(("elicit", params.message))
        if params.message.startswith("Step 1"):
            return types.ElicitResult(action="accept", content={"name": "Alice"})
        if params.message.startswith("Step 2"):
            return types.ElicitResult(action="accept", content={"color": "blue"})
        action, content = elicit_answers.pop(0)
        return types.ElicitResult(action=action, content=content)

    async def on_sample(context, params):
        prompt = params.messages[0].content.text
        asked.append(("sample", f"{params.max_tokens} {prompt.splitlines()[0]}"))
        return types.CreateMessageResult(
            role="assistant",
            content=types.TextContent(type="text", text="Two plans for the week."),
            model="test-model",
            stop_reason="endTurn",
        )

    what = f"[{label} {mode}]"
    async with Client(target, mode=mode, elicitation_callback=on_elicit, sampling_callback=on_sample) as client:
        async def call(tool: str, arguments: dict) -> list:
            result = await client.call_tool(tool, arguments)
            return [bool(result.is_error), texts(result)]

        name = f"plan-{label}-{mode}"
        await call("write_note", {"name": name, "content": "# Plan\n\nMonday: write. Tuesday: review.\n"})
        for action in ("decline", "cancel"):
            elicit_answers.append((action, None))
            checks.equal(f"{what} delete_note, {action}d", await call("delete_note", {"name": name}),
                         [False, [f'Did not delete note "{name}": the user did not confirm (declined, cancelled or left unchecked).']])
        checks.equal(f"{what} the note is still there", (await call("read_note", {"name": name}))[0], False)

        checks.equal(f"{what} summarize_note", await call("summarize_note", {"name": name}),
                     [False, ["Two plans for the week."]])

        elicit_answers.append(("accept", {"confirm": True}))
        checks.equal(f"{what} delete_note, accepted", await call("delete_note", {"name": name}),
                     [False, [f'Deleted note "{name}".']])
        listed = (await call("list_notes", {}))[1]
        checks.true(f"{what} the note is gone", not any(name in text for text in listed), f"{listed}")

        checks.equal(f"{what} two rounds in one call",
                     await call("test_input_required_result_multi_round", {}),
                     [False, ["Alice's favorite color is blue."]])
        checks.equal(f"{what} what the client was asked", asked, [
            ("elicit", f"Delete note {name}?"),
            ("elicit", f"Delete note {name}?"),
            ("sample", f'200 Summarize the note "{name}":'),
            ("elicit", f"Delete note {name}?"),
            ("elicit", "Step 1: What is your name?"),
            ("elicit", "Step 2: What is your favorite color?"),
        ])


async def main() -> int:
    warden, plugins = sys.argv[1:3]
    url = sys.argv[3] if len(sys.argv) > 3 else None
    complaints = Complaints()
    logging.getLogger().addHandler(complaints)
    checks = Checks()
    stdio = StdioServerParameters(command=warden, args=["serve", "--plugins", plugins, "--no-watch"])
    targets = [(stdio, "stdio")] + ([(url, "http")] if url else [])
    for target, label in targets:
        for mode in ("legacy", "auto"):
            try:
                await session(checks, target, label, mode)
            except Exception as error:  # a failed session fails its checks, and the run
                checks.failed.append(f"[{label} {mode}] raised {type(error).__name__}: {error}")
    checks.equal("warnings and errors the SDK client logged", complaints.records, [])
    return checks.report()


if __name__ == "__main__":
    sys.exit(asyncio.run(main()))
