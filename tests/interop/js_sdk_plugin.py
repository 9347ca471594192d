"""Calls the JavaScript SDK's example plugin (plugins-js/json-tools, a warden:plugin
component built with sdk/js and componentize-js) through `warden serve` over stdio,
with the official Python MCP SDK in both protocol eras, and checks exact values:
tools/list (names, titles, descriptions, schemas, annotations), results, a thrown
error, arguments refused by the schema, resources and templates, prompts and
completions; and interaction (contract 0.2.0): `json_delete` asks for a confirmation
and `json_set` for a form, answered by the client's elicitation callback (accepted,
declined, cancelled), `json_explain_diff` asks the client's model (its sampling
callback: the exact request checked) and `json_find_folders` the client's roots (its
list-roots callback) — during the call on the 2025-11-25 wire (legacy mode), as
input-required results the client retries on the 2026-07-28 wire (auto mode).

Then the fuel a trivial call uses (a copy of the component under `[limits] fuel`, the
audit log's `fuel_used`): under 1 M units, which it is only while the SDK warms the
bindings' realm in the snapshot (sdk/js/src/warm.js).

Then, with URL (`warden serve --http` of the same folder), `json_diff` of two
documents of 20 000 items each runs as an MCP task (contract 0.3.0 `task: 'optional'`):
raw 2026-07-28 JSON-RPC from a client that declared the tasks extension, created,
polled with `tasks/get` to `completed`, the exact patch (component_driver.run_as_task).

usage: python js_sdk_plugin.py WARDEN_BINARY PLUGINS_DIR CACHE_DIR AUDIT_LOG [URL]

CACHE_DIR should be empty: the first connection then measures a cold load (the
component compiled), the second a warm one (from Warden's compiled-code cache).
AUDIT_LOG is a new file for Warden's audit log: where each call's time went inside
Warden (instantiating a fresh instance, the guest's work) is printed from it.
Prints what it checked and the figures; exits 1 if any check failed.
"""

import asyncio
import json
import os
import shutil
import statistics
import sys
import time

from mcp import Client, MCPError, StdioServerParameters, types
from mcp.types import PromptReference, ResourceTemplateReference

from checks import Checks, dump, texts
from component_driver import (
    Latencies,
    check_refused,
    check_tool_errors,
    cold_then_warm,
    optimised_code_cached,
    run_as_task,
    serve_component,
    timed_calls,
)

TOOLS = ["json_delete", "json_diff", "json_explain_diff", "json_find_folders", "json_format", "json_pointer", "json_set"]

TITLES = {
    "json_pointer": "Read a value by JSON Pointer",
    "json_diff": "Compare two JSON documents",
    "json_format": "Format JSON",
    "json_delete": "Delete a value by JSON Pointer",
    "json_set": "Set a value by JSON Pointer",
    "json_explain_diff": "Explain the changes between two JSON documents",
    "json_find_folders": "Find JSON folders",
}

DESCRIPTIONS = {
    "json_pointer": 'Returns the value at an RFC 6901 JSON Pointer (e.g. "/users/0/name"; "" is the whole document) in a JSON document.',
    "json_diff": "Computes the RFC 6902 JSON Patch that turns `before` into `after` (object members by key, arrays by index) and lists the changes.",
    "json_format": "Re-indents a JSON text (0 puts it on one line) and optionally sorts object keys, for stable, reviewable output.",
    "json_delete": "Removes the value at an RFC 6901 JSON Pointer from a JSON document and returns the document, once the user has confirmed it in a form the client shows.",
    "json_set": 'Asks the user, in a form, for the value to put at an RFC 6901 JSON Pointer (a member of an object, or an element of an array: "-" appends) and returns the changed document.',
    "json_explain_diff": "Computes the JSON Patch from `before` to `after` and asks the client's model (sampling) to explain the changes for a reader; equal documents need no model.",
    "json_find_folders": "Asks the client for its roots (the folders it works in) and lists those that look like they hold JSON documents: a `file:` root that is a .json file, or whose last path segment or name mentions json, config or schema.",
}

JSON_TYPES = ["null", "boolean", "number", "string", "array", "object"]

INPUT_SCHEMAS = {
    "json_explain_diff": {
        "type": "object",
        "properties": {
            "before": {"description": "The original document."},
            "after": {"description": "The changed document."},
            "audience": {
                "type": "string",
                "enum": ["developer", "reviewer", "operator"],
                "description": "Who reads the explanation (default developer).",
            },
        },
        "required": ["before", "after"],
        "additionalProperties": False,
    },
    "json_find_folders": {"type": "object", "properties": {}, "additionalProperties": False},
    "json_delete": {
        "type": "object",
        "properties": {
            "document": {"description": "The JSON document to change."},
            "pointer": {"type": "string", "description": 'The RFC 6901 JSON Pointer of the value to remove (not "").'},
        },
        "required": ["document", "pointer"],
        "additionalProperties": False,
    },
    "json_set": {
        "type": "object",
        "properties": {
            "document": {"description": "The JSON document to change."},
            "pointer": {"type": "string", "description": 'The RFC 6901 JSON Pointer to set (not "").'},
        },
        "required": ["document", "pointer"],
        "additionalProperties": False,
    },
    "json_pointer": {
        "type": "object",
        "properties": {
            "document": {"description": "The JSON document to read from."},
            "pointer": {
                "type": "string",
                "description": 'An RFC 6901 JSON Pointer: "" or "/"-separated keys and array indexes, with "~1" for "/" and "~0" for "~".',
            },
        },
        "required": ["document", "pointer"],
        "additionalProperties": False,
    },
    "json_diff": {
        "type": "object",
        "properties": {
            "before": {"description": "The original document."},
            "after": {"description": "The changed document."},
        },
        "required": ["before", "after"],
        "additionalProperties": False,
    },
    "json_format": {
        "type": "object",
        "properties": {
            "text": {"type": "string", "description": "The JSON text."},
            "indent": {
                "type": "integer",
                "minimum": 0,
                "maximum": 8,
                "description": "Spaces per level; 0 for one line (default 2).",
            },
            "sort_keys": {"type": "boolean", "description": "Sort object keys (default false)."},
        },
        "required": ["text"],
        "additionalProperties": False,
    },
}

OUTPUT_SCHEMAS = {
    "json_pointer": {
        "type": "object",
        "properties": {
            "value": {"description": "The value at the pointer."},
            "type": {"type": "string", "enum": JSON_TYPES, "description": "Its JSON type."},
        },
        "required": ["value", "type"],
        "additionalProperties": False,
    },
    "json_diff": {
        "type": "object",
        "properties": {
            "patch": {
                "type": "array",
                "items": {
                    "type": "object",
                    "properties": {
                        "op": {"type": "string", "enum": ["add", "remove", "replace"]},
                        "path": {"type": "string"},
                        "value": {},
                    },
                    "required": ["op", "path"],
                    "additionalProperties": False,
                },
                "description": "The JSON Patch operations, in order.",
            },
            "changes": {"type": "integer", "minimum": 0, "description": "How many operations."},
        },
        "required": ["patch", "changes"],
        "additionalProperties": False,
    },
    "json_format": None,
    "json_delete": None,
    "json_set": None,
    "json_explain_diff": None,
    "json_find_folders": {
        "type": "object",
        "properties": {
            "folders": {
                "type": "array",
                "items": {
                    "type": "object",
                    "properties": {"uri": {"type": "string"}, "name": {"type": "string"}},
                    "required": ["uri"],
                    "additionalProperties": False,
                },
                "description": "The roots that look like they hold JSON documents.",
            },
            "others": {"type": "integer", "minimum": 0, "description": "How many roots do not."},
        },
        "required": ["folders", "others"],
        "additionalProperties": False,
    },
}

# No grants: Warden serves every tool as read-only, non-destructive, idempotent, closed-world.
ANNOTATIONS = {"readOnlyHint": True, "destructiveHint": False, "idempotentHint": True, "openWorldHint": False}

DOC = {"users": [{"name": "Ada", "tags": ["x", "y"]}, {"name": "Grace"}], "a/b": {"~": 7}, "n": None}

# (tool, arguments, expected structuredContent or None, expected texts). Arguments reach
# the plugin as Warden re-serialises them, with object keys in sorted order: json_diff
# walks `before`'s keys in that order.
RESULTS = [
    ("json_pointer", {"document": DOC, "pointer": "/users/0/name"}, {"value": "Ada", "type": "string"}, ['"Ada"']),
    ("json_pointer", {"document": DOC, "pointer": "/users/0/tags"}, {"value": ["x", "y"], "type": "array"}, ['["x","y"]']),
    ("json_pointer", {"document": DOC, "pointer": "/a~1b/~0"}, {"value": 7, "type": "number"}, ["7"]),
    ("json_pointer", {"document": DOC, "pointer": "/n"}, {"value": None, "type": "null"}, ["null"]),
    ("json_pointer", {"document": [1, 2], "pointer": ""}, {"value": [1, 2], "type": "array"}, ["[1,2]"]),
    (
        "json_diff",
        {
            "before": {"name": "demo", "version": "1.0.0", "tags": ["a", "b", "c"], "old": True},
            "after": {"name": "demo", "version": "1.1.0", "tags": ["a", "x"], "new/key": {"k": 1}},
        },
        {
            "patch": [
                {"op": "remove", "path": "/old"},
                {"op": "replace", "path": "/tags/1", "value": "x"},
                {"op": "remove", "path": "/tags/2"},
                {"op": "replace", "path": "/version", "value": "1.1.0"},
                {"op": "add", "path": "/new~1key", "value": {"k": 1}},
            ],
            "changes": 5,
        },
        [
            '5 changes:\nremove /old\nreplace /tags/1 = "x"\nremove /tags/2\nreplace /version = "1.1.0"\n'
            'add /new~1key = {"k":1}'
        ],
    ),
    ("json_diff", {"before": [1, 2], "after": [1, 2, 3, 4]}, {
        "patch": [{"op": "add", "path": "/-", "value": 3}, {"op": "add", "path": "/-", "value": 4}],
        "changes": 2,
    }, ["2 changes:\nadd /- = 3\nadd /- = 4"]),
    ("json_diff", {"before": {"a": [1]}, "after": {"a": [1]}}, {"patch": [], "changes": 0}, ["The documents are equal."]),
    ("json_diff", {"before": 1, "after": "1"}, {"patch": [{"op": "replace", "path": "", "value": "1"}], "changes": 1},
     ['1 change:\nreplace / = "1"']),
    ("json_format", {"text": '{"b": [1, {"d": 2, "c": 3}], "a": null}'}, None,
     ['{\n  "b": [\n    1,\n    {\n      "d": 2,\n      "c": 3\n    }\n  ],\n  "a": null\n}']),
    ("json_format", {"text": '{"b": [1, {"d": 2, "c": 3}], "a": null}', "indent": 0, "sort_keys": True}, None,
     ['{"a":null,"b":[1,{"c":3,"d":2}]}']),
    ("json_format", {"text": ' "x" ', "indent": 4}, None, ['"x"']),
]

# Errors the handler throws: isError, the Error's message as the text.
TOOL_ERRORS = [
    ("json_pointer", {"document": DOC, "pointer": "/users/2/name"},
     'no value at /users/2/name: the array at /users has 2 items, and "2" is not one of their indexes'),
    ("json_pointer", {"document": DOC, "pointer": "/users/0/age"},
     'no value at /users/0/age: the object at /users/0 has no key "age" (its keys: name, tags)'),
    ("json_pointer", {"document": DOC, "pointer": "/n/x"},
     "no value at /n/x: the value at /n is null, not an object or array"),
    ("json_pointer", {"document": DOC, "pointer": "users"},
     'a JSON Pointer is empty or starts with "/", got "users"'),
    ("json_format", {"text": "{nope"}, "the text is not valid JSON"),
]

# Arguments that do not match the input schema: refused by Warden before the component
# runs; the text must name the argument at fault.
REFUSED = [
    ("json_pointer", {"document": {}, "pointer": 5}, "pointer"),
    ("json_pointer", {"document": {}}, "pointer"),
    ("json_format", {"text": "{}", "indent": 9}, "indent"),
    ("json_format", {"text": "{}", "indent": 1.5}, "indent"),
    ("json_format", {"text": "{}", "sort": True}, "sort"),
    ("json_diff", {"before": 1}, "after"),
]

POINTER_SYNTAX = """# JSON Pointer (RFC 6901)

- "" is the whole document; "/a" is member "a" of the top-level object.
- "/items/0" is the first element of the array "items".
- In a key, write "~0" for "~" and "~1" for "/": "/a~1b" is member "a/b".
- A pointer names exactly one value; there are no wildcards.
"""

# Listed by URI.
RESOURCES = [
    {"uri": "json-tools://examples/config", "name": "example config", "title": "Example documents",
     "description": "Small JSON documents to try the tools on.", "mimeType": "application/json"},
    {"uri": "json-tools://examples/package", "name": "example package", "title": "Example documents",
     "description": "Small JSON documents to try the tools on.", "mimeType": "application/json"},
    {"uri": "json-tools://examples/users", "name": "example users", "title": "Example documents",
     "description": "Small JSON documents to try the tools on.", "mimeType": "application/json"},
    {"uri": "json-tools://pointer-syntax", "name": "pointer-syntax", "title": "JSON Pointer syntax",
     "description": "A short guide to RFC 6901 JSON Pointers.", "mimeType": "text/markdown"},
]

TEMPLATES = [
    {"uriTemplate": "json-tools://examples/{name}", "name": "example", "title": "Example documents",
     "description": "Small JSON documents to try the tools on.", "mimeType": "application/json"},
]

READS = [
    ("json-tools://pointer-syntax", "text/markdown", POINTER_SYNTAX),
    ("json-tools://examples/users", "application/json",
     '[\n  {\n    "id": 1,\n    "name": "Ada",\n    "roles": [\n      "admin"\n    ]\n  },\n'
     '  {\n    "id": 2,\n    "name": "Grace",\n    "roles": []\n  }\n]'),
    ("json-tools://examples/config", "application/json",
     '{\n  "server": {\n    "host": "localhost",\n    "port": 8080\n  },\n  "features": [\n    "search",\n'
     '    "export"\n  ],\n  "debug": false\n}'),
]

PROMPTS = [
    {
        "name": "explain_changes",
        "title": "Explain the changes between two JSON documents",
        "description": "Asks the model to explain what changed between two JSON documents, given the computed JSON Patch.",
        "arguments": [
            {"name": "before", "description": "The original JSON text.", "required": True},
            {"name": "after", "description": "The changed JSON text.", "required": True},
            {"name": "audience", "description": "Who reads the explanation: developer, reviewer, operator (default developer).",
             "required": False},
        ],
    }
]

# (arguments, description, the one user message's text)
PROMPT_GETS = [
    ({"before": '{"port": 80}', "after": '{"port": 8080, "tls": true}', "audience": "operator"}, "What changed, for the operator",
     "Explain these changes to a JSON document for the operator, most important first.\n\n"
     "2 changes:\nreplace /port = 8080\nadd /tls = true"),
    ({"before": "[1]", "after": "[1]"}, "What changed, for the developer",
     "Explain these changes to a JSON document for the developer, most important first.\n\nThe documents are equal."),
]

# (reference, argument name, typed value, suggestions)
COMPLETIONS = [
    (PromptReference(type="ref/prompt", name="explain_changes"), "audience", "", ["developer", "reviewer", "operator"]),
    (PromptReference(type="ref/prompt", name="explain_changes"), "audience", "re", ["reviewer"]),
    (PromptReference(type="ref/prompt", name="explain_changes"), "before", "", []),
    (ResourceTemplateReference(type="ref/resource", uri="json-tools://examples/{name}"), "name", "", ["config", "package", "users"]),
    (ResourceTemplateReference(type="ref/resource", uri="json-tools://examples/{name}"), "name", "p", ["package"]),
]


CONFIRM_FORM = {
    "type": "object",
    "properties": {"confirm": {"type": "boolean", "title": "Confirm", "default": False}},
    "required": ["confirm"],
}
VALUE_FORM = {
    "type": "object",
    "properties": {
        "value": {"type": "string", "title": "Value", "description": "JSON (42, true, \"text\", [1, 2]) or plain text"},
        "as_text": {"type": "boolean", "title": "Plain text", "description": "Keep the value as a string", "default": False},
    },
    "required": ["value"],
}


async def check_interaction(checks: Checks, mode: str, client, answers: list, asked: list) -> None:
    """json_delete and json_set, with the elicitation callback answering from `answers`
    (and recording what it was asked in `asked`)."""
    wire = {"legacy": "2025-11-25", "auto": "2026-07-28"}[mode]
    checks.equal(f"[{mode}] the wire the interaction runs on", client.protocol_version, wire)

    async def call(tool: str, arguments: dict, *queued) -> list:
        answers.extend(queued)
        result = await client.call_tool(tool, arguments)
        return [bool(result.is_error), texts(result)]

    not_confirmed = [False, ["Deleted nothing: the user did not confirm (declined, cancelled or left unchecked)."]]
    checks.equal(f"[{mode}] json_delete, declined", await call("json_delete", {"document": DOC, "pointer": "/users/1"}, ("decline", None)), not_confirmed)
    checks.equal(f"[{mode}] json_delete, cancelled", await call("json_delete", {"document": DOC, "pointer": "/n"}, ("cancel", None)), not_confirmed)
    checks.equal(f"[{mode}] json_delete, left unchecked", await call("json_delete", {"document": DOC, "pointer": "/n"}, ("accept", {"confirm": False})), not_confirmed)
    checks.equal(
        f"[{mode}] json_delete, confirmed",
        await call("json_delete", {"document": DOC, "pointer": "/users/0/tags/0"}, ("accept", {"confirm": True})),
        [False, ['{"a/b":{"~":7},"n":null,"users":[{"name":"Ada","tags":["y"]},{"name":"Grace"}]}']],
    )
    # A pointer to nothing: an error before anything is asked.
    checks.equal(
        f"[{mode}] json_delete, no such value",
        await call("json_delete", {"document": DOC, "pointer": "/users/5"}),
        [True, ['no value at /users/5: the array at /users has 2 items, and "5" is not one of their indexes']],
    )
    checks.equal(
        f"[{mode}] json_set, accepted (JSON)",
        await call("json_set", {"document": {"a": [1]}, "pointer": "/a/-"}, ("accept", {"value": '{"b": 2}'})),
        [False, ['{"a":[1,{"b":2}]}']],
    )
    checks.equal(
        f"[{mode}] json_set, accepted (plain text)",
        await call("json_set", {"document": {"a": 1}, "pointer": "/b"}, ("accept", {"value": "42", "as_text": True})),
        [False, ['{"a":1,"b":"42"}']],
    )
    checks.equal(
        f"[{mode}] json_set, declined",
        await call("json_set", {"document": {"a": 1}, "pointer": "/a"}, ("decline", None)),
        [False, ["Set nothing: the user chose decline."]],
    )
    checks.equal(f"[{mode}] what the elicitation callback was asked", asked, [
        ("Delete the object at /users/1?", CONFIRM_FORM),
        ("Delete the null at /n?", CONFIRM_FORM),
        ("Delete the null at /n?", CONFIRM_FORM),
        ("Delete the string at /users/0/tags/0?", CONFIRM_FORM),
        ("The new value at /a/-", VALUE_FORM),
        ("The new value at /b", VALUE_FORM),
        ("The new value at /a", VALUE_FORM),
    ])
    checks.equal(f"[{mode}] every queued answer was used", answers, [])


# json_explain_diff: what the plugin asks the client's model (sampling/createMessage, as
# the client's sampling callback receives it, without `_meta`) and what the model answers.
EXPLAIN_SYSTEM = "You review changes to configuration and data files. Be brief: one sentence per change."
EXPLANATION = "The port moves from 80 to 8080, and TLS is switched on."


def explain_request(audience: str, changes: str, count: int) -> dict:
    return {
        "messages": [
            {
                "role": "user",
                "content": {
                    "type": "text",
                    "text": f"Explain these changes to a JSON document for the {audience}, most important first.\n\n{changes}",
                },
            }
        ],
        "systemPrompt": EXPLAIN_SYSTEM,
        "maxTokens": 80 * count,
        "temperature": 0,
    }


# json_find_folders: the roots the client's list-roots callback answers, and which of them
# the plugin keeps.
ROOTS = [
    ("file:///etc/app-config", None),
    ("file:///home/ada/src/warden", "Warden source"),
    ("file:///home/ada/exports/users.json", "Users export"),
    ("file:///srv/shared", "JSON Schemas"),
    ("file:///home/ada/notes", None),
]
JSON_FOLDERS = {
    "folders": [
        {"uri": "file:///etc/app-config"},
        {"uri": "file:///home/ada/exports/users.json", "name": "Users export"},
        {"uri": "file:///srv/shared", "name": "JSON Schemas"},
    ],
    "others": 2,
}


async def check_sampling_and_roots(checks: Checks, mode: str, client, sampled: list, listed_roots: list) -> None:
    """json_explain_diff (sampling) and json_find_folders (roots): the exact request the
    client's callbacks received and the exact result."""
    result = await client.call_tool(
        "json_explain_diff", {"before": {"port": 80}, "after": {"port": 8080, "tls": True}, "audience": "operator"}
    )
    checks.equal(
        f"[{mode}] json_explain_diff",
        [bool(result.is_error), texts(result)],
        [False, [EXPLANATION + "\n\n(explained by json-reviewer-1)"]],
    )
    # Equal documents: nothing to explain, nothing asked.
    result = await client.call_tool("json_explain_diff", {"before": [1], "after": [1]})
    checks.equal(
        f"[{mode}] json_explain_diff, equal documents",
        [bool(result.is_error), texts(result)],
        [False, ["The documents are equal: nothing to explain."]],
    )
    checks.equal(f"[{mode}] what the sampling callback was asked", sampled, [
        explain_request("operator", "2 changes:\nreplace /port = 8080\nadd /tls = true", 2),
    ])
    result = await client.call_tool("json_find_folders", {})
    checks.equal(f"[{mode}] json_find_folders isError", result.is_error, False)
    checks.equal(f"[{mode}] json_find_folders structuredContent", result.structured_content, JSON_FOLDERS)
    checks.equal(f"[{mode}] json_find_folders text", texts(result), [json.dumps(JSON_FOLDERS, separators=(",", ":"))])
    checks.equal(f"[{mode}] the list-roots callback was asked once", listed_roots, [mode])


async def session(checks: Checks, server: StdioServerParameters, mode: str, latencies: Latencies) -> float:
    """Runs every check on one connection; returns the seconds from spawning Warden to its tools/list answer."""
    answers: list = []  # (action, content) the elicitation callback answers next
    asked: list = []  # (message, requested schema) it was asked

    async def on_elicit(context, params):
        asked.append((params.message, params.requested_schema))
        if not answers:
            return types.ElicitResult(action="cancel")
        action, content = answers.pop(0)
        return types.ElicitResult(action=action, content=content)

    sampled: list = []  # the sampling requests, as JSON without _meta
    listed_roots: list = []  # one entry per roots/list

    async def on_sample(context, params):
        request = params.model_dump(by_alias=True, exclude_none=True, mode="json")
        request.pop("_meta", None)
        sampled.append(request)
        return types.CreateMessageResult(
            role="assistant",
            content=types.TextContent(type="text", text=f" {EXPLANATION}\n"),
            model="json-reviewer-1",
            stop_reason="endTurn",
        )

    async def on_list_roots(context):
        listed_roots.append(mode)
        return types.ListRootsResult(roots=[types.Root(uri=uri, name=name) for uri, name in ROOTS])

    started = time.perf_counter()
    async with Client(
        server, mode=mode, elicitation_callback=on_elicit, sampling_callback=on_sample, list_roots_callback=on_list_roots
    ) as client:
        listed = await client.list_tools()
        load = time.perf_counter() - started
        tools = {tool.name: tool for tool in listed.tools}
        checks.equal(f"[{mode}] tools/list names", sorted(tools), TOOLS)
        for name in TOOLS:
            if name not in tools:
                continue
            tool = tools[name]
            checks.equal(f"[{mode}] title of {name}", tool.title, TITLES[name])
            checks.equal(f"[{mode}] description of {name}", tool.description, DESCRIPTIONS[name])
            checks.equal(f"[{mode}] inputSchema of {name}", tool.input_schema, INPUT_SCHEMAS[name])
            checks.equal(f"[{mode}] outputSchema of {name}", tool.output_schema, OUTPUT_SCHEMAS[name])
            annotations = dump(tool.annotations) if tool.annotations else None
            checks.equal(f"[{mode}] annotations of {name}", annotations, ANNOTATIONS)

        call = timed_calls(client, latencies)

        for name, arguments, structured, text in RESULTS:
            what = f"[{mode}] {name} {json.dumps(arguments, ensure_ascii=False)}"
            try:
                result = await call(name, arguments)
            except Exception as error:  # e.g. structuredContent not matching outputSchema
                checks.failed.append(f"{what}: raised {type(error).__name__}: {error}")
                continue
            checks.equal(f"{what} isError", result.is_error, False)
            checks.equal(f"{what} structuredContent", result.structured_content, structured)
            checks.equal(f"{what} text", texts(result), text)

        await check_tool_errors(checks, mode, call, TOOL_ERRORS)
        await check_refused(checks, mode, call, REFUSED)

        resources = [dump(r) for r in (await client.list_resources()).resources]
        checks.equal(f"[{mode}] resources/list", resources, RESOURCES)
        templates = [dump(t) for t in (await client.list_resource_templates()).resource_templates]
        checks.equal(f"[{mode}] resources/templates/list", templates, TEMPLATES)
        for uri, mime, text in READS:
            contents = [dump(c) for c in (await client.read_resource(uri)).contents]
            checks.equal(f"[{mode}] resources/read {uri}", contents, [{"uri": uri, "mimeType": mime, "text": text}])
        try:
            result = await client.read_resource("json-tools://examples/nope")
            checks.failed.append(f"[{mode}] resources/read json-tools://examples/nope: got a result {dump(result)}")
        except MCPError as error:
            checks.true(
                f"[{mode}] resources/read json-tools://examples/nope is an error naming the examples",
                "no example named \"nope\"; there are: config, package, users" in str(error),
                f"error {error.code}: {error}",
            )

        prompts = [dump(p) for p in (await client.list_prompts()).prompts]
        checks.equal(f"[{mode}] prompts/list", prompts, PROMPTS)
        for arguments, description, text in PROMPT_GETS:
            result = await client.get_prompt("explain_changes", arguments)
            got = {key: value for key, value in dump(result).items() if key != "resultType"}
            checks.equal(f"[{mode}] prompts/get {json.dumps(arguments)}", got, {
                "description": description,
                "messages": [{"role": "user", "content": {"type": "text", "text": text}}],
            })
        try:
            result = await client.get_prompt("explain_changes", {"before": "{}"})
            checks.failed.append(f"[{mode}] prompts/get without `after`: got a result {dump(result)}")
        except MCPError as error:
            checks.true(f"[{mode}] prompts/get without `after` is an error naming it", "after" in str(error),
                        f"error {error.code}: {error}")

        for reference, argument, value, want in COMPLETIONS:
            result = await client.complete(reference, {"name": argument, "value": value})
            checks.equal(f"[{mode}] completion/complete {argument}={value!r}", result.completion.values, want)

        await check_interaction(checks, mode, client, answers, asked)
        await check_sampling_and_roots(checks, mode, client, sampled, listed_roots)
    return load


# Two documents big enough that json_diff outlives the 100 ms after which Warden makes a
# call a task: 20 000 items each (2.5 MB of arguments, under --max-body's 4 MiB; about
# 0.35 s in the guest on a shared 2-vCPU VM), three changes between them. Warden hands
# the plugin the keys sorted, so the patch lists /items before /version.
BIG_ITEMS = 20_000


def big_document(version: int) -> dict:
    items = [{"id": i, "name": f"item {i}", "price": i * 0.5, "tags": ["a", "b"]} for i in range(BIG_ITEMS)]
    if version == 2:
        items[5]["price"] = 99.5
        items[-1]["tags"].append("c")
    return {"version": version, "items": items}


BIG_PATCH = [
    {"op": "replace", "path": "/items/5/price", "value": 99.5},
    {"op": "add", "path": f"/items/{BIG_ITEMS - 1}/tags/-", "value": "c"},
    {"op": "replace", "path": "/version", "value": 2},
]
BIG_TEXT = f'3 changes:\nreplace /items/5/price = 99.5\nadd /items/{BIG_ITEMS - 1}/tags/- = "c"\nreplace /version = 2'


# The fuel (Wasmtime's count of the guest's instructions) a trivial call may use. With
# componentize-js 0.23.0 `json_format` of `{"a":1}` used 1.46 M units until the SDK warmed
# the bindings' realm in the snapshot (sdk/js/src/warm.js), and 0.69 M since: this fails
# if that warm-up stops working. Unlike time, fuel is the same on any machine.
TRIVIAL_CALL_FUEL = 1_000_000


async def trivial_call_fuel(checks: Checks, warden: str, plugins: str, work: str) -> None:
    """Serves a copy of the component under a fuel budget and reads, from the audit log,
    the fuel three identical trivial calls used: each under TRIVIAL_CALL_FUEL.
    (The audit log of the first `warden serve`, which only fills the cache, is empty.)"""
    folder, cache, audit = (os.path.join(work, f"js-sdk-fuel-{name}") for name in ("plugins", "cache", "audit.jsonl"))
    for old in (folder, cache):
        shutil.rmtree(old, ignore_errors=True)
        os.makedirs(old)
    if os.path.exists(audit):
        os.remove(audit)
    shutil.copy(os.path.join(plugins, "json-tools.wasm"), folder)
    with open(os.path.join(folder, "json-tools.toml"), "w", encoding="utf-8") as manifest:
        manifest.write("[limits]\nfuel = 100000000000\n")
    server = serve_component(warden, folder, cache, "--audit-log", audit)
    # Every call on the optimised code (a cold load would serve baseline code first).
    await optimised_code_cached(checks, server)
    arguments = {"text": '{"a":1}', "indent": 0}
    async with Client(server, mode="legacy") as client:
        for _ in range(3):
            result = await client.call_tool("json_format", arguments)
            checks.equal("[fuel] json_format text", texts(result), ['{"a":1}'])
    with open(audit, encoding="utf-8") as lines:
        used = [json.loads(line)["timing"].get("fuel_used") for line in lines]
    print(f"fuel used by json_format {json.dumps(arguments)}, three calls: {used}")
    checks.equal("[fuel] calls in the audit log", len(used), 3)
    checks.true(
        f"[fuel] a trivial call uses under {TRIVIAL_CALL_FUEL}",
        all(isinstance(fuel, int) and fuel < TRIVIAL_CALL_FUEL for fuel in used),
        f"fuel {used}",
    )


async def main() -> None:
    warden, plugins, cache, audit = sys.argv[1:5]
    url = sys.argv[5] if len(sys.argv) > 5 else None
    server = serve_component(warden, plugins, cache, "--audit-log", audit)
    checks = Checks()
    await cold_then_warm(checks, server, session)
    if url:
        arguments = {"before": big_document(1), "after": big_document(2)}
        size = len(json.dumps(arguments, separators=(",", ":")))
        print(f"== json_diff as an MCP task over HTTP ({url}): {size} bytes of arguments")
        try:
            run_as_task(checks, url, "json_diff", arguments, {"patch": BIG_PATCH, "changes": 3}, BIG_TEXT)
        except Exception as error:
            checks.failed.append(f"[task json_diff] raised {type(error).__name__}: {error}")
    await trivial_call_fuel(checks, warden, plugins, os.path.dirname(os.path.abspath(audit)))
    timings: dict[str, list[int]] = {}
    with open(audit, encoding="utf-8") as lines:
        for line in lines:
            timing = json.loads(line).get("timing")
            for key, value in (timing or {}).items():
                timings.setdefault(key, []).append(value)
    if timings:
        parts = ", ".join(f"{key.removesuffix('_us')} {statistics.median(values):.0f} µs" for key, values in timings.items())
        print(f"inside Warden, p50 of {len(timings['guest_us'])} calls that reached the component: {parts}")
    sys.exit(checks.summary("js sdk plugin"))


if __name__ == "__main__":
    asyncio.run(main())
