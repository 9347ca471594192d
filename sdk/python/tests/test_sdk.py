"""Unit tests of warden_plugin in plain CPython (no component, no host): type hints →
JSON Schema, JSON ↔ Python values, docstrings, tool results and errors, resources,
templates, prompts and completions. Plain asserts; run with

    python sdk/python/tests/test_sdk.py      (or pytest, which finds the test_ functions)

Exits non-zero on the first mismatch, printing what differed.
"""

import datetime
import enum
import os
import sys
from dataclasses import dataclass, field
from typing import Annotated, Any, Dict, List, Literal, Optional, Sequence, Set, Tuple, TypedDict, Union

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

try:
    from typing import NotRequired  # Python 3.11+
except ImportError:  # pragma: no cover
    NotRequired = None

from warden_plugin import (  # noqa: E402
    Context,
    EmbeddedResource,
    Failed,
    Field,
    Image,
    InvalidArguments,
    NotFound,
    Plugin,
    PromptReference,
    ResourceTemplateReference,
    SchemaError,
    ToolAnnotations,
    ToolResult,
    UserMessage,
    AssistantMessage,
)
from warden_plugin.schema import from_json, from_text, schema_of, to_json  # noqa: E402


def eq(got: Any, want: Any, what: str = "") -> None:
    if got != want or type(got) is not type(want):
        raise AssertionError(f"{what}\n  got  {got!r}\n  want {want!r}")


def raises(kind: type, fn, text: Optional[str] = None) -> None:
    try:
        fn()
    except kind as error:
        if text is not None:
            eq(str(error), text, f"message of {kind.__name__}")
        return
    raise AssertionError(f"expected {kind.__name__}")


class Colour(enum.Enum):
    RED = "red"
    GREEN = "green"


class Level(enum.IntEnum):
    LOW = 1
    HIGH = 2


@dataclass
class Point:
    """A point in the plane."""

    x: float
    y: float = 0.0
    label: Optional[str] = field(default=None, metadata={"description": "What the point is."})


@dataclass
class Shape:
    points: List[Point]
    colour: Colour = Colour.RED


class Movie(TypedDict):
    title: str
    year: int


class Partial(TypedDict, total=False):
    note: str


if NotRequired is not None:

    class Mixed(TypedDict):
        id: int
        tag: NotRequired[str]


def test_scalars() -> None:
    eq(schema_of(str), {"type": "string"})
    eq(schema_of(int), {"type": "integer"})
    eq(schema_of(float), {"type": "number"})
    eq(schema_of(bool), {"type": "boolean"})
    eq(schema_of(type(None)), {"type": "null"})
    eq(schema_of(None), {"type": "null"})
    eq(schema_of(Any), {})
    eq(schema_of(bytes), {"type": "string", "contentEncoding": "base64"})
    eq(schema_of(datetime.date), {"type": "string", "format": "date"})
    eq(schema_of(datetime.datetime), {"type": "string", "format": "date-time"})


def test_containers() -> None:
    eq(schema_of(List[int]), {"type": "array", "items": {"type": "integer"}})
    eq(schema_of(list[str]), {"type": "array", "items": {"type": "string"}})
    eq(schema_of(list), {"type": "array"})
    eq(schema_of(Sequence[float]), {"type": "array", "items": {"type": "number"}})
    eq(schema_of(Set[str]), {"type": "array", "items": {"type": "string"}, "uniqueItems": True})
    eq(
        schema_of(Tuple[int, str]),
        {"type": "array", "prefixItems": [{"type": "integer"}, {"type": "string"}], "minItems": 2, "maxItems": 2},
    )
    eq(schema_of(Tuple[int, ...]), {"type": "array", "items": {"type": "integer"}})
    eq(schema_of(Dict[str, int]), {"type": "object", "additionalProperties": {"type": "integer"}})
    eq(schema_of(dict), {"type": "object"})
    raises(SchemaError, lambda: schema_of(Dict[int, int]))


def test_unions_literals_enums() -> None:
    eq(schema_of(Optional[int]), {"anyOf": [{"type": "integer"}, {"type": "null"}]})
    eq(schema_of(Union[int, str]), {"anyOf": [{"type": "integer"}, {"type": "string"}]})
    eq(schema_of(int | None), {"anyOf": [{"type": "integer"}, {"type": "null"}]})
    eq(schema_of(Literal["a", "b"]), {"type": "string", "enum": ["a", "b"]})
    eq(schema_of(Literal[1, 2]), {"type": "integer", "enum": [1, 2]})
    eq(schema_of(Literal["a", 1]), {"enum": ["a", 1]})
    eq(schema_of(Colour), {"type": "string", "enum": ["red", "green"]})
    eq(schema_of(Level), {"type": "integer", "enum": [1, 2]})


def test_objects() -> None:
    point = {
        "type": "object",
        "properties": {
            "x": {"type": "number"},
            "y": {"type": "number", "default": 0.0},
            "label": {
                "anyOf": [{"type": "string"}, {"type": "null"}],
                "description": "What the point is.",
                "default": None,
            },
        },
        "required": ["x"],
        "additionalProperties": False,
        "description": "A point in the plane.",
    }
    eq(schema_of(Point), point)
    eq(
        schema_of(Shape),
        {
            "type": "object",
            "properties": {
                "points": {"type": "array", "items": point},
                "colour": {"type": "string", "enum": ["red", "green"], "default": "red"},
            },
            "required": ["points"],
            "additionalProperties": False,
        },
    )
    eq(
        schema_of(Movie),
        {
            "type": "object",
            "properties": {"title": {"type": "string"}, "year": {"type": "integer"}},
            "required": ["title", "year"],
            "additionalProperties": False,
        },
    )
    eq(
        schema_of(Partial),
        {"type": "object", "properties": {"note": {"type": "string"}}, "additionalProperties": False},
    )
    if NotRequired is None:
        return
    eq(
        schema_of(Mixed),
        {
            "type": "object",
            "properties": {"id": {"type": "integer"}, "tag": {"type": "string"}},
            "required": ["id"],
            "additionalProperties": False,
        },
    )


@dataclass
class Node:
    value: int
    children: List["Node"]


def test_annotated_and_recursion() -> None:
    eq(
        schema_of(Annotated[int, Field("How many.", ge=1, le=10)]),
        {"type": "integer", "description": "How many.", "minimum": 1, "maximum": 10},
    )
    eq(schema_of(Annotated[str, "A name."]), {"type": "string", "description": "A name."})
    eq(
        schema_of(Annotated[str, Field(min_length=1, max_length=3, pattern="^[a-z]+$", schema={"examples": ["ab"]})]),
        {"type": "string", "minLength": 1, "maxLength": 3, "pattern": "^[a-z]+$", "examples": ["ab"]},
    )
    raises(SchemaError, lambda: schema_of(Node), "Node refers to itself: recursive types have no schema here")
    raises(SchemaError, lambda: schema_of(complex), "no JSON Schema for the type complex")


def test_values() -> None:
    eq(from_json(float, 3), 3.0)
    eq(from_json(int, 3.0), 3)
    eq(from_json(Colour, "green"), Colour.GREEN)
    eq(from_json(Shape, {"points": [{"x": 1, "label": "a"}]}), Shape([Point(1.0, 0.0, "a")]))
    eq(from_json(Optional[Point], None), None)
    eq(from_json(Tuple[int, str], [1, "a"]), (1, "a"))
    eq(from_json(Set[str], ["a", "b"]), {"a", "b"})
    eq(from_json(Movie, {"title": "M", "year": 1931}), {"title": "M", "year": 1931})
    eq(from_json(datetime.date, "2026-12-01"), datetime.date(2026, 12, 1))
    eq(from_json(bytes, "aGk="), b"hi")
    eq(from_json(Annotated[List[Level], Field()], [1, 2]), [Level.LOW, Level.HIGH])
    eq(to_json(Shape([Point(1.5)], Colour.GREEN)), {"points": [{"x": 1.5, "y": 0.0, "label": None}], "colour": "green"})
    eq(to_json((1, b"hi", {"b", "a"}, datetime.date(2026, 1, 2))), [1, "aGk=", ["a", "b"], "2026-01-02"])
    eq(from_text(int, "42", "n"), 42)
    eq(from_text(Optional[bool], "true", "b"), True)
    eq(from_text(Literal["x", "y"], "y", "c"), "y")
    eq(from_text(Level, "2", "l"), Level.HIGH)
    eq(from_text(List[int], "[1, 2]", "l"), [1, 2])
    raises(ValueError, lambda: from_text(int, "ten", "n"), "n: 'ten' is not an integer")
    raises(ValueError, lambda: from_text(Literal["x", "y"], "z", "c"), "c: 'z' is not one of x, y")
    raises(ValueError, lambda: to_json(float("nan")), "nan cannot be written as JSON")


# --------------------------------------------------------------------------- Plugin

app = Plugin("test")


@app.tool(title="Add", annotations=ToolAnnotations(read_only_hint=True), idempotent_hint=True)
def add(a: int, b: int = 2) -> int:
    """Adds two integers.

    Args:
        a: The first.
        b: The second,
            two unless given.

    Returns:
        The sum.
    """
    return a + b


@app.tool(name="greet")
def greet_someone(name: str, ctx: Context) -> str:
    """Greets someone."""
    ctx.debug("greeting")
    return f"Hello, {name}!"


@app.tool()
def centre(points: List[Point]) -> Point:
    """The centre of some points."""
    if not points:
        raise ValueError("no points")
    return Point(sum(p.x for p in points) / len(points), sum(p.y for p in points) / len(points))


@app.tool
def movie(title: str) -> Movie:
    """A movie."""
    if title == "?":
        raise InvalidArguments("which movie?")
    if title == "!":
        raise Failed("the archive is closed")
    return {"title": title, "year": 1931}


@app.tool(structured_output=False)
def picture() -> list:
    """A picture and a caption."""
    return [Image(b"\x89PNG", "image/png"), "a caption"]


@app.tool()
def custom() -> ToolResult:
    """Everything by hand."""
    return ToolResult(["partly"], {"done": 1}, True)


@app.tool()
async def later(n: int) -> List[int]:
    """Counts to n, asynchronously."""
    return list(range(n))


@app.resource("test://readme", mime_type="text/markdown")
def readme() -> str:
    """The readme."""
    return "# Test"


@app.resource("test://data")
def data() -> Dict[str, int]:
    return {"a": 1}


@app.resource("test://items/{kind}/{id}")
def item(kind: Colour, id: int) -> bytes:
    """One item."""
    return f"{kind.value}:{id}".encode()


@app.resource("test://files/{+path}")
def file(path: str) -> List[EmbeddedResource]:
    return [EmbeddedResource(f"test://files/{path}", text=path, mime_type="text/plain")]


@app.prompt()
def review(code: str, strict: bool = False, level: Level = Level.LOW) -> list:
    """Reviews code."""
    return [UserMessage(f"Review{' strictly' if strict else ''} at {level.name}:\n{code}"), AssistantMessage("Sure.")]


@app.prompt(name="plain", title="Plain")
def plain_prompt() -> str:
    return "Just this."


def test_declarations() -> None:
    tools = {t["name"]: t for t in app.list_tools()}
    eq(list(tools), ["add", "greet", "centre", "movie", "picture", "custom", "later"])
    eq(
        tools["add"],
        {
            "name": "add",
            "title": "Add",
            "description": "Adds two integers.\n\nReturns:\n    The sum.",
            "inputSchema": {
                "type": "object",
                "properties": {
                    "a": {"type": "integer", "description": "The first."},
                    "b": {"type": "integer", "description": "The second, two unless given.", "default": 2},
                },
                "required": ["a"],
                "additionalProperties": False,
            },
            "outputSchema": {
                "type": "object",
                "properties": {"result": {"type": "integer"}},
                "required": ["result"],
                "additionalProperties": False,
            },
            "annotations": {"readOnlyHint": True, "idempotentHint": True},
        },
    )
    eq(
        tools["greet"],
        {
            "name": "greet",
            "description": "Greets someone.",
            "inputSchema": {
                "type": "object",
                "properties": {"name": {"type": "string"}},
                "required": ["name"],
                "additionalProperties": False,
            },
        },
    )
    eq(tools["centre"]["outputSchema"], schema_of(Point))
    eq(tools["movie"]["outputSchema"], schema_of(Movie))
    eq("outputSchema" in tools["picture"], False)
    eq("outputSchema" in tools["custom"], False)
    eq(tools["later"]["outputSchema"]["properties"]["result"], {"type": "array", "items": {"type": "integer"}})
    eq(
        app.list_resources(),
        [
            {"uri": "test://readme", "name": "readme", "description": "The readme.", "mimeType": "text/markdown"},
            {"uri": "test://data", "name": "data", "mimeType": "application/json"},
        ],
    )
    eq(
        app.list_resource_templates(),
        [
            {
                "uriTemplate": "test://items/{kind}/{id}",
                "name": "item",
                "description": "One item.",
                "mimeType": "application/octet-stream",
            },
            {"uriTemplate": "test://files/{+path}", "name": "file"},
        ],
    )
    eq(
        app.list_prompts(),
        [
            {
                "name": "review",
                "description": "Reviews code.",
                "arguments": [
                    {"name": "code", "required": True},
                    {"name": "strict", "required": False},
                    {"name": "level", "required": False},
                ],
            },
            {"name": "plain", "title": "Plain", "arguments": []},
        ],
    )


def test_calls() -> None:
    eq(app.call_tool("add", {"a": 40}), {"content": [{"type": "text", "text": "42"}], "structuredContent": {"result": 42}, "isError": False})
    eq(app.call_tool("greet", {"name": "Ada"}), {"content": [{"type": "text", "text": "Hello, Ada!"}], "isError": False})
    eq(
        app.call_tool("centre", {"points": [{"x": 0, "y": 0}, {"x": 2, "y": 1}]}),
        {
            "content": [{"type": "text", "text": '{"x":1.0,"y":0.5,"label":null}'}],
            "structuredContent": {"x": 1.0, "y": 0.5, "label": None},
            "isError": False,
        },
    )
    eq(app.call_tool("centre", {"points": []}), {"content": [{"type": "text", "text": "no points"}], "isError": True})
    raises(InvalidArguments, lambda: app.call_tool("movie", {"title": "?"}), "which movie?")
    raises(Failed, lambda: app.call_tool("movie", {"title": "!"}), "the archive is closed")
    raises(NotFound, lambda: app.call_tool("nothing", {}), "tool `nothing`")
    raises(InvalidArguments, lambda: app.call_tool("add", {"a": "x"}), "a: expected an integer")
    eq(
        app.call_tool("picture", {}),
        {
            "content": [{"type": "image", "data": "iVBORw==", "mimeType": "image/png"}, {"type": "text", "text": "a caption"}],
            "isError": False,
        },
    )
    eq(
        app.call_tool("custom", {}),
        {"content": [{"type": "text", "text": "partly"}], "structuredContent": {"done": 1}, "isError": True},
    )
    eq(app.call_tool("later", {"n": 3})["structuredContent"], {"result": [0, 1, 2]})


def test_resources_prompts_completions() -> None:
    eq(app.read_resource("test://readme"), [{"uri": "test://readme", "mimeType": "text/markdown", "text": "# Test"}])
    eq(app.read_resource("test://data"), [{"uri": "test://data", "mimeType": "application/json", "text": '{"a":1}'}])
    eq(
        app.read_resource("test://items/green/7"),
        [{"uri": "test://items/green/7", "mimeType": "application/octet-stream", "blob": "Z3JlZW46Nw=="}],
    )
    raises(InvalidArguments, lambda: app.read_resource("test://items/blue/7"), "kind: 'blue' is not one of red, green")
    raises(NotFound, lambda: app.read_resource("test://items/green"), "test://items/green")
    eq(
        app.read_resource("test://files/a%20b/%C3%A9.txt"),
        [{"uri": "test://files/a b/é.txt", "mimeType": "text/plain", "text": "a b/é.txt"}],
    )
    eq(
        app.get_prompt("review", {"code": "x = 1", "strict": "true", "level": "2"}),
        {
            "description": "Reviews code.",
            "messages": [
                {"role": "user", "content": {"type": "text", "text": "Review strictly at HIGH:\nx = 1"}},
                {"role": "assistant", "content": {"type": "text", "text": "Sure."}},
            ],
        },
    )
    eq(app.get_prompt("plain", {}), {"messages": [{"role": "user", "content": {"type": "text", "text": "Just this."}}]})
    raises(InvalidArguments, lambda: app.get_prompt("review", {}), "missing argument 'code'")
    eq(app.complete(PromptReference("review"), "strict", ""), ["false", "true"])
    eq(app.complete(PromptReference("review"), "level", "2"), ["2"])
    eq(app.complete(ResourceTemplateReference("test://items/{kind}/{id}"), "kind", "g"), ["green"])
    eq(app.complete(PromptReference("review"), "code", ""), [])


def test_registration_errors() -> None:
    other = Plugin("other")
    raises(SchemaError, lambda: other.tool()(lambda: None), "tool '<lambda>': a tool name is 1 to 64 characters from A-Z a-z 0-9 _ -")

    def undocumented(x: int) -> int:
        return x

    raises(SchemaError, lambda: other.tool()(undocumented), "tool 'undocumented': needs a description (a docstring, or description=...)")

    def varargs(*xs: int) -> int:
        """Sums."""
        return sum(xs)

    raises(SchemaError, lambda: other.tool()(varargs), "tool 'varargs': *xs has no schema; name every parameter")

    def wrong(name: str) -> str:
        return name

    raises(SchemaError, lambda: other.resource("x://{id}")(wrong), "resource 'x://{id}': {id} is not a parameter of wrong")


def main() -> None:
    tests = [(name, fn) for name, fn in globals().items() if name.startswith("test_") and callable(fn)]
    for name, fn in tests:
        try:
            fn()
        except AssertionError as error:
            print(f"FAILED {name}: {error}")
            sys.exit(1)
        print(f"ok {name}")
    print(f"warden_plugin unit tests: {len(tests)} passed")


if __name__ == "__main__":
    main()
