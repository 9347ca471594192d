"""Python type hints as JSON Schema, and JSON values to and from Python values.

Pure Python with no imports beyond the standard library: it runs inside a
componentize-py component and in plain CPython (where it is unit-tested).

    str → string        int → integer       float → number       bool → boolean
    None → null         list[T], Sequence[T] → array of T      set[T] → array, unique items
    tuple[A, B] → array of exactly A, B          tuple[T, ...] → array of T
    dict[str, T] → object whose values are T     dict, Any, no hint → any value
    Optional[T] → T or null                      Union[A, B] → anyOf
    Literal["a", 1] → enum                       Enum subclass → enum of its values
    dataclass, TypedDict → object with their fields (no other keys)
    datetime / date / time → string (format date-time / date / time), ISO 8601
    bytes → base64 string
    Annotated[T, Field(...)] → T with a description, bounds, a pattern...
"""

from __future__ import annotations

import base64
import collections.abc as abc
import dataclasses
import datetime
import enum
import inspect
import json
import math
import types
import typing
from typing import Any, Dict, List, Optional

__all__ = ["Field", "schema_of", "from_json", "to_json", "is_object_schema", "SchemaError"]

_NONE = type(None)
_UNION_TYPES = (typing.Union,) + ((types.UnionType,) if hasattr(types, "UnionType") else ())


class SchemaError(TypeError):
    """A type hint that has no JSON Schema (raised when a function is registered)."""


class Field:
    """Extra schema for a parameter, field or return value, used as
    `Annotated[T, Field(...)]` (like pydantic's `Field`, which the official MCP SDK
    uses the same way).

    `description`, `title`, `examples`, numeric bounds (`ge`, `gt`, `le`, `lt`,
    `multiple_of`), string bounds (`min_length`, `max_length`, `pattern`, `format`)
    and array bounds (`min_items`, `max_items`) become the matching JSON Schema
    keywords. `schema` is merged in as is, for anything else.
    """

    _KEYWORDS = {
        "title": "title",
        "description": "description",
        "examples": "examples",
        "ge": "minimum",
        "gt": "exclusiveMinimum",
        "le": "maximum",
        "lt": "exclusiveMaximum",
        "multiple_of": "multipleOf",
        "min_length": "minLength",
        "max_length": "maxLength",
        "pattern": "pattern",
        "format": "format",
        "min_items": "minItems",
        "max_items": "maxItems",
    }

    def __init__(
        self,
        description: Optional[str] = None,
        *,
        title: Optional[str] = None,
        examples: Optional[list] = None,
        ge: Optional[float] = None,
        gt: Optional[float] = None,
        le: Optional[float] = None,
        lt: Optional[float] = None,
        multiple_of: Optional[float] = None,
        min_length: Optional[int] = None,
        max_length: Optional[int] = None,
        pattern: Optional[str] = None,
        format: Optional[str] = None,
        min_items: Optional[int] = None,
        max_items: Optional[int] = None,
        schema: Optional[Dict[str, Any]] = None,
    ) -> None:
        given = dict(locals())
        self.keywords: Dict[str, Any] = {}
        for name, keyword in self._KEYWORDS.items():
            if given[name] is not None:
                self.keywords[keyword] = given[name]
        if schema:
            self.keywords.update(schema)

    @property
    def description(self) -> Optional[str]:
        return self.keywords.get("description")

    def __repr__(self) -> str:
        return f"Field({self.keywords!r})"


def _is_typeddict(tp: Any) -> bool:
    return isinstance(tp, type) and issubclass(tp, dict) and hasattr(tp, "__total__") and hasattr(tp, "__annotations__")


def _hints(tp: Any) -> Dict[str, Any]:
    return typing.get_type_hints(tp, include_extras=True)


def _own_doc(cls: type) -> Optional[str]:
    """A class's docstring, unless dataclass wrote it (`Name(a: int, ...)`)."""
    doc = cls.__dict__.get("__doc__")
    if not doc or (dataclasses.is_dataclass(cls) and doc.startswith(f"{cls.__name__}(")):
        return None
    return inspect.cleandoc(doc)


def split_annotated(tp: Any) -> "tuple[Any, List[Field]]":
    """`Annotated[T, Field(...), ...]` → (T, [fields]); anything else → (tp, [])."""
    fields: List[Field] = []
    while typing.get_origin(tp) is typing.Annotated:
        args = typing.get_args(tp)
        tp = args[0]
        for extra in args[1:]:
            if isinstance(extra, Field):
                fields.append(extra)
            elif isinstance(extra, str):
                fields.append(Field(extra))
    return tp, fields


def _optional_arm(tp: Any) -> Any:
    """T for Optional[T] (a union of exactly T and None), else None."""
    if typing.get_origin(tp) in _UNION_TYPES:
        args = [a for a in typing.get_args(tp) if a is not _NONE]
        if len(args) == 1 and len(typing.get_args(tp)) == 2:
            return args[0]
    return None


def _literal_schema(values: tuple) -> Dict[str, Any]:
    kinds = {_json_kind(v) for v in values}
    schema: Dict[str, Any] = {}
    if len(kinds) == 1:
        schema["type"] = kinds.pop()
    schema["enum"] = [to_json(v) for v in values]
    return schema


def _json_kind(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "number"
    if isinstance(value, str):
        return "string"
    raise SchemaError(f"{value!r} is not a JSON scalar")


def schema_of(tp: Any, _seen: tuple = ()) -> Dict[str, Any]:
    """The JSON Schema of values of type `tp`."""
    tp, fields = split_annotated(tp)
    schema = _bare_schema(tp, _seen)
    for f in fields:
        schema.update(f.keywords)
    return schema


def _bare_schema(tp: Any, seen: tuple) -> Dict[str, Any]:
    if tp is Any or tp is object or tp is inspect_empty():
        return {}
    if tp is None or tp is _NONE:
        return {"type": "null"}
    if tp is bool:
        return {"type": "boolean"}
    if tp is int:
        return {"type": "integer"}
    if tp is float:
        return {"type": "number"}
    if tp is str:
        return {"type": "string"}
    if tp is bytes:
        return {"type": "string", "contentEncoding": "base64"}
    if tp is datetime.datetime:
        return {"type": "string", "format": "date-time"}
    if tp is datetime.date:
        return {"type": "string", "format": "date"}
    if tp is datetime.time:
        return {"type": "string", "format": "time"}
    if isinstance(tp, type) and issubclass(tp, enum.Enum):
        schema = _literal_schema(tuple(member.value for member in tp))
        doc = _own_doc(tp) if tp.__dict__.get("__doc__") != "An enumeration." else None
        if doc:
            schema["description"] = doc
        return schema
    origin = typing.get_origin(tp)
    args = typing.get_args(tp)
    if origin is typing.Literal:
        return _literal_schema(args)
    if origin in _UNION_TYPES:
        arms = [schema_of(a, seen) for a in args]
        return {"anyOf": arms}
    if dataclasses.is_dataclass(tp) or _is_typeddict(tp):
        if tp in seen:
            raise SchemaError(f"{tp.__name__} refers to itself: recursive types have no schema here")
        return _object_schema(tp, seen + (tp,))
    if tp in (list, tuple, set, frozenset) or origin in (list, set, frozenset) or _is_sequence(origin):
        schema: Dict[str, Any] = {"type": "array"}
        if args:
            schema["items"] = schema_of(args[0], seen)
        if tp in (set, frozenset) or origin in (set, frozenset):
            schema["uniqueItems"] = True
        return schema
    if origin is tuple:
        if len(args) == 2 and args[1] is Ellipsis:
            return {"type": "array", "items": schema_of(args[0], seen)}
        if args == ((),):
            args = ()
        return {
            "type": "array",
            "prefixItems": [schema_of(a, seen) for a in args],
            "minItems": len(args),
            "maxItems": len(args),
        }
    if tp is dict or origin is dict or _is_mapping(origin):
        if args:
            key, value = args
            if split_annotated(key)[0] is not str:
                raise SchemaError(f"{_name(tp)}: JSON object keys are strings, use dict[str, ...]")
            return {"type": "object", "additionalProperties": schema_of(value, seen)}
        return {"type": "object"}
    raise SchemaError(f"no JSON Schema for the type {_name(tp)}")


def _is_sequence(origin: Any) -> bool:
    return origin in (abc.Sequence, abc.MutableSequence, abc.Iterable, abc.Collection, abc.Set, abc.MutableSet)


def _is_mapping(origin: Any) -> bool:
    return origin in (abc.Mapping, abc.MutableMapping)


def inspect_empty() -> Any:
    return inspect.Parameter.empty


def _name(tp: Any) -> str:
    return getattr(tp, "__name__", None) or repr(tp)


def _object_schema(tp: Any, seen: tuple) -> Dict[str, Any]:
    hints = _hints(tp)
    properties: Dict[str, Any] = {}
    required: List[str] = []
    if dataclasses.is_dataclass(tp):
        for f in dataclasses.fields(tp):
            if not f.init:
                continue
            prop = schema_of(hints.get(f.name, Any), seen)
            if "description" in f.metadata and "description" not in prop:
                prop["description"] = f.metadata["description"]
            if f.default is not dataclasses.MISSING:
                prop.setdefault("default", to_json(f.default))
            elif f.default_factory is dataclasses.MISSING:  # type: ignore[misc]
                required.append(f.name)
            properties[f.name] = prop
    else:
        required_keys = getattr(tp, "__required_keys__", frozenset(hints) if tp.__total__ else frozenset())
        for name, hint in hints.items():
            bare, _ = split_annotated(hint)
            properties[name] = schema_of(_strip_required(hint), seen)
            if name in required_keys:
                required.append(name)
    schema: Dict[str, Any] = {"type": "object", "properties": properties}
    if required:
        schema["required"] = required
    schema["additionalProperties"] = False
    doc = _own_doc(tp)
    if doc:
        schema["description"] = doc
    return schema


def _strip_required(hint: Any) -> Any:
    """`Required[T]` / `NotRequired[T]` (TypedDict markers) → T."""
    origin = typing.get_origin(hint)
    for marker in ("Required", "NotRequired", "ReadOnly"):
        if origin is not None and origin is getattr(typing, marker, None):
            return typing.get_args(hint)[0]
    return hint


def is_object_schema(schema: Dict[str, Any]) -> bool:
    return schema.get("type") == "object"


# ---------------------------------------------------------------------------
# JSON → Python


class ConversionError(ValueError):
    pass


def from_json(tp: Any, value: Any, where: str = "value") -> Any:
    """Converts a JSON value (already checked against `schema_of(tp)`) into `tp`."""
    tp, _ = split_annotated(_strip_required(tp))
    if tp is Any or tp is object or tp is inspect_empty():
        return value
    if tp is None or tp is _NONE:
        if value is not None:
            raise ConversionError(f"{where}: expected null")
        return None
    if tp is float:
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise ConversionError(f"{where}: expected a number")
        return float(value)
    if tp is int:
        if isinstance(value, bool) or not isinstance(value, (int, float)) or value != int(value):
            raise ConversionError(f"{where}: expected an integer")
        return int(value)
    if tp in (str, bool):
        if type(value) is not tp:
            raise ConversionError(f"{where}: expected a {'string' if tp is str else 'boolean'}")
        return value
    if tp is bytes:
        try:
            return base64.b64decode(value, validate=True)
        except Exception:
            raise ConversionError(f"{where}: expected base64") from None
    if tp in (datetime.datetime, datetime.date, datetime.time):
        try:
            text = value[:-1] + "+00:00" if isinstance(value, str) and value.endswith("Z") else value
            return tp.fromisoformat(text)
        except Exception:
            raise ConversionError(f"{where}: expected an ISO 8601 {tp.__name__}") from None
    if isinstance(tp, type) and issubclass(tp, enum.Enum):
        try:
            return tp(value)
        except ValueError:
            raise ConversionError(f"{where}: {value!r} is not one of {[m.value for m in tp]}") from None
    origin = typing.get_origin(tp)
    args = typing.get_args(tp)
    if origin is typing.Literal:
        if value not in args:
            raise ConversionError(f"{where}: {value!r} is not one of {list(args)}")
        return value
    if origin in _UNION_TYPES:
        if value is None and _NONE in args:
            return None
        problems = []
        for arm in args:
            if arm is _NONE:
                continue
            try:
                return from_json(arm, value, where)
            except ConversionError as problem:
                problems.append(str(problem))
        raise ConversionError("; ".join(problems) or f"{where}: no type matches")
    if dataclasses.is_dataclass(tp):
        if not isinstance(value, dict):
            raise ConversionError(f"{where}: expected an object")
        hints = _hints(tp)
        names = {f.name for f in dataclasses.fields(tp) if f.init}
        unknown = sorted(set(value) - names)
        if unknown:
            raise ConversionError(f"{where}: unknown field {unknown[0]!r}")
        return tp(**{k: from_json(hints.get(k, Any), v, f"{where}.{k}") for k, v in value.items()})
    if _is_typeddict(tp):
        if not isinstance(value, dict):
            raise ConversionError(f"{where}: expected an object")
        hints = _hints(tp)
        return {k: from_json(hints.get(k, Any), v, f"{where}.{k}") for k, v in value.items()}
    if tp in (list, tuple, set, frozenset) or origin in (list, tuple, set, frozenset) or _is_sequence(origin):
        if not isinstance(value, list):
            raise ConversionError(f"{where}: expected an array")
        if origin is tuple and args and not (len(args) == 2 and args[1] is Ellipsis):
            if len(args) != len(value):
                raise ConversionError(f"{where}: expected {len(args)} items")
            return tuple(from_json(a, v, f"{where}[{i}]") for i, (a, v) in enumerate(zip(args, value)))
        item = args[0] if args else Any
        items = [from_json(item, v, f"{where}[{i}]") for i, v in enumerate(value)]
        if tp in (tuple, set, frozenset):
            return tp(items)
        if origin in (tuple, set, frozenset):
            return origin(items)
        return items
    if tp is dict or origin is dict or _is_mapping(origin):
        if not isinstance(value, dict):
            raise ConversionError(f"{where}: expected an object")
        item = args[1] if args else Any
        return {k: from_json(item, v, f"{where}.{k}") for k, v in value.items()}
    return value


def from_text(tp: Any, text: str, where: str) -> Any:
    """A prompt argument or URI template variable (always a string) as `tp`."""
    bare, _ = split_annotated(tp)
    arm = _optional_arm(bare)
    if arm is not None:
        bare = arm
    if bare is str or bare is Any or bare is inspect_empty():
        return text
    if bare is int:
        try:
            return int(text)
        except ValueError:
            raise ConversionError(f"{where}: {text!r} is not an integer") from None
    if bare is float:
        try:
            return float(text)
        except ValueError:
            raise ConversionError(f"{where}: {text!r} is not a number") from None
    if bare is bool:
        if text.lower() in ("true", "false"):
            return text.lower() == "true"
        raise ConversionError(f"{where}: {text!r} is not true or false")
    if typing.get_origin(bare) is typing.Literal or (isinstance(bare, type) and issubclass(bare, enum.Enum)):
        choices = text_choices(bare)
        for choice, original in zip(choices, _choice_values(bare)):
            if choice == text:
                return from_json(bare, original, where)
        raise ConversionError(f"{where}: {text!r} is not one of {', '.join(choices)}")
    try:
        value = json.loads(text)
    except ValueError:
        raise ConversionError(f"{where}: {text!r} is not JSON") from None
    return from_json(bare, value, where)


def _choice_values(tp: Any) -> list:
    if isinstance(tp, type) and issubclass(tp, enum.Enum):
        return [m.value for m in tp]
    return list(typing.get_args(tp))


def text_choices(tp: Any) -> Optional[List[str]]:
    """The values a Literal, Enum or bool argument can take, as text (for completions)."""
    bare, _ = split_annotated(tp)
    arm = _optional_arm(bare)
    if arm is not None:
        bare = arm
    if bare is bool:
        return ["false", "true"]
    if typing.get_origin(bare) is typing.Literal or (isinstance(bare, type) and issubclass(bare, enum.Enum)):
        return [v if isinstance(v, str) else _json_text(v) for v in _choice_values(bare)]
    return None


def _json_text(value: Any) -> str:
    return json.dumps(value)


# ---------------------------------------------------------------------------
# Python → JSON


def to_json(value: Any) -> Any:
    """A Python value (dataclasses, enums, tuples, dates, bytes...) as plain JSON data."""
    if value is None or isinstance(value, (bool, str)):
        return value
    if isinstance(value, enum.Enum):
        return to_json(value.value)
    if isinstance(value, int):
        return int(value)
    if isinstance(value, float):
        if math.isnan(value) or math.isinf(value):
            raise ValueError(f"{value} cannot be written as JSON")
        return value
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {f.name: to_json(getattr(value, f.name)) for f in dataclasses.fields(value)}
    if isinstance(value, dict):
        return {str(k): to_json(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [to_json(v) for v in value]
    if isinstance(value, (set, frozenset)):
        return sorted((to_json(v) for v in value), key=lambda v: (str(type(v)), v))
    if isinstance(value, (bytes, bytearray)):
        return base64.b64encode(bytes(value)).decode("ascii")
    if isinstance(value, (datetime.datetime, datetime.date, datetime.time)):
        return value.isoformat()
    raise TypeError(f"a {type(value).__name__} cannot be written as JSON")
