"""Interaction (contract `warden:plugin@0.2.0` and later): a tool, a resource or a prompt
asks the client for input — a confirmation, a form, a URL to open, the client's model, its
roots — through an `Input`, and is called again with the answers.

A function gets one by declaring a parameter annotated `Input` (like `Context`; it is not
part of the schema):

    @app.tool()
    def drop_table(name: str, input: Input) -> str:
        \"\"\"Drops a table.\"\"\"
        if not input.confirm("sure", f"Drop table {name}?"):
            return "kept it"
        ...

Each ask names its request with a key (1 to 64 characters from `A-Z a-z 0-9 _ -`). When
the answer under that key is there, the method returns it; otherwise it records the
request and raises `InputPending`, which ends the round: the SDK replies `input-required`
with every request recorded in this round, and Warden puts them to the client and calls the
function again — in a fresh sandbox, with the same arguments — with the answers. Answers of
earlier rounds travel in the state, so every later round replays the function from the
start and gets them again: it must ask the same things in the same order for the same
arguments (it is deterministic). An answer the host could not get (the operator did not
grant it, the client cannot answer, a bound was broken) raises `Refused`.
"""

from __future__ import annotations

import json
import re
import struct
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any, Dict, Generic, Iterator, List, Literal, Optional, Sequence, Tuple, TypeVar, Union

from . import schema as _schema
from .content import Message
from .host import INTERACTIONS

T = TypeVar("T")

Action = Literal["accept", "decline", "cancel"]


class InputPending(BaseException):
    """Raised by an ask method when its answer is not there yet: the SDK catches it and
    replies `input-required`. It derives from BaseException, as KeyboardInterrupt does, so
    that `except Exception` in a tool lets it through; a tool that swallows it anyway still
    replies `input-required` (what it returns after asking is not used)."""

    def __init__(self, key: str) -> None:
        super().__init__(f"waiting for the client's answer to {key!r}")
        self.key = key


class Refused(Exception):
    """The request was not put to the client, or the client could not answer it: `reason`
    says why (the operator did not grant it, it broke a bound, the client's error). An
    ordinary exception: catch it to fall back; uncaught in a tool it is an `isError` result
    whose text is `refused: <reason>`."""

    def __init__(self, reason: str) -> None:
        super().__init__(f"refused: {reason}")
        self.reason = reason

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Refused) and other.reason == self.reason

    def __hash__(self) -> int:
        return hash(self.reason)


# ---------------------------------------------------------------- requests


@dataclass
class ElicitForm:
    """A form (elicitation, form mode): `requested_schema` is a flat JSON Schema object."""

    message: str
    requested_schema: Dict[str, Any]


@dataclass
class ElicitUrl:
    """A URL for the user to open (elicitation, URL mode); `elicitation_id` names it."""

    message: str
    url: str
    elicitation_id: str


@dataclass
class SamplingRequest:
    """A request to the client's model. `messages` are `Message`s (`UserMessage(...)`,
    `AssistantMessage(...)`) or plain strings (user messages); `max_tokens` is capped by
    the operator; `model_preferences` and `tools` are MCP's JSON, as Python values."""

    messages: List[Union[Message, str]] = field(default_factory=list)
    max_tokens: int = 256
    system_prompt: Optional[str] = None
    temperature: Optional[float] = None
    stop_sequences: List[str] = field(default_factory=list)
    model_preferences: Optional[Dict[str, Any]] = None
    tools: Optional[List[Dict[str, Any]]] = None

    def normalised(self) -> "SamplingRequest":
        messages = [m if isinstance(m, Message) else Message("user", m) for m in self.messages]
        return SamplingRequest(
            messages,
            int(self.max_tokens),
            self.system_prompt,
            self.temperature,
            list(self.stop_sequences),
            self.model_preferences,
            self.tools,
        )


@dataclass
class ListRoots:
    """A request for the client's roots."""


Request = Union[ElicitForm, ElicitUrl, SamplingRequest, ListRoots]


@dataclass
class InputRequired:
    """What a round that asked replies: the requests by key (in the order asked), and the
    state that comes back with the answers (the SDK's envelope, then the plugin's bytes)."""

    requests: Dict[str, Request]
    state: bytes


# ----------------------------------------------------------------- answers


@dataclass
class ElicitAnswer:
    """The user's answer to an elicitation: `content` (a dict) when a form was accepted."""

    action: Action
    content: Optional[Dict[str, Any]] = None


@dataclass
class SamplingAnswer:
    """The model's answer: `content` is MCP content JSON (a block or a list of blocks),
    `text` the text of its text blocks."""

    role: Literal["user", "assistant"]
    content: Any
    text: Optional[str]
    model: str
    stop_reason: Optional[str] = None


@dataclass
class Root:
    uri: str
    name: Optional[str] = None


# An answer as the host passes it: a refusal is a `Refused` (the exception, as a value).
Answer = Union[ElicitAnswer, SamplingAnswer, List[Root], Refused]


@dataclass
class InputAnswers:
    """What the host passes on a round after the first: the answers by key, and the state."""

    answers: Dict[str, Answer]
    state: bytes = b""


@dataclass
class Elicited(Generic[T]):
    """The user's answer to a form ([`Input.elicit`]): `content` (of the type asked, or a
    dict) when `action` is "accept"."""

    action: Action
    content: Optional[T] = None

    @property
    def accepted(self) -> bool:
        return self.action == "accept"


# ------------------------------------------------------------------- state

MAGIC = b"wps1"
_PENDING: Any = None  # what `ask` returns inside `together()` when the answer is not there yet
_KEY = re.compile(r"^[A-Za-z0-9_-]{1,64}$")

# The form `confirm` shows: one boolean field, `confirm` (the Rust SDK's, too).
CONFIRM_SCHEMA: Dict[str, Any] = {
    "type": "object",
    "properties": {"confirm": {"type": "boolean", "title": "Confirm", "default": False}},
    "required": ["confirm"],
}


# The keywords MCP allows at the top of a form's schema (Warden refuses others).
_FORM_KEYWORDS = ("$schema", "type", "title", "description", "properties", "required")


def form_schema(tp: Any) -> Dict[str, Any]:
    """The form schema of a dataclass or TypedDict: its object schema, with only the
    keywords MCP allows at the top of a form (no `additionalProperties`)."""
    schema = _schema.schema_of(tp)
    if schema.get("type") != "object":
        raise _schema.SchemaError(f"a form is an object: a dataclass or TypedDict, not {tp!r}")
    return {k: v for k, v in schema.items() if k in _FORM_KEYWORDS}


def _dumps(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def _stored(answer: Answer) -> Dict[str, Any]:
    """An answer as the JSON the state keeps (the Rust SDK's format: content as JSON text)."""
    if isinstance(answer, Refused):
        return {"kind": "refused", "reason": answer.reason}
    if isinstance(answer, ElicitAnswer):
        return {"kind": "elicit", "action": answer.action, "content": None if answer.content is None else _dumps(answer.content)}
    if isinstance(answer, SamplingAnswer):
        return {
            "kind": "sample",
            "role": answer.role,
            "content": _dumps(answer.content),
            "text": answer.text,
            "model": answer.model,
            "stop_reason": answer.stop_reason,
        }
    return {"kind": "roots", "roots": [[r.uri, r.name] for r in answer]}


def _loaded(stored: Dict[str, Any]) -> Answer:
    kind = stored.get("kind")
    if kind == "elicit":
        action = stored.get("action")
        content = stored.get("content")
        return ElicitAnswer(
            action if action in ("accept", "decline") else "cancel",
            None if content is None else json.loads(content),
        )
    if kind == "sample":
        return SamplingAnswer(
            "user" if stored.get("role") == "user" else "assistant",
            json.loads(stored["content"]),
            stored.get("text"),
            stored.get("model", ""),
            stored.get("stop_reason"),
        )
    if kind == "roots":
        return [Root(uri, name) for uri, name in stored.get("roots", [])]
    return Refused(str(stored.get("reason", "")))


def _open(state: bytes) -> Optional[Tuple[List[str], List[Tuple[str, Answer]], bytes]]:
    """The SDK's envelope (the keys asked last, the answers so far) and the plugin's own
    bytes, when `state` starts with one."""
    if not state.startswith(MAGIC) or len(state) < 8:
        return None
    (length,) = struct.unpack("<I", state[4:8])
    if len(state) < 8 + length:
        return None
    try:
        envelope = json.loads(state[8 : 8 + length].decode("utf-8"))
        asked = [str(k) for k in envelope["asked"]]
        answers = [(str(k), _loaded(a)) for k, a in envelope["answers"]]
    except (ValueError, KeyError, TypeError):
        return None
    return asked, answers, bytes(state[8 + length :])


def _seal(asked: List[str], answers: List[Tuple[str, Answer]], own: bytes) -> bytes:
    envelope = _dumps({"asked": asked, "answers": [[k, _stored(a)] for k, a in answers]}).encode("utf-8")
    return MAGIC + struct.pack("<I", len(envelope)) + envelope + bytes(own)


# ------------------------------------------------------------------- Input


class Input:
    """The interaction of one call: the answers the host passed (this round's, and those of
    earlier rounds, which the SDK carries in the state), the plugin's own state, and the
    requests recorded in this round. Build one to test a function in plain CPython:
    `Input()` for a first round, `Input(InputAnswers({...}, state))` for a later one — or
    call `Plugin.call_tool(name, arguments, input=...)`, which does it for you."""

    def __init__(self, given: Optional[InputAnswers] = None) -> None:
        self._requests: Dict[str, Request] = {}
        self._together = 0
        self._answers: List[Tuple[str, Answer]] = []
        self.first_round = given is None
        self.state: bytes = b""
        if given is None:
            return
        opened = _open(bytes(given.state))
        asked: Optional[List[str]] = None
        if opened is not None:
            asked, self._answers, self.state = opened
        else:  # not state this SDK wrote: all of it is the plugin's, and every answer counts
            self.state = bytes(given.state)
        for key, answer in given.answers.items():
            wanted = asked is None or key in asked
            if wanted and not any(k == key for k, _ in self._answers):
                self._answers.append((key, answer))

    # The plugin's own state (`input.state`, bytes): empty on the first round, then what it
    # set (or had) when it last asked. It travels with the requests and comes back with the
    # answers — through the client on some transports, signed so it cannot be altered, but
    # readable: keep secrets out. With the SDK's envelope it must stay under 16 KiB.

    def answer(self, key: str) -> Optional[Answer]:
        """The answer under `key`, as the host passed it, if there is one."""
        for k, a in self._answers:
            if k == key:
                return a
        return None

    @property
    def answers(self) -> Dict[str, Answer]:
        """Every answer there is (this round's and earlier rounds'), by key."""
        return dict(self._answers)

    @property
    def requests(self) -> Dict[str, Request]:
        """The requests recorded in this round, by key."""
        return dict(self._requests)

    def can_ask(self, what: str) -> bool:
        """Whether this call may ask for `what` ("elicit-form", "elicit-url", "sample",
        "sample-with-tools", "list-roots"): the operator granted it and the client declared
        it. See `warden_plugin.can_ask`."""
        from .host import can_ask

        return can_ask(what)

    def ask(self, key: str, request: Request) -> Answer:
        """Any request: its answer as the host passed it (a refusal raises `Refused`), or
        `InputPending` after recording it (None inside `together()`)."""
        if not isinstance(key, str) or not _KEY.match(key):
            raise ValueError(f"{key!r} is not a valid key: 1 to 64 characters from A-Z a-z 0-9 _ -")
        answer = self.answer(key)
        if isinstance(answer, Refused):
            raise Refused(answer.reason)
        if answer is not None:
            return answer
        self._requests.setdefault(key, request)
        if self._together:
            return _PENDING
        raise InputPending(key)

    @contextmanager
    def together(self) -> Iterator[None]:
        """Asks several things in one round: inside the block an ask whose answer is not
        there yet records its request and returns None instead of ending the round; the
        round ends (InputPending) at the end of the block if any answer was missing. So

            with input.together():
                ok = input.confirm("ok", "Go ahead?")
                where = input.roots("roots")

        puts both requests to the client at once, and on the next round both are there."""
        before = len(self._requests)
        self._together += 1
        try:
            yield
        finally:
            self._together -= 1
        if len(self._requests) > before:
            raise InputPending(list(self._requests)[before])

    def elicit_form(self, key: str, message: str, requested_schema: Dict[str, Any]) -> ElicitAnswer:
        """A form with your own `requested_schema` (a JSON Schema object), answered as the
        host passed it."""
        answer = self.ask(key, ElicitForm(message, requested_schema))
        if answer is _PENDING:
            return None  # type: ignore[return-value]
        if not isinstance(answer, ElicitAnswer):
            raise _wrong_kind(key, "an elicitation")
        return answer

    def elicit(self, key: str, message: str, schema: Any) -> Elicited[Any]:
        """A form (elicitation, form mode). `schema` is a type — a dataclass or TypedDict
        whose fields are strings, numbers, integers, booleans or Literal/Enum choices (what
        MCP allows), with their descriptions — whose value `content` then is; or a JSON
        Schema object (a dict), whose accepted content is a dict. Content that does not
        match the type raises `Refused`."""
        typed = not isinstance(schema, dict)
        requested = form_schema(schema) if typed else schema
        answer = self.elicit_form(key, message, requested)
        if answer is None:
            return None  # type: ignore[return-value]
        if answer.action != "accept":
            return Elicited(answer.action)
        content = answer.content if answer.content is not None else {}
        if not typed:
            return Elicited("accept", content)
        try:
            return Elicited("accept", _schema.from_json(schema, content, "content"))
        except _schema.ConversionError as error:
            raise Refused(f"the form's content does not match what was asked: {error}") from None

    def confirm(self, key: str, message: str) -> bool:
        """A yes-or-no question: a form with one boolean field, `confirm`. True only when the
        user submitted it checked; False when unchecked, declined or cancelled."""
        answer = self.elicit_form(key, message, CONFIRM_SCHEMA)
        if answer is None:
            return None  # type: ignore[return-value]
        if answer.action != "accept" or answer.content is None:
            return False
        value = answer.content.get("confirm") if isinstance(answer.content, dict) else None
        if not isinstance(value, bool):
            raise Refused(f'the confirmation\'s content is not {{"confirm": bool}}: {_dumps(answer.content)}')
        return value

    def elicit_url(self, key: str, message: str, url: str, elicitation_id: str) -> Action:
        """Asks the user to open `url` (elicitation, URL mode), e.g. to sign in elsewhere;
        the answer is what the user did: "accept", "decline" or "cancel"."""
        answer = self.ask(key, ElicitUrl(message, url, elicitation_id))
        if answer is _PENDING:
            return None  # type: ignore[return-value]
        if not isinstance(answer, ElicitAnswer):
            raise _wrong_kind(key, "an elicitation")
        return answer.action

    def sample(self, key: str, request: Union[SamplingRequest, str, Sequence[Union[Message, str]]], max_tokens: Optional[int] = None) -> SamplingAnswer:
        """Asks the client's model: a `SamplingRequest`, or a prompt (a string, or a list of
        messages) with `max_tokens` (default 256)."""
        if not isinstance(request, SamplingRequest):
            messages = [request] if isinstance(request, str) else list(request)
            request = SamplingRequest(messages, 256 if max_tokens is None else max_tokens)
        elif max_tokens is not None:
            request = SamplingRequest(**{**vars(request), "max_tokens": max_tokens})
        answer = self.ask(key, request.normalised())
        if answer is _PENDING:
            return None  # type: ignore[return-value]
        if not isinstance(answer, SamplingAnswer):
            raise _wrong_kind(key, "a sampling answer")
        return answer

    def roots(self, key: str) -> List[Root]:
        """The client's roots: the folders or URIs it works in."""
        answer = self.ask(key, ListRoots())
        if answer is _PENDING:
            return None  # type: ignore[return-value]
        if not isinstance(answer, list):
            raise _wrong_kind(key, "roots")
        return list(answer)

    def input_required(self) -> Optional[InputRequired]:
        """The `input-required` reply when requests were recorded (the requests, and the
        state: the SDK's envelope with every answer so far, then the plugin's own bytes)."""
        if not self._requests:
            return None
        return InputRequired(dict(self._requests), _seal(list(self._requests), self._answers, self.state))

    def __repr__(self) -> str:
        return (
            f"Input(first_round={self.first_round}, answered={[k for k, _ in self._answers]}, "
            f"state={self.state!r}, requested={list(self._requests)})"
        )


def _wrong_kind(key: str, wanted: str) -> Refused:
    return Refused(f"the answer under {key!r} is not {wanted}")

__all__ = [
    "Answer",
    "CONFIRM_SCHEMA",
    "ElicitAnswer",
    "ElicitForm",
    "ElicitUrl",
    "Elicited",
    "INTERACTIONS",
    "Input",
    "InputAnswers",
    "InputPending",
    "InputRequired",
    "ListRoots",
    "Refused",
    "Root",
    "SamplingAnswer",
    "SamplingRequest",
]
