"""Write a Warden plugin (a `warden:plugin@0.3.0` WebAssembly component) in Python,
with decorators like the official MCP Python SDK's:

    from warden_plugin import Plugin

    app = Plugin("greeter")

    @app.tool()
    def hello(name: str) -> str:
        \"\"\"Greets someone by name.\"\"\"
        return f"Hello, {name}!"

A function that declares an `Input` parameter can ask the client for input (a
confirmation, a form, the client's model, its roots) and is called again with the
answers: see `warden_plugin.input`. A long tool can declare that its calls may run as
MCP tasks: `@app.tool(task="optional")` (or `"required"`).

Build it with componentize-py (see README.md):

    componentize-py -d "$(python -m warden_plugin wit)" -w warden:plugin/plugin \\
        componentize app -p . -p <dir holding warden_plugin> -o plugin.wasm
"""

from .content import (
    AssistantMessage,
    Audio,
    EmbeddedResource,
    Failed,
    Image,
    InvalidArguments,
    Message,
    NotFound,
    PluginError,
    PromptReference,
    ResourceLink,
    ResourceTemplateReference,
    ToolResult,
    UserMessage,
)
from .host import Context, can_ask, cancelled, log, progress
from .input import (
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
from .plugin import Plugin, TaskSupport, ToolAnnotations
from .schema import Field, SchemaError

__version__ = "0.3.0"

__all__ = [
    "AssistantMessage",
    "Audio",
    "Context",
    "ElicitAnswer",
    "ElicitForm",
    "ElicitUrl",
    "Elicited",
    "EmbeddedResource",
    "Failed",
    "Field",
    "Image",
    "Input",
    "InputAnswers",
    "InputPending",
    "InputRequired",
    "InvalidArguments",
    "ListRoots",
    "Message",
    "NotFound",
    "Plugin",
    "PluginError",
    "PromptReference",
    "Refused",
    "ResourceLink",
    "ResourceTemplateReference",
    "Root",
    "SamplingAnswer",
    "SamplingRequest",
    "SchemaError",
    "TaskSupport",
    "ToolAnnotations",
    "ToolResult",
    "UserMessage",
    "can_ask",
    "cancelled",
    "log",
    "progress",
]
