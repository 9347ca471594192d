"""Drives `warden serve` on the example plugins with the official Python MCP SDK
(mcp 2.3.0) in both protocol eras: tools, resources, resource templates, prompts and
completions, with exact values read from sdk_expected.json.

usage: python python_sdk.py FIXTURE --stdio WARDEN_BINARY PLUGINS_DIR
       python python_sdk.py FIXTURE --http URL

Prints one line per check (`ok` or `FAILED: ...`) and exits 1 if any check failed.
"""

import asyncio
import json
import logging
import sys
import traceback

from mcp import Client, MCPError, StdioServerParameters
from mcp.types import PromptReference, ResourceTemplateReference

failures: list[str] = []
CODE_NAMES = {-32601: "method not found", -32602: "invalid params", -32002: "resource not found"}


def describe(error: MCPError) -> str:
    name = CODE_NAMES.get(error.code)
    return f"error {error.code}{f' ({name})' if name else ''}: {error.message}"


def dump(model):
    return model.model_dump(by_alias=True, exclude_none=True, mode="json")


def message_view(message: dict) -> dict:
    """The parts of a prompt message the fixture pins down."""
    content = message["content"]
    view = {"type": content["type"]}
    if content["type"] == "text":
        view["text"] = content["text"]
    elif content["type"] == "resource":
        resource = content["resource"]
        view["resource"] = {key: resource.get(key) for key in ("uri", "mimeType", "text")}
    return {"role": message["role"], "content": view}


async def expect_error(call, codes: list[int]) -> str:
    try:
        result = await call
    except MCPError as error:
        assert error.code in codes, f"expected an error with code {codes}, got {describe(error)}"
        return f"error {error.code}"
    raise AssertionError(f"expected an error with code {codes}, got a result: {dump(result)}")


async def check_all(server, mode: str, fx: dict, transport: str) -> None:
    label = f"python mcp 2.3.0, {transport}, mode={mode}"
    try:
        client_cm = Client(server, mode=mode)
        client = await client_cm.__aenter__()
    except Exception as error:  # noqa: BLE001
        failures.append(f"{label}: connect: {error!r}")
        print(f"{label}: connect: FAILED: {error!r}")
        return
    try:
        version = client.protocol_version
        modern = not version.startswith("2025")
        caps = sorted(k for k, v in dump(client.server_capabilities).items() if v is not None)
        label = f"{label} (protocol {version})"
        print(f"{label}: server capabilities {caps}")

        async def check(name: str, body) -> None:
            try:
                detail = await body()
                print(f"{label}: {name}: ok{f' ({detail})' if detail else ''}")
            except Exception as error:  # noqa: BLE001
                text = str(error) if isinstance(error, AssertionError) else f"{type(error).__name__}: {error}"
                if isinstance(error, MCPError):
                    text = describe(error)
                failures.append(f"{label}: {name}: {text}")
                print(f"{label}: {name}: FAILED: {text}")
                if not isinstance(error, (AssertionError, MCPError)):
                    traceback.print_exc()

        async def tools_list():
            names = sorted(tool.name for tool in (await client.list_tools()).tools)
            assert names == fx["tools"], f"tools {names} != {fx['tools']}"

        async def date_add():
            result = await client.call_tool("date_add", fx["date_add"]["arguments"])
            assert not result.is_error, dump(result)
            assert result.structured_content["date"] == fx["date_add"]["date"], result.structured_content

        async def find_snippets():
            result = await client.call_tool("find_snippets", fx["find_snippets"]["arguments"])
            assert not result.is_error, dump(result)
            uris = [match["uri"] for match in result.structured_content["matches"]]
            assert uris == fx["find_snippets"]["uris"], f"structuredContent URIs {uris}"
            lines = [line.split(" — ")[0] for line in result.content[0].text.splitlines()]
            assert lines == fx["find_snippets"]["uris"], f"text {result.content[0].text!r}"

        async def resources_list():
            resources = (await client.list_resources()).resources
            found = [r for r in resources if str(r.uri) == fx["index"]["uri"]]
            assert found, f"{fx['index']['uri']} not among {[str(r.uri) for r in resources]}"
            assert found[0].name == fx["index"]["name"], dump(found[0])
            assert found[0].mime_type == fx["index"]["mimeType"], dump(found[0])

        async def templates_list():
            templates = (await client.list_resource_templates()).resource_templates
            found = [t for t in templates if t.uri_template == fx["template"]["uriTemplate"]]
            assert found, f"{fx['template']['uriTemplate']} not among {[t.uri_template for t in templates]}"
            assert found[0].name == fx["template"]["name"], dump(found[0])

        async def resources_read():
            contents = (await client.read_resource(fx["read"]["uri"])).contents
            assert len(contents) == 1, [dump(c) for c in contents]
            assert str(contents[0].uri) == fx["read"]["uri"], dump(contents[0])
            assert contents[0].mime_type == fx["read"]["mimeType"], dump(contents[0])
            assert contents[0].text == fx["read"]["text"], f"text {contents[0].text!r}"

        async def resources_read_unknown():
            codes = fx["read_unknown"]["modern_codes" if modern else "legacy_codes"]
            return await expect_error(client.read_resource(fx["read_unknown"]["uri"], cache_mode="bypass"), codes)

        async def prompts_list():
            names = sorted(prompt.name for prompt in (await client.list_prompts()).prompts)
            assert names == fx["prompts"], f"prompts {names} != {fx['prompts']}"

        async def prompts_get():
            result = await client.get_prompt("explain_snippet", fx["explain"]["arguments"])
            messages = [message_view(dump(m)) for m in result.messages]
            assert messages == fx["explain"]["messages"], f"messages {json.dumps(messages)}"

        async def prompts_get_missing():
            arguments = fx["explain_missing_name"]["arguments"]
            return await expect_error(
                client.get_prompt("explain_snippet", arguments), fx["explain_missing_name"]["codes"]
            )

        async def complete(key: str):
            case = fx[key]
            ref = case["ref"]
            if ref["type"] == "ref/prompt":
                reference = PromptReference(type="ref/prompt", name=ref["name"])
            else:
                reference = ResourceTemplateReference(type="ref/resource", uri=ref["uri"])
            result = await client.complete(reference, dict(case["argument"]))
            assert result.completion.values == case["values"], f"values {result.completion.values}"

        await check("tools/list", tools_list)
        await check("tools/call date_add", date_add)
        await check("tools/call find_snippets", find_snippets)
        await check("resources/list", resources_list)
        await check("resources/templates/list", templates_list)
        await check("resources/read", resources_read)
        await check("resources/read unknown", resources_read_unknown)
        await check("prompts/list", prompts_list)
        await check("prompts/get explain_snippet", prompts_get)
        await check("prompts/get without name", prompts_get_missing)
        await check("completion/complete prompt", lambda: complete("complete_prompt"))
        await check("completion/complete template", lambda: complete("complete_template"))
    finally:
        await client_cm.__aexit__(None, None, None)


async def main() -> None:
    with open(sys.argv[1], encoding="utf-8") as file:
        fx = json.load(file)
    if sys.argv[2] == "--http":
        server, transport = sys.argv[3], "http"
    else:
        server = StdioServerParameters(command=sys.argv[3], args=["serve", "--plugins", sys.argv[4]])
        transport = "stdio"
    # Whatever the SDK client logs at warning or above is a failure (e.g. the "Session
    # termination failed: 202" it once logged at every HTTP session close).
    complaints: list[str] = []

    class Complaints(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            complaints.append(f"{record.name}: {record.getMessage()}")

    logging.getLogger().addHandler(Complaints(logging.WARNING))
    for mode in ("legacy", "auto"):
        await check_all(server, mode, fx, transport)
    label = f"python mcp 2.3.0, {transport}"
    if complaints:
        failures.append(f"{label}: the client logged {complaints}")
        print(f"{label}: no warning or error logged by the client: FAILED: {complaints}")
    else:
        print(f"{label}: no warning or error logged by the client: ok")
    if failures:
        print(f"python mcp 2.3.0, {transport}: {len(failures)} check(s) FAILED")
        sys.exit(1)


if __name__ == "__main__":
    asyncio.run(main())
