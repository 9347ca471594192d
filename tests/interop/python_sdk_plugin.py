"""Calls the example plugin written with the Python SDK (plugins-py/csvtools, built
with componentize-py) through `warden serve` over stdio, with the official Python
MCP SDK in both protocol eras, and checks exact values: the tools listed (names,
titles, descriptions from docstrings, input and output schemas from type hints,
annotations), results (text and structuredContent), an exception as an isError
result, arguments the schema refuses, resources, the template, the prompt,
completions and a host.log message; and interaction (contract 0.2.0): `delete_rows`
asks for a confirmation and `add_row` for a form, answered by the client's
elicitation callback (accepted and declined), `describe_columns` asks the client's
model (its sampling callback: the exact request checked) and `find_csv_folders` the
client's roots (its list-roots callback) — during the call on the 2025-11-25 wire
(legacy mode), as input-required results the client retries on the 2026-07-28 wire
(auto mode).

Then, with URL (`warden serve --http` of the same folder), `summarize_csv` on a
40 000-row table runs as an MCP task (contract 0.3.0 `task="optional"`): raw 2026-07-28
JSON-RPC from a client that declared the tasks extension, created, polled with
`tasks/get` to `completed`, the exact summary (component_driver.run_as_task).

usage: python python_sdk_plugin.py WARDEN_BINARY PLUGINS_DIR CACHE_DIR [URL]

CACHE_DIR should be empty: the first connection then measures a cold load (the
component compiled), the second a warm one (from Warden's compiled-code cache).
Prints the figures; exits 1 if any check failed.
"""

import asyncio
import json
import sys
import time

from mcp import Client, MCPError, StdioServerParameters
from mcp import types
from mcp.types import PromptReference, ResourceTemplateReference

from checks import Checks, dump, texts
from component_driver import (
    Latencies,
    check_refused,
    check_tool_errors,
    cold_then_warm,
    run_as_task,
    serve_component,
    timed_calls,
)

PLANETS = (
    "name,type,moons,radius_km\n"
    "Mercury,terrestrial,0,2439.7\n"
    "Venus,terrestrial,0,6051.8\n"
    "Earth,terrestrial,1,6371.0\n"
    "Mars,terrestrial,2,3389.5\n"
    "Jupiter,gas giant,95,69911\n"
    "Saturn,gas giant,146,58232\n"
    "Uranus,ice giant,28,25362\n"
    "Neptune,ice giant,16,24622\n"
)
ELEMENTS = (
    "symbol,name,number,weight\n"
    "H,Hydrogen,1,1.008\n"
    "He,Helium,2,4.0026\n"
    "Li,Lithium,3,6.94\n"
    "Be,Beryllium,4,9.0122\n"
    "B,Boron,5,10.81\n"
    "C,Carbon,6,12.011\n"
    "N,Nitrogen,7,14.007\n"
    "O,Oxygen,8,15.999\n"
    "F,Fluorine,9,18.998\n"
    "Ne,Neon,10,20.18\n"
)

CSV = {"type": "string", "description": "The CSV text, header first."}
DELIMITER = {"type": "string", "description": "The character between fields.", "minLength": 1, "maxLength": 1, "default": ","}
NULLABLE_NUMBER = {"anyOf": [{"type": "number"}, {"type": "null"}], "default": None}
# No grants: Warden serves every tool as read-only, idempotent, closed-world.
SERVED_ANNOTATIONS = {"readOnlyHint": True, "destructiveHint": False, "idempotentHint": True, "openWorldHint": False}

TOOLS = {
    "csv_to_markdown": {
        "title": "CSV to Markdown",
        "description": "Renders CSV text as a Markdown table (the first row is the header).",
        "inputSchema": {
            "type": "object",
            "properties": {
                "csv": CSV,
                "align": {
                    "type": "string",
                    "enum": ["left", "center", "right"],
                    "description": "How every column is aligned.",
                    "default": "left",
                },
                "delimiter": DELIMITER,
            },
            "required": ["csv"],
            "additionalProperties": False,
        },
        "outputSchema": None,
    },
    "query_csv": {
        "title": "Query CSV",
        "description": "Selects rows of a CSV table: keeps those matching every condition, sorts them\n"
        "(numerically when the column holds numbers) and returns the chosen columns.",
        "inputSchema": {
            "type": "object",
            "properties": {
                "csv": CSV,
                "columns": {
                    "anyOf": [{"type": "array", "items": {"type": "string"}}, {"type": "null"}],
                    "description": "The columns to return, in this order (default: all).",
                    "default": None,
                },
                "where": {
                    "anyOf": [
                        {
                            "type": "array",
                            "items": {
                                "type": "object",
                                "properties": {
                                    "column": {"type": "string"},
                                    "op": {"type": "string", "enum": ["=", "!=", "<", "<=", ">", ">=", "contains"]},
                                    "value": {"type": "string"},
                                },
                                "required": ["column", "op", "value"],
                                "additionalProperties": False,
                                "description": "Keeps the rows whose `column` compares so with `value` (as numbers when both are).",
                            },
                        },
                        {"type": "null"},
                    ],
                    "description": "Conditions every returned row meets.",
                    "default": None,
                },
                "sort_by": {
                    "anyOf": [{"type": "string"}, {"type": "null"}],
                    "description": "The column to sort by (default: the table's order).",
                    "default": None,
                },
                "descending": {"type": "boolean", "description": "Sort from the largest value.", "default": False},
                "limit": {
                    "type": "integer",
                    "minimum": 1,
                    "maximum": 1000,
                    "description": "At most this many rows.",
                    "default": 100,
                },
                "delimiter": DELIMITER,
            },
            "required": ["csv"],
            "additionalProperties": False,
        },
        "outputSchema": {
            "type": "object",
            "properties": {
                "columns": {"type": "array", "items": {"type": "string"}},
                "rows": {"type": "array", "items": {"type": "array", "items": {"type": "string"}}},
                "matched": {"type": "integer", "description": "Rows that matched, before the limit."},
            },
            "required": ["columns", "rows", "matched"],
            "additionalProperties": False,
        },
    },
    "delete_rows": {
        "title": "Delete CSV rows",
        "description": "Deletes the rows whose `column` holds exactly `value` and returns the CSV that is\n"
        "left, once the user has confirmed it in a form the client shows (a client without\n"
        "form elicitation cannot delete).",
        "inputSchema": {
            "type": "object",
            "properties": {
                "csv": CSV,
                "column": {"type": "string", "description": "The column to look in."},
                "value": {"type": "string", "description": "The rows whose cell in `column` is this text are deleted."},
                "delimiter": DELIMITER,
            },
            "required": ["csv", "column", "value"],
            "additionalProperties": False,
        },
        "outputSchema": None,
    },
    "add_row": {
        "title": "Add a CSV row",
        "description": "Asks the user for the values of a new row — a form with one text field per\n"
        "column — and returns the CSV with that row appended.",
        "inputSchema": {
            "type": "object",
            "properties": {"csv": CSV, "delimiter": DELIMITER},
            "required": ["csv"],
            "additionalProperties": False,
        },
        "outputSchema": None,
    },
    "summarize_csv": {
        "title": "Summarize CSV",
        "description": "Describes a CSV table: its row count and, per column, the type of its values,\n"
        "how many are filled and distinct, and for numbers the minimum, maximum and mean.",
        "inputSchema": {
            "type": "object",
            "properties": {"csv": CSV, "delimiter": DELIMITER},
            "required": ["csv"],
            "additionalProperties": False,
        },
        "outputSchema": {
            "type": "object",
            "properties": {
                "rows": {"type": "integer"},
                "columns": {
                    "type": "array",
                    "items": {
                        "type": "object",
                        "properties": {
                            "name": {"type": "string"},
                            "type": {"type": "string", "enum": ["integer", "number", "text", "empty"]},
                            "filled": {"type": "integer", "description": "How many cells are not empty."},
                            "distinct": {"type": "integer", "description": "How many different non-empty values."},
                            "min": NULLABLE_NUMBER,
                            "max": NULLABLE_NUMBER,
                            "mean": NULLABLE_NUMBER,
                        },
                        "required": ["name", "type", "filled", "distinct"],
                        "additionalProperties": False,
                        "description": "One column of a CSV table.",
                    },
                },
            },
            "required": ["rows", "columns"],
            "additionalProperties": False,
            "description": "The shape of a CSV table.",
        },
    },
    "describe_columns": {
        "title": "Describe CSV columns",
        "description": "Asks the client's model (sampling) what each column of a CSV table holds, showing\n"
        "it the header and the first rows, and returns its answer.",
        "inputSchema": {
            "type": "object",
            "properties": {"csv": CSV, "delimiter": DELIMITER},
            "required": ["csv"],
            "additionalProperties": False,
        },
        "outputSchema": None,
    },
    "find_csv_folders": {
        "title": "Find CSV folders",
        "description": "Asks the client for its roots (the folders it works in) and lists those that look\n"
        "like they hold CSV tables: a `file:` root that is a `.csv` file, or whose last path\n"
        "segment or name mentions csv, data or tables.",
        "inputSchema": {"type": "object", "properties": {}, "additionalProperties": False},
        "outputSchema": {
            "type": "object",
            "properties": {
                "folders": {
                    "type": "array",
                    "items": {
                        "type": "object",
                        "properties": {
                            "uri": {"type": "string"},
                            "name": {"anyOf": [{"type": "string"}, {"type": "null"}], "default": None},
                        },
                        "required": ["uri"],
                        "additionalProperties": False,
                        "description": "A root of the client's.",
                    },
                    "description": "The roots that look like they hold CSV tables.",
                },
                "others": {"type": "integer", "description": "How many roots do not."},
            },
            "required": ["folders", "others"],
            "additionalProperties": False,
        },
    },
}


def column(name, kind, filled, distinct, low=None, high=None, mean=None) -> dict:
    return {"name": name, "type": kind, "filled": filled, "distinct": distinct, "min": low, "max": high, "mean": mean}


PLANETS_SUMMARY = {
    "rows": 8,
    "columns": [
        column("name", "text", 8, 8),
        column("type", "text", 8, 3),
        column("moons", "integer", 8, 7, 0, 146, 36.0),
        column("radius_km", "number", 8, 8, 2439.7, 69911.0, 24547.375),
    ],
}
GAPPY_SUMMARY = {
    "rows": 3,
    "columns": [
        column("id", "integer", 3, 3, 1, 3, 2.0),
        column("score", "number", 2, 2, 0.5, 2.0, 1.25),
        column("note", "empty", 0, 0),
    ],
}

# (tool, arguments, expected structuredContent or None, expected text)
RESULTS = [
    (
        "csv_to_markdown",
        {"csv": "a,b\n1,x|y\n"},
        None,
        "| a | b |\n| :--- | :--- |\n| 1 | x\\|y |",
    ),
    (
        "csv_to_markdown",
        {"csv": "name;moons\nEarth;1\nMars;2\n", "align": "right", "delimiter": ";"},
        None,
        "| name | moons |\n| ---: | ---: |\n| Earth | 1 |\n| Mars | 2 |",
    ),
    ("summarize_csv", {"csv": PLANETS}, PLANETS_SUMMARY, None),
    ("summarize_csv", {"csv": "id,score,note\n1,0.5,\n2,,\n3,2,\n"}, GAPPY_SUMMARY, None),
    (
        "query_csv",
        {
            "csv": PLANETS,
            "columns": ["name", "moons"],
            "where": [{"column": "type", "op": "contains", "value": "GIANT"}],
            "sort_by": "moons",
            "descending": True,
            "limit": 2,
        },
        {"columns": ["name", "moons"], "rows": [["Saturn", "146"], ["Jupiter", "95"]], "matched": 4},
        None,
    ),
    (
        "query_csv",
        {"csv": ELEMENTS, "columns": ["symbol", "weight"], "where": [{"column": "number", "op": ">=", "value": "8"}]},
        {"columns": ["symbol", "weight"], "rows": [["O", "15.999"], ["F", "18.998"], ["Ne", "20.18"]], "matched": 3},
        None,
    ),
    (
        "query_csv",
        {"csv": ELEMENTS, "columns": ["name"], "sort_by": "name", "limit": 3},
        {"columns": ["name"], "rows": [["Beryllium"], ["Boron"], ["Carbon"]], "matched": 10},
        None,
    ),
]

# A Python exception in the tool → an isError result whose text is its message.
TOOL_ERRORS = [
    ("query_csv", {"csv": PLANETS, "sort_by": "size"}, 'unknown column "size"; the columns are: name, type, moons, radius_km'),
    ("csv_to_markdown", {"csv": "a,b\n1,2\n3\n"}, "row 3 has 1 fields, the header has 2"),
    ("summarize_csv", {"csv": "\n\n"}, "the CSV is empty: it needs a header row"),
]

# Arguments the schema (derived from the type hints) refuses: Warden answers
# isError before the component runs; the text names the argument at fault.
REFUSED = [
    ("query_csv", {"csv": PLANETS, "limit": 0}, "/limit"),
    ("query_csv", {"csv": PLANETS, "where": [{"column": "name", "op": "~", "value": "x"}]}, "/where"),
    ("csv_to_markdown", {"csv": "a\n1\n", "align": "justify"}, "align"),
    ("csv_to_markdown", {"csv": "a\n1\n", "delimiter": "::"}, "delimiter"),
    ("summarize_csv", {"csv": "a\n1\n", "header": True}, "header"),
    ("summarize_csv", {}, "csv"),
]

RESOURCES = [
    {
        "uri": "csv://samples",
        "name": "samples",
        "title": "Sample tables",
        "description": "The sample CSV tables this plugin carries, to try its tools on.",
        "mimeType": "application/json",
    }
]
TEMPLATES = [
    {
        "uriTemplate": "csv://samples/{name}",
        "name": "sample",
        "title": "A sample table",
        "description": "One sample table as CSV text.",
        "mimeType": "text/csv",
    }
]
SAMPLES_JSON = (
    '[{"name":"planets","uri":"csv://samples/planets","description":"The eight planets: type, known moons, mean radius.","rows":8},'
    '{"name":"elements","uri":"csv://samples/elements","description":"The first ten chemical elements: symbol, atomic number, standard atomic weight.","rows":10}]'
)
PROMPTS = [
    {
        "name": "analyze_csv",
        "title": "Analyze a sample table",
        "description": "Asks the model to analyze one of the sample tables.",
        "arguments": [
            {"name": "sample", "description": "The sample's name (see csv://samples).", "required": True},
            {"name": "goal", "description": "What the analysis looks for.", "required": False},
        ],
    }
]
PROMPT_OUTLIERS = {
    "description": "Asks the model to analyze one of the sample tables.",
    "messages": [
        {
            "role": "user",
            "content": {
                "type": "resource",
                "resource": {"uri": "csv://samples/planets", "mimeType": "text/csv", "text": PLANETS},
            },
        },
        {
            "role": "user",
            "content": {
                "type": "text",
                "text": "Find the rows whose values are far from the others, and say why. "
                "The tools summarize_csv and query_csv can help.",
            },
        },
    ],
}
COMPLETIONS = [
    (PromptReference(type="ref/prompt", name="analyze_csv"), "sample", "p", ["planets"]),
    (PromptReference(type="ref/prompt", name="analyze_csv"), "sample", "", ["planets", "elements"]),
    (PromptReference(type="ref/prompt", name="analyze_csv"), "goal", "o", ["overview", "outliers"]),
    (ResourceTemplateReference(type="ref/resource", uri="csv://samples/{name}"), "name", "e", ["elements"]),
    (ResourceTemplateReference(type="ref/resource", uri="csv://samples/{name}"), "name", "x", []),
]


CONFIRM_FORM = {
    "type": "object",
    "properties": {"confirm": {"type": "boolean", "title": "Confirm", "default": False}},
    "required": ["confirm"],
}
ROW_FORM = {
    "type": "object",
    "properties": {name: {"type": "string", "title": name} for name in ("name", "type", "moons", "radius_km")},
    "required": ["name", "type", "moons", "radius_km"],
}


async def check_interaction(checks: Checks, mode: str, client, answers: list, asked: list) -> None:
    """delete_rows and add_row, with the elicitation callback answering from `answers`
    (and recording what it was asked in `asked`)."""
    wire = {"legacy": "2025-11-25", "auto": "2026-07-28"}[mode]
    checks.equal(f"[{mode}] the wire the interaction runs on", client.protocol_version, wire)

    async def call(tool: str, arguments: dict, *queued) -> list:
        answers.extend(queued)
        result = await client.call_tool(tool, arguments)
        return [bool(result.is_error), texts(result)]

    for giant in ("gas giant", "ice giant"):
        checks.equal(
            f"[{mode}] delete_rows type={giant!r}, declined",
            await call("delete_rows", {"csv": PLANETS, "column": "type", "value": giant}, ("decline", None)),
            [False, ["Deleted nothing: the user did not confirm (declined, cancelled or left unchecked)."]],
        )
    checks.equal(
        f"[{mode}] delete_rows, accepted unchecked",
        await call("delete_rows", {"csv": PLANETS, "column": "type", "value": "gas giant"}, ("accept", {"confirm": False})),
        [False, ["Deleted nothing: the user did not confirm (declined, cancelled or left unchecked)."]],
    )
    after = await call("delete_rows", {"csv": PLANETS, "column": "type", "value": "gas giant"}, ("accept", {"confirm": True}))
    without_gas = "".join(line + "\n" for line in PLANETS.splitlines() if "gas giant" not in line)
    checks.equal(f"[{mode}] delete_rows, confirmed", after, [False, [without_gas]])
    # Nothing matches: nothing is asked.
    checks.equal(
        f"[{mode}] delete_rows, no match",
        await call("delete_rows", {"csv": PLANETS, "column": "name", "value": "Pluto"}),
        [False, ['No row has name = "Pluto": nothing to delete.']],
    )
    checks.equal(
        f"[{mode}] add_row, accepted",
        await call("add_row", {"csv": PLANETS}, ("accept", {"name": "Pluto", "type": "dwarf", "moons": "5", "radius_km": "1188.3"})),
        [False, [PLANETS + "Pluto,dwarf,5,1188.3\n"]],
    )
    checks.equal(
        f"[{mode}] add_row, declined",
        await call("add_row", {"csv": "a\n1\n"}, ("decline", None)),
        [False, ["Added no row: the user chose decline."]],
    )
    checks.equal(
        f"[{mode}] add_row, cancelled",
        await call("add_row", {"csv": "a\n1\n"}, ("cancel", None)),
        [False, ["Added no row: the user chose cancel."]],
    )
    one_column = {"type": "object", "properties": {"a": {"type": "string", "title": "a"}}, "required": ["a"]}
    checks.equal(f"[{mode}] what the elicitation callback was asked", asked, [
        ('Delete 2 of 8 rows where type = "gas giant"?', CONFIRM_FORM),
        ('Delete 2 of 8 rows where type = "ice giant"?', CONFIRM_FORM),
        ('Delete 2 of 8 rows where type = "gas giant"?', CONFIRM_FORM),
        ('Delete 2 of 8 rows where type = "gas giant"?', CONFIRM_FORM),
        ("The new row's values (4 columns)", ROW_FORM),
        ("The new row's values (1 columns)", one_column),
        ("The new row's values (1 columns)", one_column),
    ])
    checks.equal(f"[{mode}] every queued answer was used", answers, [])


# describe_columns: what the plugin asks the client's model (sampling/createMessage, as the
# client's sampling callback receives it, without `_meta`) and what the model answers.
DESCRIBE_SYSTEM = 'You describe data tables to an analyst: one short line per column, "name: what it holds", in the table\'s order.'
DESCRIPTIONS = {
    "planets": "name: the planet's name\ntype: terrestrial, gas giant or ice giant\nmoons: known moons\nradius_km: mean radius in km",
    "scores": "player: who played\nscore: their points",
}


def describe_request(rows: int, shown: str, columns: int) -> dict:
    return {
        "messages": [
            {
                "role": "user",
                "content": {
                    "type": "text",
                    "text": f"What does each column of this CSV table hold? It has {rows} rows; "
                    f"the header and the first {shown.count(chr(10)) - 1} follow.\n\n{shown}",
                },
            }
        ],
        "systemPrompt": DESCRIBE_SYSTEM,
        "maxTokens": 60 * columns,
        "temperature": 0.0,
    }


# find_csv_folders: the roots the client's list-roots callback answers, and which of them
# the plugin keeps.
ROOTS = [
    ("file:///home/ada/projects/survey-data", "Survey"),
    ("file:///home/ada/src/warden", "Warden source"),
    ("file:///home/ada/exports/planets.csv", None),
    ("file:///srv/shared", "Quarterly tables"),
    ("file:///home/ada/notes", None),
]
CSV_FOLDERS = {
    "folders": [
        {"uri": "file:///home/ada/projects/survey-data", "name": "Survey"},
        {"uri": "file:///home/ada/exports/planets.csv", "name": None},
        {"uri": "file:///srv/shared", "name": "Quarterly tables"},
    ],
    "others": 2,
}


async def check_sampling_and_roots(checks: Checks, mode: str, client, sampled: list, listed_roots: list) -> None:
    """describe_columns (sampling) and find_csv_folders (roots): the exact request the
    client's callbacks received and the exact result."""
    result = await client.call_tool("describe_columns", {"csv": PLANETS})
    checks.equal(
        f"[{mode}] describe_columns planets",
        [bool(result.is_error), texts(result)],
        [False, [DESCRIPTIONS["planets"] + "\n\n(described by csv-describer-1)"]],
    )
    result = await client.call_tool("describe_columns", {"csv": "player;score\nAda;7\nGrace;9\n", "delimiter": ";"})
    checks.equal(
        f"[{mode}] describe_columns scores (delimiter ;)",
        [bool(result.is_error), texts(result)],
        [False, [DESCRIPTIONS["scores"] + "\n\n(described by csv-describer-1)"]],
    )
    planets_head = "".join(line + "\n" for line in PLANETS.splitlines()[:6])
    checks.equal(f"[{mode}] what the sampling callback was asked", sampled, [
        describe_request(8, planets_head, 4),
        describe_request(2, "player;score\nAda;7\nGrace;9\n", 2),
    ])
    result = await client.call_tool("find_csv_folders", {})
    checks.equal(f"[{mode}] find_csv_folders isError", result.is_error, False)
    checks.equal(f"[{mode}] find_csv_folders structuredContent", result.structured_content, CSV_FOLDERS)
    checks.equal(
        f"[{mode}] find_csv_folders text",
        texts(result),
        [json.dumps(CSV_FOLDERS, separators=(",", ":"))],
    )
    checks.equal(f"[{mode}] the list-roots callback was asked once", listed_roots, [mode])


async def session(checks: Checks, server: StdioServerParameters, mode: str, latencies: Latencies) -> float:
    """Runs every check on one connection; returns the seconds from spawning Warden to its tools/list answer."""
    logged: list[dict] = []
    answers: list = []  # (action, content) the elicitation callback answers next
    asked: list = []  # (message, requested schema) it was asked

    async def on_log(params) -> None:
        logged.append({"level": params.level, "logger": params.logger, "data": params.data})

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
        prompt = params.messages[0].content.text
        table = "planets" if "name,type,moons,radius_km" in prompt else "scores"
        return types.CreateMessageResult(
            role="assistant",
            content=types.TextContent(type="text", text=DESCRIPTIONS[table] + "\n"),
            model="csv-describer-1",
            stop_reason="endTurn",
        )

    async def on_list_roots(context):
        listed_roots.append(mode)
        return types.ListRootsResult(roots=[types.Root(uri=uri, name=name) for uri, name in ROOTS])

    started = time.perf_counter()
    async with Client(
        server,
        mode=mode,
        logging_callback=on_log,
        log_level="info",
        elicitation_callback=on_elicit,
        sampling_callback=on_sample,
        list_roots_callback=on_list_roots,
    ) as client:
        listed = await client.list_tools()
        load = time.perf_counter() - started
        if mode == "legacy":
            await client.set_logging_level("info")
        tools = {tool.name: tool for tool in listed.tools}
        checks.equal(f"[{mode}] tools/list names", sorted(tools), sorted(TOOLS))
        for name, want in TOOLS.items():
            if name not in tools:
                continue
            tool = tools[name]
            checks.equal(f"[{mode}] title of {name}", tool.title, want["title"])
            checks.equal(f"[{mode}] description of {name}", tool.description, want["description"])
            checks.equal(f"[{mode}] inputSchema of {name}", tool.input_schema, want["inputSchema"])
            checks.equal(f"[{mode}] outputSchema of {name}", tool.output_schema, want["outputSchema"])
            checks.equal(f"[{mode}] annotations of {name}", dump(tool.annotations), SERVED_ANNOTATIONS)

        call = timed_calls(client, latencies)

        for name, arguments, structured, text in RESULTS:
            what = f"[{mode}] {name} {json.dumps(arguments, ensure_ascii=False)[:80]}"
            try:
                result = await call(name, arguments)
            except Exception as error:  # e.g. structuredContent not matching outputSchema
                checks.failed.append(f"{what}: raised {type(error).__name__}: {error}")
                continue
            checks.equal(f"{what} isError", result.is_error, False)
            checks.equal(f"{what} structuredContent", result.structured_content, structured)
            got = texts(result)
            if text is not None:
                checks.equal(f"{what} text", got, [text])
            else:
                # The text beside structured content is its compact JSON.
                checks.equal(
                    f"{what} text",
                    got,
                    [json.dumps(structured, ensure_ascii=False, separators=(",", ":"))],
                )
                if len(got) == 1:
                    checks.equal(f"{what} text as JSON", json.loads(got[0]), structured)

        await check_tool_errors(checks, mode, call, TOOL_ERRORS, width=60, no_structured=True)
        await check_refused(checks, mode, call, REFUSED, width=60, printed=70)

        # host.progress from summarize_csv: one notification per column, before the result.
        reported: list[list] = []

        async def on_progress(done: float, total, message) -> None:
            reported.append([done, total, message])

        result = await client.call_tool("summarize_csv", {"csv": PLANETS}, progress_callback=on_progress)
        checks.equal(f"[{mode}] summarize_csv with a progress token", result.structured_content, PLANETS_SUMMARY)
        checks.equal(
            f"[{mode}] host.progress from summarize_csv",
            reported,
            [[1, 4, "column name"], [2, 4, "column type"], [3, 4, "column moons"], [4, 4, "column radius_km"]],
        )

        # host.log from query_csv (the first query above matched 4 of 8 rows).
        checks.equal(
            f"[{mode}] host.log from query_csv",
            [m for m in logged if "4 of 8" in str(m["data"])],
            [{"level": "info", "logger": "csvtools", "data": "query_csv: 4 of 8 rows matched"}],
        )

        resources = await client.list_resources()
        checks.equal(f"[{mode}] resources/list", [dump(r) for r in resources.resources], RESOURCES)
        templates = await client.list_resource_templates()
        checks.equal(f"[{mode}] resources/templates/list", [dump(t) for t in templates.resource_templates], TEMPLATES)
        read = await client.read_resource("csv://samples")
        checks.equal(
            f"[{mode}] resources/read csv://samples",
            [dump(c) for c in read.contents],
            [{"uri": "csv://samples", "mimeType": "application/json", "text": SAMPLES_JSON}],
        )
        read = await client.read_resource("csv://samples/elements")
        checks.equal(
            f"[{mode}] resources/read csv://samples/elements",
            [dump(c) for c in read.contents],
            [{"uri": "csv://samples/elements", "mimeType": "text/csv", "text": ELEMENTS}],
        )
        try:
            read = await client.read_resource("csv://samples/pluto")
            checks.failed.append(f"[{mode}] resources/read csv://samples/pluto: got {dump(read)}, want an error")
        except MCPError as error:
            # Warden's answer to a URI nothing serves (README: unknown URI → -32602 with data.uri).
            checks.equal(f"[{mode}] resources/read csv://samples/pluto code", error.code, -32602)
            checks.equal(
                f"[{mode}] resources/read csv://samples/pluto message",
                error.message,
                'no resource `csv://samples/pluto`: no sample "pluto"; the samples are: planets, elements',
            )

        prompts = await client.list_prompts()
        checks.equal(f"[{mode}] prompts/list", [dump(p) for p in prompts.prompts], PROMPTS)
        got = await client.get_prompt("analyze_csv", {"sample": "planets", "goal": "outliers"})
        checks.equal(f"[{mode}] prompts/get analyze_csv", dump(got), PROMPT_OUTLIERS)
        got = await client.get_prompt("analyze_csv", {"sample": "elements"})
        checks.equal(
            f"[{mode}] prompts/get analyze_csv (default goal) text",
            dump(got)["messages"][1]["content"]["text"],
            "Give an overview of this table: what each column holds and what stands out. "
            "The tools summarize_csv and query_csv can help.",
        )
        for arguments, message in (
            ({"sample": "pluto"}, 'prompt `analyze_csv`: no sample "pluto"; the samples are: planets, elements'),
            ({"sample": "planets", "goal": "poetry"}, "prompt `analyze_csv`: goal: 'poetry' is not one of overview, outliers, cleanup"),
        ):
            try:
                got = await client.get_prompt("analyze_csv", arguments)
                checks.failed.append(f"[{mode}] prompts/get {arguments}: got {dump(got)}, want an error")
            except MCPError as error:
                checks.equal(f"[{mode}] prompts/get {arguments} code", error.code, -32602)
                checks.equal(f"[{mode}] prompts/get {arguments} message", error.message, message)

        for ref, argument, value, want in COMPLETIONS:
            result = await client.complete(ref, {"name": argument, "value": value})
            checks.equal(f"[{mode}] complete {dump(ref)} {argument}={value!r}", result.completion.values, want)

        await check_interaction(checks, mode, client, answers, asked)
        await check_sampling_and_roots(checks, mode, client, sampled, listed_roots)
    return load


# A table big enough that summarize_csv outlives the 100 ms after which Warden makes a
# call a task (about a second of Python in the sandbox on a shared 2-vCPU VM): 40 000
# rows, 0.85 MB.
BIG_ROWS = 40_000
BIG_CSV = "id,score,group,label\n" + "".join(
    f"{i},{(i % 400) * 0.25},{i % 13},item-{i % 97}\n" for i in range(1, BIG_ROWS + 1)
)
BIG_SUMMARY = {
    "rows": BIG_ROWS,
    "columns": [
        column("id", "integer", BIG_ROWS, BIG_ROWS, 1, BIG_ROWS, (BIG_ROWS + 1) / 2),
        column("score", "number", BIG_ROWS, 400, 0.0, 99.75, 49.875),
        column("group", "integer", BIG_ROWS, 13, 0, 12, sum(i % 13 for i in range(1, BIG_ROWS + 1)) / BIG_ROWS),
        column("label", "text", BIG_ROWS, 97),
    ],
}


async def main() -> None:
    warden, plugins, cache = sys.argv[1:4]
    url = sys.argv[4] if len(sys.argv) > 4 else None
    server = serve_component(warden, plugins, cache)
    checks = Checks()
    await cold_then_warm(checks, server, session)
    if url:
        print(f"== summarize_csv as an MCP task over HTTP ({url}): {len(BIG_CSV)} bytes of CSV")
        try:
            run_as_task(
                checks, url, "summarize_csv", {"csv": BIG_CSV}, BIG_SUMMARY,
                json.dumps(BIG_SUMMARY, separators=(",", ":")),
                messages={f"column {c['name']}" for c in BIG_SUMMARY["columns"]},
            )
        except Exception as error:
            checks.failed.append(f"[task summarize_csv] raised {type(error).__name__}: {error}")
    sys.exit(checks.summary("python SDK plugin"))


if __name__ == "__main__":
    asyncio.run(main())
