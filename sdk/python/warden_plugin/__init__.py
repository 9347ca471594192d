"""Write a Warden plugin (a `warden:plugin@0.1.0` WebAssembly component) in Python,
with decorators like the official MCP Python SDK's:

    from warden_plugin import Plugin

    app = Plugin("greeter")

    @app.tool()
    def hello(name: str) -> str:
        \"\"\"Greets someone by name.\"\"\"
        return f"Hello, {name}!"

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
from .host import Context, cancelled, log, progress
from .plugin import Plugin, ToolAnnotations
from .schema import Field, SchemaError

__version__ = "0.1.0"

__all__ = [
    "AssistantMessage",
    "Audio",
    "Context",
    "EmbeddedResource",
    "Failed",
    "Field",
    "Image",
    "InvalidArguments",
    "Message",
    "NotFound",
    "Plugin",
    "PluginError",
    "PromptReference",
    "ResourceLink",
    "ResourceTemplateReference",
    "SchemaError",
    "ToolAnnotations",
    "ToolResult",
    "UserMessage",
    "cancelled",
    "log",
    "progress",
]
