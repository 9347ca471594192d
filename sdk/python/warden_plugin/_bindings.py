"""The export classes componentize-py expects for `warden:plugin/plugin`, mapping
the contract onto a `Plugin`. Imported only inside a component build, where
componentize-py has generated `wit_world` from the contract (warden_plugin/wit)."""

from __future__ import annotations

import json
from contextlib import contextmanager
from typing import Any, Dict, Iterator, List, Optional, Tuple

from componentize_py_types import Err  # type: ignore[import-not-found]
from wit_world import exports as _exports  # type: ignore[import-not-found]

try:  # absent when built for the tools-only world, warden:plugin/tool-plugin
    from wit_world.exports import completions as _completions  # type: ignore[import-not-found]
except ImportError:
    _completions = None
from wit_world.imports import types as t  # type: ignore[import-not-found]

from .host import log
from .content import (
    Audio,
    EmbeddedResource,
    Image,
    PluginError,
    PromptReference,
    ResourceLink,
    ResourceTemplateReference,
)

_ERRORS = {
    "not-found": t.Error_NotFound,
    "invalid-arguments": t.Error_InvalidArguments,
    "failed": t.Error_Failed,
}


def _err(error: PluginError) -> Err:
    return Err(_ERRORS[error.case](error.message))


@contextmanager
def _contract_errors() -> Iterator[None]:
    """What a tool call, resource read or prompt get raises, as the contract's `error`:
    a PluginError as its case, anything else (a bug in the SDK or a bad content
    value) as `failed` with the exception's type and message."""
    try:
        yield
    except PluginError as error:
        raise _err(error) from None
    except Exception as error:
        raise Err(t.Error_Failed(f"{type(error).__name__}: {error}")) from None


def _contents(item: EmbeddedResource) -> Any:
    body = t.ResourceBody_Blob(item.blob) if item.blob is not None else t.ResourceBody_Text(item.text or "")
    return t.ResourceContents(uri=item.uri, mime_type=item.mime_type, body=body)


def _content(item: Any) -> Any:
    if isinstance(item, str):
        return t.Content_Text(item)
    if isinstance(item, Image):
        return t.Content_Image(t.Blob(data=item.data, mime_type=item.mime_type))
    if isinstance(item, Audio):
        return t.Content_Audio(t.Blob(data=item.data, mime_type=item.mime_type))
    if isinstance(item, ResourceLink):
        return t.Content_ResourceLink(
            t.ResourceLink(uri=item.uri, name=item.name, description=item.description, mime_type=item.mime_type)
        )
    if isinstance(item, EmbeddedResource):
        return t.Content_EmbeddedResource(_contents(item))
    raise TypeError(f"a {type(item).__name__} is not content")


def _dumps(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def _base(name: str) -> type:
    return getattr(_exports, name, object)


def export_classes(plugin: Any) -> Dict[str, type]:
    class Tools(_base("Tools")):  # type: ignore[misc]
        def list_tools(self) -> List[Any]:
            out = []
            for tool in plugin._tools.values():
                notes = tool.annotations
                annotations = None
                if notes is not None:
                    annotations = t.ToolAnnotations(
                        title=notes.get("title"),
                        read_only_hint=notes.get("readOnlyHint"),
                        destructive_hint=notes.get("destructiveHint"),
                        idempotent_hint=notes.get("idempotentHint"),
                        open_world_hint=notes.get("openWorldHint"),
                    )
                out.append(
                    t.Tool(
                        name=tool.name,
                        title=tool.title,
                        description=tool.description,
                        input_schema=_dumps(tool.input_schema),
                        output_schema=None if tool.output_schema is None else _dumps(tool.output_schema),
                        annotations=annotations,
                    )
                )
            return out

        def call_tool(self, name: str, arguments: str) -> Any:
            with _contract_errors():
                result = plugin._call(name, json.loads(arguments))
                content = [_content(c) for c in result.content]
            structured = None if result.structured_content is None else _dumps(result.structured_content)
            return t.CallResult(content=content, structured_content=structured, is_error=result.is_error)

    class Resources(_base("Resources")):  # type: ignore[misc]
        def list_resources(self) -> List[Any]:
            return [
                t.ResourceInfo(
                    uri=r.uri, name=r.name, title=r.title, description=r.description, mime_type=r.mime_type, size=None
                )
                for r in plugin._resources.values()
            ]

        def list_resource_templates(self) -> List[Any]:
            return [
                t.ResourceTemplate(
                    uri_template=r.uri, name=r.name, title=r.title, description=r.description, mime_type=r.mime_type
                )
                for r in plugin._templates.values()
            ]

        def read_resource(self, uri: str) -> List[Any]:
            with _contract_errors():
                return [_contents(c) for c in plugin._read(uri)]

    class Prompts(_base("Prompts")):  # type: ignore[misc]
        def list_prompts(self) -> List[Any]:
            return [
                t.Prompt(
                    name=p.name,
                    title=p.title,
                    description=p.description,
                    arguments=[
                        t.PromptArgument(name=a.name, description=a.description, required=a.required) for a in p.params
                    ],
                )
                for p in plugin._prompts.values()
            ]

        def get_prompt(self, name: str, arguments: List[Tuple[str, str]]) -> Any:
            with _contract_errors():
                description, messages = plugin._get_prompt(name, dict(arguments))
                out = [
                    t.PromptMessage(role=t.Role.USER if m.role == "user" else t.Role.ASSISTANT, content=_content(m.content))
                    for m in messages
                ]
            return t.PromptResult(description=description, messages=out)

    class Completions(_base("Completions")):  # type: ignore[misc]
        def complete(self, ref: Any, argument: str, value: str) -> List[str]:
            if _completions is not None and isinstance(ref, _completions.Reference_Prompt):
                target: Any = PromptReference(ref.value)
            else:
                target = ResourceTemplateReference(ref.value)
            try:
                return plugin.complete(target, argument, value)
            except Exception as error:
                log("warning", f"completion of {argument!r} failed: {type(error).__name__}: {error}")
                return []

    # Only the interfaces the world being built exports (all four for
    # warden:plugin/plugin, `tools` alone for warden:plugin/tool-plugin).
    defined = {"Tools": Tools, "Resources": Resources, "Prompts": Prompts, "Completions": Completions}
    return {name: cls for name, cls in defined.items() if hasattr(_exports, name)}
