"""csvtools: CSV utilities for a model, as a Warden plugin written with the Python SDK.

Tools: `csv_to_markdown` (a Markdown table), `summarize_csv` (each column's type,
fill and range; it may run as an MCP task, contract 0.3.0), `query_csv` (select,
filter, sort), and four that ask the client (contract 0.2.0 interaction; the manifest
grants `[interaction] elicit`, `sample` and `roots`): `delete_rows` (the user confirms),
`add_row` (the row's values in a form), `describe_columns` (the client's model describes
the columns: sampling) and `find_csv_folders` (the client's roots that look like CSV
folders).
Resources: `csv://samples` (the sample tables) and `csv://samples/{name}` (one of
them). Prompt: `analyze_csv`. Deterministic: no clock, no randomness, no I/O.

    componentize-py -d "$(python -m warden_plugin wit)" -w warden:plugin/plugin \\
        componentize app -p . -p "$(python -m warden_plugin path)" -o csvtools.wasm
"""

import csv
import io
from urllib.parse import unquote, urlsplit
from dataclasses import dataclass, field
from typing import Annotated, List, Literal, Optional

from warden_plugin import (
    EmbeddedResource,
    Field,
    Input,
    InvalidArguments,
    NotFound,
    Plugin,
    PromptReference,
    Refused,
    SamplingRequest,
    cancelled,
    progress,
    ResourceTemplateReference,
    UserMessage,
    log,
)

app = Plugin("csvtools")

Delimiter = Annotated[str, Field("The character between fields.", min_length=1, max_length=1)]

SAMPLES = {
    "planets": (
        "The eight planets: type, known moons, mean radius.",
        "name,type,moons,radius_km\n"
        "Mercury,terrestrial,0,2439.7\n"
        "Venus,terrestrial,0,6051.8\n"
        "Earth,terrestrial,1,6371.0\n"
        "Mars,terrestrial,2,3389.5\n"
        "Jupiter,gas giant,95,69911\n"
        "Saturn,gas giant,146,58232\n"
        "Uranus,ice giant,28,25362\n"
        "Neptune,ice giant,16,24622\n",
    ),
    "elements": (
        "The first ten chemical elements: symbol, atomic number, standard atomic weight.",
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
        "Ne,Neon,10,20.18\n",
    ),
}


def read_table(text: str, delimiter: str) -> "tuple[List[str], List[List[str]]]":
    rows = [row for row in csv.reader(io.StringIO(text), delimiter=delimiter) if row]
    if not rows:
        raise ValueError("the CSV is empty: it needs a header row")
    header, body = rows[0], rows[1:]
    for number, row in enumerate(body, start=2):
        if len(row) != len(header):
            raise ValueError(f"row {number} has {len(row)} fields, the header has {len(header)}")
    return header, body


def number(text: str) -> Optional[float]:
    try:
        return float(text)
    except ValueError:
        return None


def column_index(header: List[str], name: str) -> int:
    if name not in header:
        raise ValueError(f'unknown column "{name}"; the columns are: {", ".join(header)}')
    return header.index(name)


# ----------------------------------------------------------------------------- tools


@app.tool(title="CSV to Markdown", read_only_hint=True, idempotent_hint=True)
def csv_to_markdown(
    csv: str,
    align: Literal["left", "center", "right"] = "left",
    delimiter: Delimiter = ",",
) -> str:
    """Renders CSV text as a Markdown table (the first row is the header).

    Args:
        csv: The CSV text, header first.
        align: How every column is aligned.
    """
    header, body = read_table(csv, delimiter)
    rule = {"left": ":---", "center": ":---:", "right": "---:"}[align]

    def line(cells: List[str]) -> str:
        return "| " + " | ".join(cell.replace("|", "\\|") for cell in cells) + " |"

    return "\n".join([line(header), "| " + " | ".join([rule] * len(header)) + " |"] + [line(row) for row in body])


@dataclass
class Column:
    """One column of a CSV table."""

    name: str
    type: Literal["integer", "number", "text", "empty"]
    filled: int = field(metadata={"description": "How many cells are not empty."})
    distinct: int = field(metadata={"description": "How many different non-empty values."})
    min: Optional[float] = None
    max: Optional[float] = None
    mean: Optional[float] = None


@dataclass
class Summary:
    """The shape of a CSV table."""

    rows: int
    columns: List[Column]


# Its work grows with the table (every cell of every column, with progress per column):
# it declares that a call may run as an MCP task (contract 0.3.0), for a client that
# supports tasks and when the call outlives a short first wait; an ordinary call otherwise.
@app.tool(title="Summarize CSV", read_only_hint=True, task="optional")
def summarize_csv(csv: str, delimiter: Delimiter = ",") -> Summary:
    """Describes a CSV table: its row count and, per column, the type of its values,
    how many are filled and distinct, and for numbers the minimum, maximum and mean.

    Args:
        csv: The CSV text, header first.
    """
    header, body = read_table(csv, delimiter)
    columns = []
    for index, name in enumerate(header):
        cells = [row[index] for row in body if row[index].strip()]
        numbers = [number(cell) for cell in cells]
        if not cells:
            kind = "empty"
        elif all(n is not None for n in numbers):
            kind = "integer" if all(n == int(n) and "." not in c for n, c in zip(numbers, cells)) else "number"
        else:
            kind = "text"
        column = Column(name=name, type=kind, filled=len(cells), distinct=len(set(cells)))
        if kind in ("integer", "number"):
            if kind == "integer":
                numbers = [int(n) for n in numbers]
            column.min, column.max = min(numbers), max(numbers)
            column.mean = sum(numbers) / len(numbers)
        columns.append(column)
        # Large tables take a while: the client sees each column done, and a
        # cancelled call stops early.
        progress(index + 1, len(header), f"column {name}")
        if cancelled():
            raise RuntimeError("cancelled")
    return Summary(rows=len(body), columns=columns)


@dataclass
class Condition:
    """Keeps the rows whose `column` compares so with `value` (as numbers when both are)."""

    column: str
    op: Literal["=", "!=", "<", "<=", ">", ">=", "contains"]
    value: str


@dataclass
class Table:
    columns: List[str]
    rows: List[List[str]]
    matched: int = field(metadata={"description": "Rows that matched, before the limit."})


def holds(cell: str, condition: Condition) -> bool:
    if condition.op == "contains":
        return condition.value.lower() in cell.lower()
    left, right = number(cell), number(condition.value)
    a, b = (left, right) if left is not None and right is not None else (cell, condition.value)
    return {
        "=": a == b,
        "!=": a != b,
        "<": a < b,
        "<=": a <= b,
        ">": a > b,
        ">=": a >= b,
    }[condition.op]


@app.tool(title="Query CSV", read_only_hint=True)
def query_csv(
    csv: str,
    columns: Optional[List[str]] = None,
    where: Optional[List[Condition]] = None,
    sort_by: Optional[str] = None,
    descending: bool = False,
    limit: Annotated[int, Field(ge=1, le=1000)] = 100,
    delimiter: Delimiter = ",",
) -> Table:
    """Selects rows of a CSV table: keeps those matching every condition, sorts them
    (numerically when the column holds numbers) and returns the chosen columns.

    Args:
        csv: The CSV text, header first.
        columns: The columns to return, in this order (default: all).
        where: Conditions every returned row meets.
        sort_by: The column to sort by (default: the table's order).
        descending: Sort from the largest value.
        limit: At most this many rows.
    """
    header, body = read_table(csv, delimiter)
    chosen = [column_index(header, name) for name in (columns or header)]
    conditions = [(column_index(header, c.column), c) for c in where or []]
    rows = [row for row in body if all(holds(row[i], c) for i, c in conditions)]
    if sort_by is not None:
        key = column_index(header, sort_by)
        values = [number(row[key]) for row in rows]
        if all(v is not None for v in values):
            rows = [row for _, row in sorted(zip(values, rows), key=lambda pair: pair[0], reverse=descending)]
        else:
            rows = sorted(rows, key=lambda row: row[key], reverse=descending)
    log("info", f"query_csv: {len(rows)} of {len(body)} rows matched")
    return Table(
        columns=[header[i] for i in chosen],
        rows=[[row[i] for i in chosen] for row in rows[:limit]],
        matched=len(rows),
    )


def write_table(header: List[str], rows: List[List[str]], delimiter: str) -> str:
    out = io.StringIO()
    writer = csv.writer(out, delimiter=delimiter, lineterminator="\n")
    writer.writerow(header)
    writer.writerows(rows)
    return out.getvalue()


# What a tool that needs the user says when it cannot ask: the client does not support
# form elicitation, or the operator did not grant `[interaction] elicit`.
CANNOT_ASK = (
    "it needs the user's answer, and that cannot be asked here (the client does not support "
    "form elicitation, or the operator has not granted `[interaction] elicit` to this plugin)"
)


@app.tool(title="Delete CSV rows", idempotent_hint=True)
def delete_rows(csv: str, column: str, value: str, input: Input, delimiter: Delimiter = ",") -> str:
    """Deletes the rows whose `column` holds exactly `value` and returns the CSV that is
    left, once the user has confirmed it in a form the client shows (a client without
    form elicitation cannot delete).

    Args:
        csv: The CSV text, header first.
        column: The column to look in.
        value: The rows whose cell in `column` is this text are deleted.
    """
    header, body = read_table(csv, delimiter)
    index = column_index(header, column)
    kept = [row for row in body if row[index] != value]
    deleted = len(body) - len(kept)
    if deleted == 0:
        return f'No row has {column} = "{value}": nothing to delete.'
    if not input.can_ask("elicit-form"):
        raise ValueError(f"did not delete {deleted} rows: {CANNOT_ASK}")
    try:
        confirmed = input.confirm("confirm", f'Delete {deleted} of {len(body)} rows where {column} = "{value}"?')
    except Refused as refused:
        raise ValueError(f"did not delete {deleted} rows: the confirmation could not be asked ({refused.reason})") from None
    if not confirmed:
        return "Deleted nothing: the user did not confirm (declined, cancelled or left unchecked)."
    log("info", f"delete_rows: {deleted} of {len(body)} rows deleted")
    return write_table(header, kept, delimiter)


@app.tool(title="Add a CSV row", idempotent_hint=True)
def add_row(csv: str, input: Input, delimiter: Delimiter = ",") -> str:
    """Asks the user for the values of a new row — a form with one text field per
    column — and returns the CSV with that row appended.

    Args:
        csv: The CSV text, header first.
    """
    header, body = read_table(csv, delimiter)
    if not input.can_ask("elicit-form"):
        raise ValueError(f"added no row: {CANNOT_ASK}")
    form = {
        "type": "object",
        "properties": {name: {"type": "string", "title": name} for name in header},
        "required": list(header),
    }
    answer = input.elicit("row", f"The new row's values ({len(header)} columns)", form)
    if not answer.accepted:
        return f"Added no row: the user chose {answer.action}."
    values = answer.content or {}
    row = [str(values.get(name, "")) for name in header]
    return write_table(header, body + [row], delimiter)


# What the tools that ask the client's model or its roots say when they cannot ask.
CANNOT_SAMPLE = (
    "it needs the client's model, and that cannot be asked here (the client does not support "
    "sampling, or the operator has not granted `[interaction] sample` to this plugin)"
)
CANNOT_LIST_ROOTS = (
    "it needs the client's roots, and they cannot be asked for here (the client does not "
    "support roots, or the operator has not granted `[interaction] roots` to this plugin)"
)
SHOWN_ROWS = 5


@app.tool(title="Describe CSV columns", read_only_hint=True)
def describe_columns(csv: str, input: Input, delimiter: Delimiter = ",") -> str:
    """Asks the client's model (sampling) what each column of a CSV table holds, showing
    it the header and the first rows, and returns its answer.

    Args:
        csv: The CSV text, header first.
    """
    header, body = read_table(csv, delimiter)
    if not input.can_ask("sample"):
        raise ValueError(f"described nothing: {CANNOT_SAMPLE}")
    shown = body[:SHOWN_ROWS]
    request = SamplingRequest(
        [
            f"What does each column of this CSV table hold? It has {len(body)} rows; "
            f"the header and the first {len(shown)} follow.\n\n" + write_table(header, shown, delimiter)
        ],
        max_tokens=60 * len(header),
        system_prompt="You describe data tables to an analyst: one short line per column, "
        "\"name: what it holds\", in the table's order.",
        temperature=0.0,
    )
    try:
        answer = input.sample("describe", request)
    except Refused as refused:
        raise ValueError(f"described nothing: the client's model could not be asked ({refused.reason})") from None
    if not answer.text:
        raise ValueError(f"the model ({answer.model}) answered without text")
    log("info", f"describe_columns: {len(header)} columns described by {answer.model}")
    return f"{answer.text.strip()}\n\n(described by {answer.model})"


@dataclass
class Folder:
    """A root of the client's."""

    uri: str
    name: Optional[str] = None


@dataclass
class CsvFolders:
    folders: List[Folder] = field(metadata={"description": "The roots that look like they hold CSV tables."})
    others: int = field(metadata={"description": "How many roots do not."})


def looks_like_csv(uri: str, name: Optional[str]) -> bool:
    """A `file:` root that is a `.csv` file, or whose last path segment or name mentions
    csv, data or tables. (The plugin cannot look inside: it has no file access.)"""
    parts = urlsplit(uri)
    if parts.scheme != "file":
        return False
    last = unquote(parts.path).rstrip("/").rsplit("/", 1)[-1].lower()
    if last.endswith(".csv"):
        return True
    words = f"{last} {(name or '').lower()}"
    return any(word in words for word in ("csv", "data", "table"))


@app.tool(title="Find CSV folders", read_only_hint=True)
def find_csv_folders(input: Input) -> CsvFolders:
    """Asks the client for its roots (the folders it works in) and lists those that look
    like they hold CSV tables: a `file:` root that is a `.csv` file, or whose last path
    segment or name mentions csv, data or tables."""
    if not input.can_ask("list-roots"):
        raise ValueError(f"found nothing: {CANNOT_LIST_ROOTS}")
    try:
        roots = input.roots("roots")
    except Refused as refused:
        raise ValueError(f"found nothing: the client's roots could not be asked for ({refused.reason})") from None
    folders = [Folder(root.uri, root.name) for root in roots if looks_like_csv(root.uri, root.name)]
    return CsvFolders(folders=folders, others=len(roots) - len(folders))


# ------------------------------------------------------------------------- resources


@dataclass
class Sample:
    name: str
    uri: str
    description: str
    rows: int


@app.resource("csv://samples", title="Sample tables")
def samples() -> List[Sample]:
    """The sample CSV tables this plugin carries, to try its tools on."""
    return [
        Sample(name, f"csv://samples/{name}", description, text.count("\n") - 1)
        for name, (description, text) in SAMPLES.items()
    ]


@app.resource("csv://samples/{name}", title="A sample table", mime_type="text/csv")
def sample(name: str) -> str:
    """One sample table as CSV text."""
    if name not in SAMPLES:
        raise NotFound(f'no sample "{name}"; the samples are: {", ".join(SAMPLES)}')
    return SAMPLES[name][1]


# --------------------------------------------------------------------------- prompts


@app.prompt(title="Analyze a sample table")
def analyze_csv(sample: str, goal: Literal["overview", "outliers", "cleanup"] = "overview") -> list:
    """Asks the model to analyze one of the sample tables.

    Args:
        sample: The sample's name (see csv://samples).
        goal: What the analysis looks for.
    """
    if sample not in SAMPLES:
        raise InvalidArguments(f'no sample "{sample}"; the samples are: {", ".join(SAMPLES)}')
    ask = {
        "overview": "Give an overview of this table: what each column holds and what stands out.",
        "outliers": "Find the rows whose values are far from the others, and say why.",
        "cleanup": "List the cells that look wrong or inconsistent, and how to fix each.",
    }[goal]
    uri = f"csv://samples/{sample}"
    return [
        UserMessage(EmbeddedResource(uri, text=SAMPLES[sample][1], mime_type="text/csv")),
        UserMessage(f"{ask} The tools summarize_csv and query_csv can help."),
    ]


@app.completion()
def complete(ref, argument: str, value: str) -> Optional[List[str]]:
    """Sample names for `analyze_csv`'s `sample` and the template's `name`; the
    SDK completes `goal` itself (a Literal)."""
    if (ref == PromptReference("analyze_csv") and argument == "sample") or (
        ref == ResourceTemplateReference("csv://samples/{name}") and argument == "name"
    ):
        return [name for name in SAMPLES if name.startswith(value)]
    return None
