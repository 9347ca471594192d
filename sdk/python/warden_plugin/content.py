"""What tools return beside plain values, what prompts return, and the errors a
function raises to choose the contract's `error` case."""

from __future__ import annotations

import base64
from dataclasses import dataclass, field
from typing import Any, List, Literal, Optional, Union


@dataclass
class Image:
    """An image in a tool result or prompt message."""

    data: bytes
    mime_type: str = "image/png"


@dataclass
class Audio:
    """Audio in a tool result or prompt message."""

    data: bytes
    mime_type: str = "audio/wav"


@dataclass
class ResourceLink:
    """A link to a resource the client can read."""

    uri: str
    name: str
    description: Optional[str] = None
    mime_type: Optional[str] = None


@dataclass
class EmbeddedResource:
    """A resource's contents inside a tool result or prompt message (`text` or `blob`),
    or one of several contents a resource function returns."""

    uri: str
    text: Optional[str] = None
    blob: Optional[bytes] = None
    mime_type: Optional[str] = None


Content = Union[str, Image, Audio, ResourceLink, EmbeddedResource]
CONTENT_TYPES = (Image, Audio, ResourceLink, EmbeddedResource)


@dataclass
class ToolResult:
    """Full control over a tool's result: content, structured content, isError."""

    content: List[Content] = field(default_factory=list)
    structured_content: Optional[Any] = None
    is_error: bool = False


@dataclass
class Message:
    """One message of a prompt."""

    role: Literal["user", "assistant"]
    content: Content


def UserMessage(content: Content) -> Message:  # noqa: N802 (named like the official SDK's class)
    return Message("user", content)


def AssistantMessage(content: Content) -> Message:  # noqa: N802
    return Message("assistant", content)


@dataclass(frozen=True)
class PromptReference:
    """A completion request for an argument of this prompt."""

    name: str


@dataclass(frozen=True)
class ResourceTemplateReference:
    """A completion request for a variable of this resource template."""

    uri: str


class PluginError(Exception):
    """Base of the errors that become the contract's `error` variant."""

    case = "failed"

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


class NotFound(PluginError):
    """The tool, resource or prompt asked for does not exist (a read of an unknown URI)."""

    case = "not-found"


class InvalidArguments(PluginError):
    """The arguments are wrong; the message tells the model how to fix them."""

    case = "invalid-arguments"


class Failed(PluginError):
    """Anything else that went wrong (for a tool, a plain exception is already an
    `isError` result; this makes it the contract's `failed` error instead)."""

    case = "failed"


def content_json(item: Any) -> dict:
    """A content item as MCP JSON (what `Plugin.call_tool` returns in-process)."""
    if isinstance(item, str):
        return {"type": "text", "text": item}
    if isinstance(item, Image):
        return {"type": "image", "data": base64.b64encode(item.data).decode(), "mimeType": item.mime_type}
    if isinstance(item, Audio):
        return {"type": "audio", "data": base64.b64encode(item.data).decode(), "mimeType": item.mime_type}
    if isinstance(item, ResourceLink):
        out = {"type": "resource_link", "uri": item.uri, "name": item.name}
        if item.description is not None:
            out["description"] = item.description
        if item.mime_type is not None:
            out["mimeType"] = item.mime_type
        return out
    if isinstance(item, EmbeddedResource):
        return {"type": "resource", "resource": contents_json(item)}
    raise TypeError(f"a {type(item).__name__} is not content")


def contents_json(item: EmbeddedResource) -> dict:
    out: dict = {"uri": item.uri}
    if item.mime_type is not None:
        out["mimeType"] = item.mime_type
    if item.blob is not None:
        out["blob"] = base64.b64encode(item.blob).decode()
    else:
        out["text"] = item.text if item.text is not None else ""
    return out
