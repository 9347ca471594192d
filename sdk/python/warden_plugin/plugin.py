"""`Plugin`: decorators that turn typed Python functions into the tools, resources,
prompts and completions of a `warden:plugin` component."""

from __future__ import annotations

import inspect
import json
import re
import sys
import typing
from dataclasses import dataclass, field
from typing import Any, Callable, Dict, List, Literal, Optional, Tuple, Union

from . import schema as _schema
from .content import (
    CONTENT_TYPES,
    EmbeddedResource,
    InvalidArguments,
    Message,
    NotFound,
    PluginError,
    PromptReference,
    ResourceTemplateReference,
    ToolResult,
    content_json,
    contents_json,
)
from .host import Context
from .input import Input, InputAnswers, InputPending, InputRequired
from .schema import Field, SchemaError

_NAME = re.compile(r"^[A-Za-z0-9_-]{1,64}$")
_SECTION = re.compile(r"^(Args|Arguments|Parameters|Params|Returns|Return|Yields|Raises|Examples?|Notes?):\s*$")
_ARG = re.compile(r"^(\*{0,2}\w+)\s*(?:\([^)]*\))?\s*:\s*(.*)$")

TaskSupport = Literal["forbidden", "optional", "required"]
"""How a tool's calls may run (contract 0.3.0's `task-support`, MCP tasks): `forbidden`,
always an ordinary call; `optional`, a task for a client that supports tasks when the
call outlives a short first wait; `required`, only ever a task."""
TASK_SUPPORT: Tuple[str, ...] = ("forbidden", "optional", "required")


def _docstring(fn: Callable) -> Tuple[Optional[str], Dict[str, str]]:
    """The docstring without its `Args:` section, and that section's descriptions
    (Google style: `name: text` or `name (type): text`, continued on deeper lines)."""
    doc = inspect.getdoc(fn)
    if not doc:
        return None, {}
    kept: List[str] = []
    params: Dict[str, str] = {}
    section: Optional[str] = None
    current: Optional[str] = None
    for line in doc.splitlines():
        header = _SECTION.match(line)
        if header:
            section = header.group(1)
            current = None
            if section in ("Args", "Arguments", "Parameters", "Params"):
                continue
        if section in ("Args", "Arguments", "Parameters", "Params"):
            stripped = line.strip()
            if not stripped:
                continue
            found = _ARG.match(stripped)
            if found and (len(line) - len(line.lstrip())) <= 4:
                current = found.group(1).lstrip("*")
                params[current] = found.group(2).strip()
            elif current is not None:
                params[current] = (params[current] + " " + stripped).strip()
            continue
        kept.append(line)
    text = "\n".join(kept).strip()
    return (text or None), params


def _is_context(hint: Any) -> bool:
    bare, _ = _schema.split_annotated(hint)
    return isinstance(bare, type) and issubclass(bare, Context)


def _is_input(hint: Any) -> bool:
    bare, _ = _schema.split_annotated(hint)
    return isinstance(bare, type) and issubclass(bare, Input)


@dataclass
class _Param:
    name: str
    hint: Any
    required: bool
    default: Any
    description: Optional[str]


def _params(fn: Callable, what: str) -> Tuple[List[_Param], Optional[str], Optional[str], Any, Dict[str, Any]]:
    """A function's parameters (Context and Input ones left out), the names of its
    Context and Input parameters, its return hint and its docstring's descriptions."""
    try:
        hints = typing.get_type_hints(fn, include_extras=True)
    except Exception as error:
        raise SchemaError(f"{what}: cannot read the type hints of {fn.__name__}: {error}") from None
    _, descriptions = _docstring(fn)
    params: List[_Param] = []
    context: Optional[str] = None
    interaction: Optional[str] = None
    for p in inspect.signature(fn).parameters.values():
        if p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD):
            raise SchemaError(f"{what}: *{p.name} has no schema; name every parameter")
        hint = hints.get(p.name, Any)
        if _is_context(hint):
            context = p.name
            continue
        if _is_input(hint):
            interaction = p.name
            continue
        bare, fields = _schema.split_annotated(hint)
        description = next((f.description for f in fields if f.description), None) or descriptions.get(p.name)
        params.append(
            _Param(p.name, hint, p.default is p.empty, None if p.default is p.empty else p.default, description)
        )
    return params, context, interaction, hints.get("return", inspect.Parameter.empty), descriptions


def _run(fn: Callable, kwargs: Dict[str, Any]) -> Any:
    result = fn(**kwargs)
    if inspect.iscoroutine(result):
        # No event loop in a component: a coroutine that awaits no I/O runs to its end.
        try:
            result.send(None)
        except StopIteration as done:
            return done.value
        result.close()
        raise RuntimeError(f"{fn.__name__} awaited something that needs an event loop; plugins run synchronously")
    return result


def _invoke(handler: Union["_Tool", "_Resource", "_Prompt"], kwargs: Dict[str, Any], interaction: Input) -> Any:
    """The one dispatch of a tool, resource or prompt: runs its function on the
    converted arguments (and a Context and the call's Input, if it takes them). A
    PluginError it raises passes through, and so does InputPending (an ask whose answer
    is not there yet); any other exception is what `handler.failed` makes of it."""
    if handler.context:
        kwargs[handler.context] = Context()
    if handler.input:
        kwargs[handler.input] = interaction
    try:
        return _run(handler.fn, kwargs)
    except PluginError:
        raise
    except Exception as error:
        return handler.failed(_message(error))


def _interact(given: Optional[InputAnswers], run: Callable[[Input], Any]) -> Any:
    """Runs `run` with the call's Input: when it recorded requests, the reply is an
    InputRequired whatever `run` returned or raised; otherwise it is `run`'s result."""
    interaction = Input(given)
    try:
        value = run(interaction)
    except InputPending:
        value = None
    except BaseException:
        required = interaction.input_required()
        if required is not None:
            return required
        raise
    required = interaction.input_required()
    return required if required is not None else value


# ---------------------------------------------------------------------------


@dataclass
class _Tool:
    name: str
    title: Optional[str]
    description: str
    fn: Callable
    params: List[_Param]
    context: Optional[str]
    input: Optional[str]
    input_schema: Dict[str, Any]
    output_schema: Optional[Dict[str, Any]]
    wrap: bool  # structured content is {"result": value}
    annotations: Optional[Dict[str, Any]]
    task: Optional[str] = None  # a TaskSupport, or None: not declared (forbidden)

    @staticmethod
    def failed(message: str) -> "ToolResult":
        """A plain exception from a tool is an `isError` result the model reads."""
        return ToolResult([message], None, True)

    def declaration(self) -> Dict[str, Any]:
        out: Dict[str, Any] = {"name": self.name}
        if self.title is not None:
            out["title"] = self.title
        out["description"] = self.description
        out["inputSchema"] = self.input_schema
        if self.output_schema is not None:
            out["outputSchema"] = self.output_schema
        if self.annotations is not None:
            out["annotations"] = self.annotations
        return out


@dataclass
class _Resource:
    uri: str
    name: str
    title: Optional[str]
    description: Optional[str]
    mime_type: Optional[str]
    fn: Callable
    params: List[_Param]
    context: Optional[str]
    input: Optional[str]
    pattern: Optional["re.Pattern[str]"] = None  # templates only
    variables: List[str] = field(default_factory=list)

    @staticmethod
    def failed(message: str) -> Any:
        """A plain exception from a resource is the contract's `failed` error."""
        raise PluginError(message) from None

    def declaration(self) -> Dict[str, Any]:
        out: Dict[str, Any] = {"uriTemplate" if self.pattern else "uri": self.uri, "name": self.name}
        for key, value in (("title", self.title), ("description", self.description), ("mimeType", self.mime_type)):
            if value is not None:
                out[key] = value
        return out


@dataclass
class _Prompt:
    name: str
    title: Optional[str]
    description: Optional[str]
    fn: Callable
    params: List[_Param]
    context: Optional[str]
    input: Optional[str]

    @staticmethod
    def failed(message: str) -> Any:
        """A plain exception from a prompt is the contract's `failed` error."""
        raise PluginError(message) from None

    def declaration(self) -> Dict[str, Any]:
        out: Dict[str, Any] = {"name": self.name}
        if self.title is not None:
            out["title"] = self.title
        if self.description is not None:
            out["description"] = self.description
        out["arguments"] = [
            dict({"name": p.name}, **({"description": p.description} if p.description else {}), required=p.required)
            for p in self.params
        ]
        return out


_TEMPLATE_EXPRESSION = re.compile(r"\{([+]?)([A-Za-z0-9_]+)\}")


def _template_pattern(uri: str) -> Tuple["re.Pattern[str]", List[str]]:
    """A URI template with `{var}` (no `/ ? # , & ; =` in the value) and `{+var}`
    (anything but `? # ,`) expressions, as a regular expression."""
    pattern = "^"
    variables: List[str] = []
    rest = 0
    for found in _TEMPLATE_EXPRESSION.finditer(uri):
        literal = uri[rest : found.start()]
        if "{" in literal or "}" in literal:
            raise SchemaError(f"URI template {uri!r}: only {{name}} and {{+name}} expressions are supported")
        pattern += re.escape(literal)
        pattern += "([^?#,]*)" if found.group(1) == "+" else "([^/?#,&;=]*)"
        variables.append(found.group(2))
        rest = found.end()
    literal = uri[rest:]
    if "{" in literal or "}" in literal:
        raise SchemaError(f"URI template {uri!r}: only {{name}} and {{+name}} expressions are supported")
    return re.compile(pattern + re.escape(literal) + "$"), variables


def _annotations(given: Any, title: Optional[str], hints: Dict[str, Optional[bool]]) -> Optional[Dict[str, Any]]:
    out: Dict[str, Any] = {}
    if given is not None:
        if not isinstance(given, dict):
            given = {k: v for k, v in vars(given).items() if v is not None}
        for key, value in given.items():
            camel = re.sub(r"_([a-z])", lambda m: m.group(1).upper(), key)
            if camel not in ("title", "readOnlyHint", "destructiveHint", "idempotentHint", "openWorldHint"):
                raise SchemaError(f"unknown tool annotation {key!r}")
            out[camel] = value
    for key, value in hints.items():
        if value is not None:
            out[key] = value
    return out or None


@dataclass
class ToolAnnotations:
    """Hints for clients about a tool (claims: Warden serves them never less cautious
    than the plugin's grants allow)."""

    title: Optional[str] = None
    read_only_hint: Optional[bool] = None
    destructive_hint: Optional[bool] = None
    idempotent_hint: Optional[bool] = None
    open_world_hint: Optional[bool] = None


class Plugin:
    """A `warden:plugin` component, described by decorators (like the official MCP
    SDK's `FastMCP`):

        app = Plugin("units")

        @app.tool()
        def convert(value: float, unit: Literal["km", "mi"]) -> float:
            \"\"\"Converts ...\"\"\"

    Creating it defines `Tools`, `Resources`, `Prompts` and `Completions` in the module
    that creates it: the classes componentize-py looks for in the app module.
    """

    def __init__(self, name: str, instructions: Optional[str] = None, *, _module_globals: Optional[dict] = None) -> None:
        self.name = name
        self.instructions = instructions
        self._tools: Dict[str, _Tool] = {}
        self._resources: Dict[str, _Resource] = {}
        self._templates: Dict[str, _Resource] = {}
        self._prompts: Dict[str, _Prompt] = {}
        self._completion: Optional[Callable] = None
        where = _module_globals if _module_globals is not None else sys._getframe(1).f_globals
        for export_name, cls in self.exports().items():
            where.setdefault(export_name, cls)

    def exports(self) -> Dict[str, type]:
        """The export classes for componentize-py (empty outside a component build)."""
        try:
            from . import _bindings
        except ModuleNotFoundError as missing:  # plain CPython: no generated bindings
            if (missing.name or "").split(".")[0] in ("wit_world", "componentize_py_types"):
                return {}
            raise
        return _bindings.export_classes(self)

    # ------------------------------------------------------------------ tools

    def tool(
        self,
        name: Optional[Union[str, Callable]] = None,
        title: Optional[str] = None,
        description: Optional[str] = None,
        annotations: Optional[Union[ToolAnnotations, Dict[str, Any]]] = None,
        structured_output: Optional[bool] = None,
        *,
        read_only_hint: Optional[bool] = None,
        destructive_hint: Optional[bool] = None,
        idempotent_hint: Optional[bool] = None,
        open_world_hint: Optional[bool] = None,
        task: Optional[TaskSupport] = None,
    ) -> Callable:
        """Registers a function as a tool: its name (or `name`), its docstring (or
        `description`; an `Args:` section describes the parameters), its parameters'
        type hints as the input schema, its return hint as the output schema.

        `task` declares whether its calls may run as MCP tasks (`"forbidden"`,
        `"optional"` or `"required"`; left out, the tool is not listed and so
        forbidden). The operator's manifest (`[tasks]`) decides over it."""
        if callable(name):
            return self.tool()(name)

        def register(fn: Callable) -> Callable:
            self.add_tool(
                fn,
                name=name,
                title=title,
                description=description,
                annotations=annotations,
                structured_output=structured_output,
                read_only_hint=read_only_hint,
                destructive_hint=destructive_hint,
                idempotent_hint=idempotent_hint,
                open_world_hint=open_world_hint,
                task=task,
            )
            return fn

        return register

    def add_tool(
        self,
        fn: Callable,
        name: Optional[str] = None,
        title: Optional[str] = None,
        description: Optional[str] = None,
        annotations: Optional[Union[ToolAnnotations, Dict[str, Any]]] = None,
        structured_output: Optional[bool] = None,
        read_only_hint: Optional[bool] = None,
        destructive_hint: Optional[bool] = None,
        idempotent_hint: Optional[bool] = None,
        open_world_hint: Optional[bool] = None,
        task: Optional[TaskSupport] = None,
    ) -> None:
        name = name or fn.__name__
        what = f"tool {name!r}"
        if not _NAME.match(name):
            raise SchemaError(f"{what}: a tool name is 1 to 64 characters from A-Z a-z 0-9 _ -")
        if name in self._tools:
            raise SchemaError(f"{what} is registered twice")
        if task is not None and (not isinstance(task, str) or task not in TASK_SUPPORT):
            raise SchemaError(
                f"{what}: task={task!r} is not a task support: write 'forbidden', 'optional' or "
                "'required', or leave task out (then the tool is forbidden to run as a task)"
            )
        params, context, interaction, returns, _ = _params(fn, what)
        description = description or _docstring(fn)[0]
        if not description:
            raise SchemaError(f"{what}: needs a description (a docstring, or description=...)")
        properties: Dict[str, Any] = {}
        for p in params:
            prop = _schema.schema_of(p.hint)
            if p.description and "description" not in prop:
                prop["description"] = p.description
            if not p.required:
                try:
                    prop.setdefault("default", _schema.to_json(p.default))
                except (TypeError, ValueError):
                    pass
            properties[p.name] = prop
        input_schema: Dict[str, Any] = {"type": "object", "properties": properties}
        required = [p.name for p in params if p.required]
        if required:
            input_schema["required"] = required
        input_schema["additionalProperties"] = False
        output_schema, wrap = self._output_schema(returns, structured_output, what)
        self._tools[name] = _Tool(
            name=name,
            title=title,
            description=description,
            fn=fn,
            params=params,
            context=context,
            input=interaction,
            input_schema=input_schema,
            output_schema=output_schema,
            wrap=wrap,
            annotations=_annotations(
                annotations,
                title,
                {
                    "readOnlyHint": read_only_hint,
                    "destructiveHint": destructive_hint,
                    "idempotentHint": idempotent_hint,
                    "openWorldHint": open_world_hint,
                },
            ),
            task=task,
        )

    @staticmethod
    def _output_schema(returns: Any, structured: Optional[bool], what: str) -> Tuple[Optional[Dict[str, Any]], bool]:
        bare, _ = _schema.split_annotated(returns)
        if structured is False or bare is inspect.Parameter.empty or bare is None or bare is type(None):
            return None, False
        if bare is ToolResult or _is_content_hint(bare):
            if structured:
                raise SchemaError(f"{what}: content and ToolResult return values have no output schema")
            return None, False
        if bare is str and not structured:
            return None, False
        schema = _schema.schema_of(returns)
        if _schema.is_object_schema(schema):
            return schema, False
        return (
            {"type": "object", "properties": {"result": schema}, "required": ["result"], "additionalProperties": False},
            True,
        )

    def list_tools(self) -> List[Dict[str, Any]]:
        """The tools as MCP declares them (`tools/list`)."""
        return [t.declaration() for t in self._tools.values()]

    def list_tool_execution(self) -> List[Dict[str, str]]:
        """How the tools declared with `task=` may run, in registration order: one
        `{"tool": name, "taskSupport": value}` per such tool (the contract's
        `list-tool-execution`). A tool not listed is forbidden to run as a task; the
        operator's manifest (`[tasks]`) decides over all of it."""
        return [{"tool": t.name, "taskSupport": t.task} for t in self._tools.values() if t.task is not None]

    def call_tool(
        self, name: str, arguments: Dict[str, Any], input: Optional[InputAnswers] = None
    ) -> Union[Dict[str, Any], InputRequired]:
        """Runs a tool in-process, as `tools/call` would after Warden validated the
        arguments, and returns the MCP result (`content`, `structuredContent`,
        `isError`); raises NotFound / InvalidArguments / Failed for the contract's
        `error` cases. For unit tests of a plugin in plain CPython.

        A tool that asks for input (an `Input` parameter) returns an InputRequired on
        the round that asks; call again with the same arguments and
        `input=InputAnswers({key: answer, ...}, required.state)`, as Warden would."""
        result = self._call(name, arguments, input)
        if isinstance(result, InputRequired):
            return result
        out: Dict[str, Any] = {"content": [content_json(c) for c in result.content]}
        if result.structured_content is not None:
            out["structuredContent"] = result.structured_content
        out["isError"] = result.is_error
        return out

    def _call(self, name: str, arguments: Dict[str, Any], input: Optional[InputAnswers] = None) -> Union[ToolResult, InputRequired]:
        tool = self._tools.get(name)
        if tool is None:
            raise NotFound(f"tool `{name}`")
        kwargs = _convert(tool.params, arguments, _schema.from_json)
        value = _interact(input, lambda interaction: _invoke(tool, kwargs, interaction))
        if isinstance(value, InputRequired):
            return value
        try:
            return self._result(tool, value)
        except (TypeError, ValueError) as error:
            return ToolResult([f"tool {name!r} returned a value that cannot be sent: {error}"], None, True)

    @staticmethod
    def _result(tool: _Tool, value: Any) -> ToolResult:
        if isinstance(value, ToolResult):
            structured = value.structured_content
            return ToolResult(list(value.content), None if structured is None else _schema.to_json(structured), value.is_error)
        if tool.output_schema is not None:
            data = _schema.to_json(value)
            if tool.wrap:
                text = data if isinstance(data, str) else _dumps(data)
                return ToolResult([text], {"result": data})
            return ToolResult([_dumps(data)], data)
        if value is None:
            return ToolResult([])
        if isinstance(value, (str,) + CONTENT_TYPES):
            return ToolResult([value])
        if isinstance(value, (list, tuple)) and all(isinstance(v, (str,) + CONTENT_TYPES) for v in value):
            return ToolResult(list(value))
        data = _schema.to_json(value)
        return ToolResult([data if isinstance(data, str) else _dumps(data)])

    # -------------------------------------------------------------- resources

    def resource(
        self,
        uri: str,
        name: Optional[str] = None,
        title: Optional[str] = None,
        description: Optional[str] = None,
        mime_type: Optional[str] = None,
    ) -> Callable:
        """Registers a function as a resource (`uri`), or as a resource template when
        `uri` has `{variables}`: each is a parameter of the function. Return a str
        (text), bytes (a blob), an EmbeddedResource or a list of them, or any value
        (sent as JSON)."""

        def register(fn: Callable) -> Callable:
            what = f"resource {uri!r}"
            params, context, interaction, returns, _ = _params(fn, what)
            doc = description or _docstring(fn)[0]
            mime = mime_type or _mime_of(returns)
            resource = _Resource(uri, name or fn.__name__, title, doc, mime, fn, params, context, interaction)
            if "{" in uri:
                resource.pattern, resource.variables = _template_pattern(uri)
                names = {p.name for p in params}
                for variable in resource.variables:
                    if variable not in names:
                        raise SchemaError(f"{what}: {{{variable}}} is not a parameter of {fn.__name__}")
                for p in params:
                    if p.required and p.name not in resource.variables:
                        raise SchemaError(f"{what}: parameter {p.name!r} is not a variable of the template")
                if uri in self._templates:
                    raise SchemaError(f"{what} is registered twice")
                self._templates[uri] = resource
            else:
                if any(p.required for p in params):
                    raise SchemaError(f"{what}: a resource without {{variables}} takes no arguments")
                if uri in self._resources:
                    raise SchemaError(f"{what} is registered twice")
                self._resources[uri] = resource
            return fn

        return register

    def list_resources(self) -> List[Dict[str, Any]]:
        return [r.declaration() for r in self._resources.values()]

    def list_resource_templates(self) -> List[Dict[str, Any]]:
        return [r.declaration() for r in self._templates.values()]

    def read_resource(self, uri: str, input: Optional[InputAnswers] = None) -> Union[List[Dict[str, Any]], InputRequired]:
        """`resources/read` in-process: the contents as MCP JSON (or an InputRequired,
        as for `call_tool`)."""
        read = self._read(uri, input)
        if isinstance(read, InputRequired):
            return read
        return [contents_json(c) for c in read]

    def _read(self, uri: str, input: Optional[InputAnswers] = None) -> Union[List[EmbeddedResource], InputRequired]:
        resource = self._resources.get(uri)
        kwargs: Dict[str, Any] = {}
        if resource is None:
            for template in self._templates.values():
                assert template.pattern is not None
                found = template.pattern.match(uri)
                if found:
                    resource = template
                    texts = {v: unquote(found.group(i + 1)) for i, v in enumerate(template.variables)}
                    kwargs = _convert(template.params, texts, _schema.from_text)
                    break
        if resource is None:
            raise NotFound(uri)
        found_resource = resource
        value = _interact(input, lambda interaction: _invoke(found_resource, kwargs, interaction))
        if isinstance(value, InputRequired):
            return value
        return _contents(uri, resource.mime_type, value)

    # ---------------------------------------------------------------- prompts

    def prompt(self, name: Optional[Union[str, Callable]] = None, title: Optional[str] = None, description: Optional[str] = None) -> Callable:
        """Registers a function as a prompt: its parameters are the prompt's
        arguments (required unless they have a default; typed ones are converted
        from the text the client sends). Return a str (one user message), a Message
        (UserMessage / AssistantMessage) or a list of them."""
        if callable(name):
            return self.prompt()(name)

        def register(fn: Callable) -> Callable:
            prompt_name = name or fn.__name__
            what = f"prompt {prompt_name!r}"
            params, context, interaction, _, _ = _params(fn, what)
            if prompt_name in self._prompts:
                raise SchemaError(f"{what} is registered twice")
            self._prompts[prompt_name] = _Prompt(
                prompt_name, title, description or _docstring(fn)[0], fn, params, context, interaction
            )
            return fn

        return register

    def list_prompts(self) -> List[Dict[str, Any]]:
        return [p.declaration() for p in self._prompts.values()]

    def get_prompt(
        self, name: str, arguments: Dict[str, str], input: Optional[InputAnswers] = None
    ) -> Union[Dict[str, Any], InputRequired]:
        """`prompts/get` in-process: `description` and `messages` as MCP JSON (or an
        InputRequired, as for `call_tool`)."""
        got = self._get_prompt(name, arguments, input)
        if isinstance(got, InputRequired):
            return got
        description, messages = got
        out: Dict[str, Any] = {}
        if description is not None:
            out["description"] = description
        out["messages"] = [{"role": m.role, "content": content_json(m.content)} for m in messages]
        return out

    def _get_prompt(
        self, name: str, arguments: Dict[str, str], input: Optional[InputAnswers] = None
    ) -> Union[Tuple[Optional[str], List[Message]], InputRequired]:
        prompt = self._prompts.get(name)
        if prompt is None:
            raise NotFound(f"prompt `{name}`")
        kwargs = _convert(prompt.params, arguments, _schema.from_text)
        value = _interact(input, lambda interaction: _invoke(prompt, kwargs, interaction))
        if isinstance(value, InputRequired):
            return value
        items = value if isinstance(value, (list, tuple)) else [value]
        messages: List[Message] = []
        for item in items:
            if isinstance(item, Message):
                messages.append(item)
            elif isinstance(item, dict) and "role" in item and "content" in item:
                messages.append(Message(item["role"], item["content"]))
            elif isinstance(item, (str,) + CONTENT_TYPES):
                messages.append(Message("user", item))
            else:
                raise PluginError(f"prompt {name!r} returned a {type(item).__name__}, not a message")
        return prompt.description, messages

    # ------------------------------------------------------------ completions

    def completion(self) -> Callable:
        """Registers the completion handler: `fn(ref, argument, value)` with `ref` a
        PromptReference or ResourceTemplateReference, returning the suggestions (or
        None to fall back to the automatic ones: the values of a Literal, Enum or
        bool argument that start with `value`)."""

        def register(fn: Callable) -> Callable:
            self._completion = fn
            return fn

        return register

    def complete(self, ref: Union[PromptReference, ResourceTemplateReference], argument: str, value: str) -> List[str]:
        if self._completion is not None:
            got = _run(self._completion, {"ref": ref, "argument": argument, "value": value})
            if got is not None:
                return [str(v) for v in got]
        if isinstance(ref, PromptReference):
            owner = self._prompts.get(ref.name)
        else:
            owner = self._templates.get(ref.uri)
        if owner is None:
            return []
        for p in owner.params:
            if p.name == argument:
                choices = _schema.text_choices(p.hint) or []
                return [c for c in choices if c.startswith(value)]
        return []


def _is_content_hint(tp: Any) -> bool:
    if isinstance(tp, type) and issubclass(tp, CONTENT_TYPES):
        return True
    origin = typing.get_origin(tp)
    args = typing.get_args(tp)
    if origin in (list, tuple) or origin in _schema._UNION_TYPES:
        return bool(args) and all(a is Ellipsis or a is str or _is_content_hint(a) for a in args) and any(
            a is not str and a is not Ellipsis for a in args
        )
    return False


_PERCENT = re.compile(r"(?:%[0-9A-Fa-f]{2})+")


def unquote(text: str) -> str:
    """Percent-decodes a URI template variable (UTF-8; invalid bytes replaced)."""
    return _PERCENT.sub(lambda m: bytes.fromhex(m.group(0).replace("%", "")).decode("utf-8", "replace"), text)


def _mime_of(returns: Any) -> Optional[str]:
    bare, _ = _schema.split_annotated(returns)
    if bare is str:
        return "text/plain"
    if bare is bytes:
        return "application/octet-stream"
    if bare is inspect.Parameter.empty or bare is EmbeddedResource:
        return None
    if typing.get_origin(bare) is list and typing.get_args(bare) and typing.get_args(bare)[0] is EmbeddedResource:
        return None
    return "application/json"


def _contents(uri: str, mime: Optional[str], value: Any) -> List[EmbeddedResource]:
    if isinstance(value, EmbeddedResource):
        return [value]
    if isinstance(value, list) and value and all(isinstance(v, EmbeddedResource) for v in value):
        return list(value)
    if isinstance(value, str):
        return [EmbeddedResource(uri, text=value, mime_type=mime)]
    if isinstance(value, (bytes, bytearray)):
        return [EmbeddedResource(uri, blob=bytes(value), mime_type=mime)]
    return [EmbeddedResource(uri, text=_dumps(_schema.to_json(value)), mime_type=mime or "application/json")]


def _convert(params: List[_Param], given: Dict[str, Any], convert: Callable) -> Dict[str, Any]:
    kwargs: Dict[str, Any] = {}
    for p in params:
        if p.name in given:
            try:
                kwargs[p.name] = convert(p.hint, given[p.name], p.name)
            except _schema.ConversionError as error:
                raise InvalidArguments(str(error)) from None
        elif p.required:
            raise InvalidArguments(f"missing argument {p.name!r}")
    return kwargs


def _message(error: BaseException) -> str:
    return str(error) or type(error).__name__


def _dumps(data: Any) -> str:
    return json.dumps(data, ensure_ascii=False, separators=(",", ":"), allow_nan=False)


__all__ = ["Plugin", "TaskSupport", "ToolAnnotations", "Field"]
