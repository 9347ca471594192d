"""Calls a plain component written in Python (tests/interop/python-component, built
with componentize-py) through `warden serve` over stdio, with the official Python MCP
SDK in both protocol eras, and checks exact values: the tools listed, their
descriptions and schemas, results, errors and arguments refused.

usage: python python_component.py WARDEN_BINARY PLUGINS_DIR CACHE_DIR

CACHE_DIR should be empty: the first connection then measures a cold load (the
component compiled), the second a warm one (from Warden's compiled-code cache).
Prints what it checked and the figures; exits 1 if any check failed.
"""

import asyncio
import json
import sys
import time

from mcp import Client, StdioServerParameters

from checks import Checks, texts
from component_driver import Latencies, check_refused, check_tool_errors, cold_then_warm, serve_component, timed_calls

# Not `exports#init`: componentize-py's own hook, which every component it builds
# exports (it pre-initializes the interpreter at build time); Warden skips it.
TOOLS = ["check-unit", "convert", "format-duration", "length_convert", "list-units", "parse-quantity"]

# Every function is described by its doc comment in wit/units.wit (componentize-py
# writes no docs; python_component.sh adds them with `warden embed-docs`): world-level
# functions from the `package-docs` section, and `length_convert`, of an interface of
# the named package example:units, from Warden's `warden:package-docs` section.
DESCRIPTIONS = {
    "parse-quantity": 'Reads a quantity written as a number and a unit symbol, e.g. "3.5 km" or "-40 °F".',
    "convert": 'Converts a value between two units of the same dimension, given by symbol (e.g. "lb" to "kg", "°F" to "°C").',
    "list-units": "The symbols of the units of one dimension, smallest first.",
    "format-duration": 'Writes a number of seconds as days, hours, minutes and seconds, e.g. 93784 as "1d 2h 3m 4s"; with max-parts, only that many of the largest parts.',
    "check-unit": "Succeeds if the unit symbol is known; otherwise the error lists the known symbols.",
    "length_convert": "Converts a length between two units, e.g. 1 mile is 1.609344 kilometres.",
}

# f64: a JSON number, or NaN and the infinities as strings.
F64 = {"anyOf": [{"type": "number"}, {"type": "string", "enum": ["NaN", "Infinity", "-Infinity"]}]}

INPUT_SCHEMAS = {
    "list-units": {
        "type": "object",
        "properties": {
            "dimension": {"type": "string", "enum": ["distance", "mass", "temperature", "duration"]},
        },
        "required": ["dimension"],
        "additionalProperties": False,
    },
    "format-duration": {
        "type": "object",
        "properties": {
            "seconds": {"type": "integer", "minimum": 0, "maximum": 18446744073709551615},
            "max-parts": {"anyOf": [{"type": "integer", "minimum": 0, "maximum": 4294967295}, {"type": "null"}]},
        },
        "required": ["seconds"],
        "additionalProperties": False,
    },
    "convert": {
        "type": "object",
        "properties": {
            "value": F64,
            "from-unit": {"type": "string"},
            "to-unit": {"type": "string"},
        },
        "required": ["value", "from-unit", "to-unit"],
        "additionalProperties": False,
    },
}

# None for a function that returns nothing (check-unit: result<_, string>).
OUTPUT_SCHEMAS = {
    "parse-quantity": {
        "type": "object",
        "properties": {
            "result": {
                "type": "object",
                "properties": {
                    "value": F64,
                    "unit": {"type": "string"},
                    "dimension": {"type": "string", "enum": ["distance", "mass", "temperature", "duration"]},
                },
                "required": ["value", "unit", "dimension"],
                "additionalProperties": False,
            },
        },
        "required": ["result"],
        "additionalProperties": False,
    },
    "list-units": {
        "type": "object",
        "properties": {"result": {"type": "array", "items": {"type": "string"}}},
        "required": ["result"],
        "additionalProperties": False,
    },
    "check-unit": None,
}

KNOWN = "mm, cm, in, ft, yd, m, km, mi, mg, g, oz, lb, kg, t, °C, °F, K, ms, s, min, h, d, wk"

# (tool, arguments, expected value of structuredContent["result"], expected text)
RESULTS = [
    ("parse-quantity", {"text": "3.5 km"}, {"value": 3.5, "unit": "km", "dimension": "distance"}, None),
    ("parse-quantity", {"text": "-40 °F"}, {"value": -40.0, "unit": "°F", "dimension": "temperature"}, None),
    ("convert", {"value": 1, "from-unit": "mi", "to-unit": "km"}, 1.609344, "1.609344"),
    ("convert", {"value": 10, "from-unit": "lb", "to-unit": "kg"}, 4.535923700000001, "4.535923700000001"),
    ("convert", {"value": 212, "from-unit": "°F", "to-unit": "K"}, 373.15, "373.15"),
    ("convert", {"value": 90.0, "from-unit": "min", "to-unit": "h"}, 1.5, "1.5"),
    ("convert", {"value": "Infinity", "from-unit": "°C", "to-unit": "°F"}, "Infinity", "Infinity"),
    ("convert", {"value": "-Infinity", "from-unit": "°C", "to-unit": "K"}, "-Infinity", "-Infinity"),
    ("convert", {"value": "NaN", "from-unit": "kg", "to-unit": "g"}, "NaN", "NaN"),
    ("list-units", {"dimension": "temperature"}, ["°C", "°F", "K"], '["°C","°F","K"]'),
    ("list-units", {"dimension": "mass"}, ["mg", "g", "oz", "lb", "kg", "t"], '["mg","g","oz","lb","kg","t"]'),
    ("format-duration", {"seconds": 93784}, "1d 2h 3m 4s", "1d 2h 3m 4s"),
    ("format-duration", {"seconds": 93784, "max-parts": 2}, "1d 2h", "1d 2h"),
    ("format-duration", {"seconds": 93784, "max-parts": None}, "1d 2h 3m 4s", "1d 2h 3m 4s"),
    ("format-duration", {"seconds": 0}, "0s", "0s"),
    ("format-duration", {"seconds": 18446744073709551615}, "213503982334601d 7h 15s", "213503982334601d 7h 15s"),
    ("length_convert", {"value": 1, "from-unit": "mile", "to-unit": "foot"}, 5280.0, None),
    ("length_convert", {"value": 3, "from-unit": "foot", "to-unit": "centimetre"}, 91.44000000000001, "91.44000000000001"),
]

# Errors the component returns (the err side of a top-level result): exact texts.
TOOL_ERRORS = [
    ("parse-quantity", {"text": "12"}, 'expected a number and a unit symbol, e.g. "3.5 km", got "12"'),
    ("parse-quantity", {"text": "2 furlong"}, 'unknown unit "furlong"'),
    ("convert", {"value": 1, "from-unit": "kg", "to-unit": "m"}, "cannot convert kg (mass) to m (distance)"),
    ("check-unit", {"symbol": "furlong"}, f'unknown unit "furlong"; known units: {KNOWN}'),
]

# Arguments that do not match the schema: refused by Warden before the component is
# called; the text must name the argument at fault.
REFUSED = [
    ("format-duration", {"seconds": "ten"}, "seconds"),
    ("format-duration", {"seconds": -1}, "seconds"),
    ("format-duration", {"seconds": 18446744073709551616}, "seconds"),
    ("format-duration", {"seconds": 1.5}, "seconds"),
    ("format-duration", {"seconds": 60, "max-parts": "two"}, "max-parts"),
    ("format-duration", {"max-parts": 2}, "seconds"),
    ("list-units", {"dimension": "volume"}, "dimension"),
    ("length_convert", {"value": 1, "from-unit": "furlong", "to-unit": "metre"}, "from-unit"),
    ("convert", {"value": [1], "from-unit": "kg", "to-unit": "g"}, "value"),
    ("check-unit", {"symbol": "kg", "unit": "kg"}, "unit"),
]


async def session(checks: Checks, server: StdioServerParameters, mode: str, latencies: Latencies) -> float:
    """Runs every check on one connection; returns the seconds from spawning Warden to its tools/list answer."""
    started = time.perf_counter()
    async with Client(server, mode=mode) as client:
        listed = await client.list_tools()
        load = time.perf_counter() - started
        tools = {tool.name: tool for tool in listed.tools}
        checks.equal(f"[{mode}] tools/list names", sorted(tools), TOOLS)
        for name, description in DESCRIPTIONS.items():
            if name in tools:
                checks.equal(f"[{mode}] description of {name}", tools[name].description, description)
        for name, schema in INPUT_SCHEMAS.items():
            if name in tools:
                checks.equal(f"[{mode}] inputSchema of {name}", tools[name].input_schema, schema)
        for name, schema in OUTPUT_SCHEMAS.items():
            if name in tools:
                checks.equal(f"[{mode}] outputSchema of {name}", tools[name].output_schema, schema)

        call = timed_calls(client, latencies)

        for name, arguments, value, text in RESULTS:
            what = f"[{mode}] {name} {json.dumps(arguments, ensure_ascii=False)}"
            try:
                result = await call(name, arguments)
            except Exception as error:  # e.g. structuredContent not matching outputSchema
                checks.failed.append(f"{what}: raised {type(error).__name__}: {error}")
                continue
            checks.equal(f"{what} isError", result.is_error, False)
            checks.equal(f"{what} structuredContent", result.structured_content, {"result": value})
            got = texts(result)
            if text is not None:
                checks.equal(f"{what} text", got, [text])
            elif len(got) == 1:
                checks.equal(f"{what} text as JSON", json.loads(got[0]), value)
            else:
                checks.failed.append(f"{what}: want one text content, got {got}")

        result = await call("check-unit", {"symbol": "kg"})
        checks.equal(f"[{mode}] check-unit kg isError", result.is_error, False)
        checks.equal(f"[{mode}] check-unit kg content", [c.model_dump() for c in result.content], [])
        checks.equal(f"[{mode}] check-unit kg structuredContent", result.structured_content, None)

        await check_tool_errors(checks, mode, call, TOOL_ERRORS)
        await check_refused(checks, mode, call, REFUSED)
    return load


async def main() -> None:
    warden, plugins, cache = sys.argv[1:4]
    server = serve_component(warden, plugins, cache)
    checks = Checks()
    await cold_then_warm(checks, server, session)
    sys.exit(checks.summary("python component"))


if __name__ == "__main__":
    asyncio.run(main())
