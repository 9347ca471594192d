"""Unit tests of warden_plugin in plain CPython (no component, no host): type hints →
JSON Schema, JSON ↔ Python values, docstrings, tool results and errors, resources,
templates, prompts and completions, task support (`task=`, `list_tool_execution`), and
interaction (Input: input-required rounds, answers replayed from the state, refusals). Plain asserts; run with

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
from warden_plugin import (  # noqa: E402
    ElicitAnswer,
    ElicitForm,
    Elicited,
    ElicitUrl,
    Input,
    InputAnswers,
    InputPending,
    InputRequired,
    ListRoots,
    Refused,
    Root,
    SamplingAnswer,
    SamplingRequest,
)
from warden_plugin.input import CONFIRM_SCHEMA, MAGIC  # noqa: E402
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


# -------------------------------------------------------------- task support

tasks = Plugin("tasks", _module_globals={})


@tasks.tool(task="optional", read_only_hint=True)
def crawl(url: str) -> str:
    """Crawls a site (takes a while)."""
    return f"crawled {url}"


@tasks.tool(name="export", task="required")
def export_all() -> str:
    """Exports everything."""
    return "exported"


@tasks.tool(task="forbidden")
def ping() -> str:
    """Answers at once."""
    return "pong"


@tasks.tool()
def undeclared() -> str:
    """Says nothing about tasks."""
    return "plain"


@tasks.tool
def bare() -> str:
    """Registered without parentheses."""
    return "bare"


tasks.add_tool(lambda: "late", name="late", description="Added by add_tool.", task="optional")


def test_task_support_declared_values_listed_exactly() -> None:
    eq(
        tasks.list_tool_execution(),
        [
            {"tool": "crawl", "taskSupport": "optional"},
            {"tool": "export", "taskSupport": "required"},
            {"tool": "ping", "taskSupport": "forbidden"},
            {"tool": "late", "taskSupport": "optional"},
        ],
    )
    # What the tools declare otherwise does not change, and they run as before.
    declared = {t["name"]: t for t in tasks.list_tools()}
    eq(list(declared), ["crawl", "export", "ping", "undeclared", "bare", "late"])
    eq(declared["crawl"]["annotations"], {"readOnlyHint": True})
    eq(any("execution" in t or "task" in t for t in declared.values()), False, "no task key in tools/list")
    eq(tasks.call_tool("crawl", {"url": "x"}), {"content": [{"type": "text", "text": "crawled x"}], "isError": False})
    eq(tasks.call_tool("export", {})["content"], [{"type": "text", "text": "exported"}])


def test_task_support_omitted_is_not_listed() -> None:
    listed = [entry["tool"] for entry in tasks.list_tool_execution()]
    eq("undeclared" in listed or "bare" in listed, False, "tools without task= are not listed")
    eq(app.list_tool_execution(), [], "a plugin whose tools declare nothing")
    eq(Plugin("empty", _module_globals={}).list_tool_execution(), [])


def test_task_support_bad_value_refused() -> None:
    other = Plugin("other", _module_globals={})

    def slow() -> str:
        """Slow."""
        return "done"

    allowed = "write 'forbidden', 'optional' or 'required', or leave task out (then the tool is forbidden to run as a task)"
    for bad in ("always", "Optional", "", True, 1):
        raises(
            SchemaError,
            lambda: other.tool(task=bad)(slow),
            f"tool 'slow': task={bad!r} is not a task support: {allowed}",
        )
    raises(
        SchemaError,
        lambda: other.tool(name="long_one", task="sometimes")(slow),
        f"tool 'long_one': task='sometimes' is not a task support: {allowed}",
    )
    raises(
        SchemaError,
        lambda: other.add_tool(slow, task="never"),
        f"tool 'slow': task='never' is not a task support: {allowed}",
    )
    # Refused at decoration, before anything was registered: the name is still free.
    eq(other.list_tools(), [])
    other.tool(task="required")(slow)
    eq(other.list_tool_execution(), [{"tool": "slow", "taskSupport": "required"}])


# --------------------------------------------------------------- interaction

ia = Plugin("interactive", _module_globals={})


@ia.tool(destructive_hint=True)
def drop(table: str, input: Input) -> str:
    """Drops a table, once the user confirms."""
    try:
        if not input.confirm("sure", f"Drop table {table}?"):
            return f"kept {table}"
    except Refused as refused:
        return f"kept {table}: could not ask ({refused.reason})"
    return f"dropped {table}"


@ia.tool()
def drop_unguarded(table: str, input: Input) -> str:
    """Drops a table, once the user confirms (a refusal is not caught)."""
    return f"dropped {table}" if input.confirm("sure", f"Drop table {table}?") else f"kept {table}"


@dataclass
class Person:
    """Who you are."""

    name: str
    age: int = 0
    role: Literal["dev", "ops"] = "dev"


@ia.tool()
def onboard(team: str, input: Input, ctx: Context) -> str:
    """Two rounds: a typed form, then a confirmation; the plugin's own state carried."""
    if input.first_round:
        input.state = b"team=" + team.encode()
    person = input.elicit("who", f"Who joins {team}?", Person)
    if not person.accepted:
        return f"nobody joins {team} ({person.action})"
    assert person.content is not None
    if not input.confirm("ok", f"Add {person.content.name} ({person.content.age}) to {team}?"):
        return "not added"
    return f"added {person.content.name}, {person.content.age}, {person.content.role} [{input.state.decode()}]"


@ia.tool()
def survey(input: Input) -> dict:
    """Two asks in one round: a free-form schema and the client's roots, together."""
    with input.together():
        answer = input.elicit("colour", "Favourite colour?", {"type": "object", "properties": {"colour": {"type": "string"}}})
        roots = input.roots("roots")
    return {"colour": answer.content, "roots": [r.uri for r in roots]}


@ia.tool()
def swallow(input: Input) -> str:
    """Catches everything, even the SDK's pending signal: still input-required."""
    try:
        input.confirm("ok", "Go?")
    except BaseException:
        return "swallowed"
    return "asked"


@ia.tool()
def muse(topic: str, input: Input) -> str:
    """Asks the client's model."""
    answer = input.sample("s", SamplingRequest(["Say something about " + topic], max_tokens=50, system_prompt="Be brief."))
    return f"{answer.model}: {answer.text}"


@ia.tool()
def visit(input: Input) -> str:
    """A URL elicitation."""
    return input.elicit_url("login", "Sign in", "https://login.example.com/x", "e1")


@ia.resource("secret://{name}")
def secret(name: str, input: Input) -> str:
    """A resource read behind a confirmation."""
    return f"secret {name}" if input.confirm("reveal", f"Reveal {name}?") else "hidden"


@ia.prompt()
def greet(input: Input) -> str:
    """A prompt that asks for a name first."""
    who = input.elicit("who", "Your name?", Person)
    return f"Greet {who.content.name if who.content else 'someone'}."


def accept(content: Any) -> ElicitAnswer:
    return ElicitAnswer("accept", content)


def test_interaction_declared_like_any_tool() -> None:
    tools = {t["name"]: t for t in ia.list_tools()}
    # The Input (and Context) parameters are not part of the schema.
    eq(tools["drop"]["inputSchema"], {"type": "object", "properties": {"table": {"type": "string"}}, "required": ["table"], "additionalProperties": False})
    eq(tools["onboard"]["inputSchema"]["properties"], {"team": {"type": "string"}})
    eq(tools["survey"]["inputSchema"], {"type": "object", "properties": {}, "additionalProperties": False})
    eq(tools["drop"]["annotations"], {"destructiveHint": True})


def test_interaction_confirm_asks_then_replays() -> None:
    first = ia.call_tool("drop", {"table": "users"})
    assert isinstance(first, InputRequired), first
    eq(first.requests, {"sure": ElicitForm("Drop table users?", CONFIRM_SCHEMA)})
    eq(CONFIRM_SCHEMA, {"type": "object", "properties": {"confirm": {"type": "boolean", "title": "Confirm", "default": False}}, "required": ["confirm"]})
    eq(first.state[:4], MAGIC)
    # The state holds the envelope (keys asked, answers so far) and no bytes of the plugin's.
    length = int.from_bytes(first.state[4:8], "little")
    eq(first.state[8 : 8 + length], b'{"asked":["sure"],"answers":[]}')
    eq(len(first.state), 8 + length)

    def again(answer: Any) -> Any:
        return ia.call_tool("drop", {"table": "users"}, input=InputAnswers({"sure": answer}, first.state))

    eq(again(accept({"confirm": True})), {"content": [{"type": "text", "text": "dropped users"}], "isError": False})
    eq(again(accept({"confirm": False})), {"content": [{"type": "text", "text": "kept users"}], "isError": False})
    eq(again(ElicitAnswer("decline")), {"content": [{"type": "text", "text": "kept users"}], "isError": False})
    eq(again(ElicitAnswer("cancel")), {"content": [{"type": "text", "text": "kept users"}], "isError": False})
    # A key the round did not ask for is ignored: the tool asks again.
    stray = ia.call_tool("drop", {"table": "users"}, input=InputAnswers({"other": accept({"confirm": True})}, first.state))
    assert isinstance(stray, InputRequired) and list(stray.requests) == ["sure"], stray


def test_interaction_refusals_surface() -> None:
    first = ia.call_tool("drop", {"table": "t"})
    assert isinstance(first, InputRequired)
    refused = InputAnswers({"sure": Refused("not granted")}, first.state)
    # Caught by the tool: its fallback.
    eq(ia.call_tool("drop", {"table": "t"}, input=refused), {"content": [{"type": "text", "text": "kept t: could not ask (not granted)"}], "isError": False})
    # Not caught: an isError result whose text says so.
    eq(ia.call_tool("drop_unguarded", {"table": "t"}, input=refused), {"content": [{"type": "text", "text": "refused: not granted"}], "isError": True})
    # An answer of another kind, or content that is not what was asked, is a refusal too.
    roots = InputAnswers({"sure": [Root("file:///w")]}, first.state)
    eq(ia.call_tool("drop_unguarded", {"table": "t"}, input=roots)["content"], [{"type": "text", "text": "refused: the answer under 'sure' is not an elicitation"}])
    bad = InputAnswers({"sure": accept({"confirm": "yes"})}, first.state)
    eq(ia.call_tool("drop_unguarded", {"table": "t"}, input=bad)["content"], [{"type": "text", "text": 'refused: the confirmation\'s content is not {"confirm": bool}: {"confirm":"yes"}'}])
    # Directly on an Input: a refusal raises Refused, with the reason.
    given = Input(InputAnswers({"x": Refused("over the limit")}))
    try:
        given.sample("x", "hi")
    except Refused as error:
        eq((error.reason, str(error)), ("over the limit", "refused: over the limit"))
    else:
        raise AssertionError("no Refused")
    raises(ValueError, lambda: Input().confirm("bad key!", "?"), "'bad key!' is not a valid key: 1 to 64 characters from A-Z a-z 0-9 _ -")


def test_interaction_two_rounds_and_state() -> None:
    args = {"team": "core"}
    first = ia.call_tool("onboard", args)
    assert isinstance(first, InputRequired)
    eq(list(first.requests), ["who"])
    form = first.requests["who"]
    assert isinstance(form, ElicitForm)
    eq(form.message, "Who joins core?")
    # A typed form: the dataclass's fields, with only the keywords MCP allows at the top.
    eq(
        form.requested_schema,
        {
            "type": "object",
            "properties": {
                "name": {"type": "string"},
                "age": {"type": "integer", "default": 0},
                "role": {"type": "string", "enum": ["dev", "ops"], "default": "dev"},
            },
            "required": ["name"],
            "description": "Who you are.",
        },
    )
    eq(first.state[-9:], b"team=core")  # the plugin's own bytes, after the SDK's envelope

    second = ia.call_tool("onboard", args, input=InputAnswers({"who": accept({"name": "Ada", "age": 36})}, first.state))
    assert isinstance(second, InputRequired), second
    eq(second.requests, {"ok": ElicitForm("Add Ada (36) to core?", CONFIRM_SCHEMA)})
    # Round 3 gets only the confirmation: the form's answer is carried in the state.
    third = ia.call_tool("onboard", args, input=InputAnswers({"ok": accept({"confirm": True})}, second.state))
    eq(third, {"content": [{"type": "text", "text": "added Ada, 36, dev [team=core]"}], "isError": False})

    declined = ia.call_tool("onboard", args, input=InputAnswers({"who": ElicitAnswer("decline")}, first.state))
    eq(declined["content"], [{"type": "text", "text": "nobody joins core (decline)"}])
    mismatched = ia.call_tool("onboard", args, input=InputAnswers({"who": accept({"nom": "Ada"})}, first.state))
    eq(mismatched["isError"], True)
    assert mismatched["content"][0]["text"].startswith("refused: the form's content does not match what was asked:"), mismatched

    # The state round-trips: the envelope written by one Input is read by the next.
    one = Input()
    one.state = b"\x00\xffmine"
    raises(InputPending, lambda: one.sample("s", "Hello", max_tokens=5))
    required = one.input_required()
    assert required is not None
    eq(required.requests, {"s": SamplingRequest([UserMessage("Hello")], 5)})
    sampled = SamplingAnswer("assistant", {"type": "text", "text": "Hi"}, "Hi", "m1", "endTurn")
    two = Input(InputAnswers({"s": sampled, "stray": Refused("?")}, required.state))
    eq((two.first_round, two.state, two.answers), (False, b"\x00\xffmine", {"s": sampled}))
    eq(two.sample("s", "Hello", max_tokens=5), sampled)
    raises(InputPending, lambda: two.roots("r"))
    three = Input(InputAnswers({"r": [Root("file:///a", "a")]}, two.input_required().state))
    eq((three.sample("s", "ignored"), three.roots("r"), three.state), (sampled, [Root("file:///a", "a")], b"\x00\xffmine"))
    eq(three.input_required(), None)
    # State this SDK did not write is all the plugin's, and every answer counts.
    raw = Input(InputAnswers({"k": [Root("x:")]}, b"raw bytes"))
    eq((raw.state, raw.roots("k")), (b"raw bytes", [Root("x:")]))


def test_interaction_two_asks_in_one_round() -> None:
    first = ia.call_tool("survey", {})
    assert isinstance(first, InputRequired)
    eq(
        first.requests,
        {"colour": ElicitForm("Favourite colour?", {"type": "object", "properties": {"colour": {"type": "string"}}}), "roots": ListRoots()},
    )
    answers = InputAnswers({"colour": accept({"colour": "teal"}), "roots": [Root("file:///src"), Root("file:///doc", "doc")]}, first.state)
    eq(ia.call_tool("survey", {}, input=answers)["structuredContent"], {"colour": {"colour": "teal"}, "roots": ["file:///src", "file:///doc"]})
    # Only one answered: only the other is asked again.
    half = ia.call_tool("survey", {}, input=InputAnswers({"colour": accept({"colour": "red"})}, first.state))
    assert isinstance(half, InputRequired)
    eq(half.requests, {"roots": ListRoots()})
    done = ia.call_tool("survey", {}, input=InputAnswers({"roots": []}, half.state))
    eq(done["structuredContent"], {"colour": {"colour": "red"}, "roots": []})


def test_interaction_other_kinds_and_places() -> None:
    # What a tool returns after asking is not used, even when it swallowed the signal.
    swallowed = ia.call_tool("swallow", {})
    assert isinstance(swallowed, InputRequired) and list(swallowed.requests) == ["ok"], swallowed
    eq(ia.call_tool("swallow", {}, input=InputAnswers({"ok": ElicitAnswer("cancel")}, swallowed.state))["content"], [{"type": "text", "text": "asked"}])

    asked = ia.call_tool("muse", {"topic": "tea"})
    assert isinstance(asked, InputRequired)
    eq(asked.requests, {"s": SamplingRequest([UserMessage("Say something about tea")], 50, "Be brief.")})
    answer = SamplingAnswer("assistant", [{"type": "text", "text": "Tea is leaves."}], "Tea is leaves.", "m2")
    eq(ia.call_tool("muse", {"topic": "tea"}, input=InputAnswers({"s": answer}, asked.state))["content"], [{"type": "text", "text": "m2: Tea is leaves."}])

    url = ia.call_tool("visit", {})
    assert isinstance(url, InputRequired)
    eq(url.requests, {"login": ElicitUrl("Sign in", "https://login.example.com/x", "e1")})
    eq(ia.call_tool("visit", {}, input=InputAnswers({"login": ElicitAnswer("accept")}, url.state))["content"], [{"type": "text", "text": "accept"}])

    read = ia.read_resource("secret://plans")
    assert isinstance(read, InputRequired)
    eq(read.requests, {"reveal": ElicitForm("Reveal plans?", CONFIRM_SCHEMA)})
    eq(ia.read_resource("secret://plans", InputAnswers({"reveal": accept({"confirm": True})}, read.state)), [{"uri": "secret://plans", "mimeType": "text/plain", "text": "secret plans"}])
    got = ia.get_prompt("greet", {})
    assert isinstance(got, InputRequired) and list(got.requests) == ["who"]
    eq(ia.get_prompt("greet", {}, InputAnswers({"who": accept({"name": "Bo"})}, got.state))["messages"], [{"role": "user", "content": {"type": "text", "text": "Greet Bo."}}])
    # In plain CPython there is no host: the test plays the client, which may be asked anything.
    eq(Input().can_ask("elicit-form"), True)
    raises(ValueError, lambda: Input().can_ask("telepathy"))
    eq(Elicited("accept", 1).accepted, True)


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
