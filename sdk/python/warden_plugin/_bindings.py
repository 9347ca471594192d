"""The export classes componentize-py expects for `warden:plugin/plugin` (contract
`warden:plugin@0.3.0`), mapping the contract onto a `Plugin`: written by hand against
the bindings componentize-py generates (`componentize-py -d warden_plugin/wit -w
warden:plugin/plugin bindings OUT` shows them). Imported only inside a component build,
where componentize-py has generated `wit_world` from the contract (warden_plugin/wit)."""

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
from . import input as i

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


def _role(role: str) -> Any:
    return t.Role.USER if role == "user" else t.Role.ASSISTANT


_TASK_SUPPORT = {
    "forbidden": t.TaskSupport.FORBIDDEN,
    "optional": t.TaskSupport.OPTIONAL,
    "required": t.TaskSupport.REQUIRED,
}

_ACTIONS = {t.ElicitAction.ACCEPT: "accept", t.ElicitAction.DECLINE: "decline", t.ElicitAction.CANCEL: "cancel"}


def _answer(answer: Any) -> i.Answer:
    """A contract `input-answer` as the SDK's (JSON parsed; JSON that does not parse is
    a refusal)."""
    value = answer.value
    if isinstance(answer, t.InputAnswer_Refused):
        return i.Refused(value)
    if isinstance(answer, t.InputAnswer_Roots):
        return [i.Root(r.uri, r.name) for r in value]
    try:
        if isinstance(answer, t.InputAnswer_Elicit):
            return i.ElicitAnswer(_ACTIONS[value.action], None if value.content is None else json.loads(value.content))
        return i.SamplingAnswer(
            "user" if value.role == t.Role.USER else "assistant",
            json.loads(value.content),
            value.text,
            value.model,
            value.stop_reason,
        )
    except ValueError as error:
        return i.Refused(f"the answer is not JSON: {error}")


def _input(given: Optional[Any]) -> Optional[i.InputAnswers]:
    if given is None:
        return None
    return i.InputAnswers({a.key: _answer(a.answer) for a in given.answers}, bytes(given.state))


def _request(request: i.Request) -> Any:
    if isinstance(request, i.ElicitForm):
        return t.InputRequest_ElicitForm(t.ElicitForm(message=request.message, requested_schema=_dumps(request.requested_schema)))
    if isinstance(request, i.ElicitUrl):
        return t.InputRequest_ElicitUrl(
            t.ElicitUrl(message=request.message, url=request.url, elicitation_id=request.elicitation_id)
        )
    if isinstance(request, i.SamplingRequest):
        return t.InputRequest_Sample(
            t.SamplingRequest(
                messages=[t.SamplingMessage(role=_role(m.role), content=_content(m.content)) for m in request.messages],
                system_prompt=request.system_prompt,
                max_tokens=request.max_tokens,
                temperature=None if request.temperature is None else float(request.temperature),
                stop_sequences=list(request.stop_sequences),
                model_preferences=None if request.model_preferences is None else _dumps(request.model_preferences),
                tools=None if request.tools is None else _dumps(request.tools),
            )
        )
    return t.InputRequest_ListRoots()


def _input_required(required: i.InputRequired) -> Any:
    return t.InputRequired(
        requests=[t.KeyedRequest(key=key, request=_request(r)) for key, r in required.requests.items()],
        state=required.state,
    )


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

        def list_tool_execution(self) -> List[Any]:
            return [
                t.ToolExecution(tool=entry["tool"], task_support=_TASK_SUPPORT[entry["taskSupport"]])
                for entry in plugin.list_tool_execution()
            ]

        def call_tool(self, name: str, arguments: str, input: Optional[Any] = None) -> Any:
            with _contract_errors():
                result = plugin._call(name, json.loads(arguments), _input(input))
                if isinstance(result, i.InputRequired):
                    return t.ToolReply_InputRequired(_input_required(result))
                content = [_content(c) for c in result.content]
            structured = None if result.structured_content is None else _dumps(result.structured_content)
            return t.ToolReply_Done(t.CallResult(content=content, structured_content=structured, is_error=result.is_error))

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

        def read_resource(self, uri: str, input: Optional[Any] = None) -> Any:
            with _contract_errors():
                read = plugin._read(uri, _input(input))
                if isinstance(read, i.InputRequired):
                    return t.ReadReply_InputRequired(_input_required(read))
                return t.ReadReply_Done([_contents(c) for c in read])

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

        def get_prompt(self, name: str, arguments: List[Tuple[str, str]], input: Optional[Any] = None) -> Any:
            with _contract_errors():
                got = plugin._get_prompt(name, dict(arguments), _input(input))
                if isinstance(got, i.InputRequired):
                    return t.PromptReply_InputRequired(_input_required(got))
                description, messages = got
                out = [t.PromptMessage(role=_role(m.role), content=_content(m.content)) for m in messages]
            return t.PromptReply_Done(t.PromptResult(description=description, messages=out))

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
