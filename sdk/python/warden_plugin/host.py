"""What the host offers during a call: `log`, `progress`, `cancelled`, `can_ask`.

Inside a component these call the contract's `host` interface. In plain CPython
(unit tests of a plugin's logic) there is no host: `log` writes to stderr,
`progress` does nothing, `cancelled` is False and `can_ask` is True (the test plays
the client, and answers whatever it is asked).
"""

from __future__ import annotations

import sys
from typing import Optional, Union

LEVELS = ("debug", "info", "notice", "warning", "error", "critical", "alert", "emergency")


try:  # imported while the component is initialised, so that it is in the snapshot
    from wit_world.imports import host as _wit_host  # type: ignore[import-not-found]
except ImportError:  # plain CPython
    _wit_host = None


def _host():
    return _wit_host


def log(level: str, message: str) -> None:
    """Sends `message` to the server log, and to the client when it asked for `level`
    (one of debug, info, notice, warning, error, critical, alert, emergency)."""
    if level not in LEVELS:
        raise ValueError(f"log level {level!r} is not one of {', '.join(LEVELS)}")
    host = _host()
    if host is None:
        print(f"[{level}] {message}", file=sys.stderr)
        return
    host.log(host.LogLevel[level.upper()], message)


def progress(progress: Union[int, float], total: Optional[Union[int, float]] = None, message: Optional[str] = None) -> None:
    """Reports progress to the client, when its request asked for it. Values must increase."""
    host = _host()
    if host is not None:
        host.progress(float(progress), None if total is None else float(total), message)


def cancelled() -> bool:
    """True once the client has cancelled the current call: stop and return soon."""
    host = _host()
    return bool(host.cancelled()) if host is not None else False


INTERACTIONS = ("elicit-form", "elicit-url", "sample", "sample-with-tools", "list-roots")


def can_ask(what: str) -> bool:
    """Whether this call may ask for `what` — "elicit-form", "elicit-url", "sample",
    "sample-with-tools" or "list-roots": the operator granted it (the manifest's
    `[interaction]`) and the client declared support for it. Ask only then, or fall back:
    a request not granted is answered `Refused`."""
    if what not in INTERACTIONS:
        raise ValueError(f"{what!r} is not one of {', '.join(INTERACTIONS)}")
    host = _host()
    if host is None:
        return True
    return bool(host.can_ask(host.Interaction[what.upper().replace("-", "_")]))


class Context:
    """What a tool, resource or prompt function receives when it declares a parameter
    annotated `Context` (like the official SDK's `ctx: Context`); it is not part of
    the schema."""

    def log(self, level: str, message: str) -> None:
        log(level, message)

    def debug(self, message: str) -> None:
        log("debug", message)

    def info(self, message: str) -> None:
        log("info", message)

    def warning(self, message: str) -> None:
        log("warning", message)

    def error(self, message: str) -> None:
        log("error", message)

    def report_progress(self, progress_: float, total: Optional[float] = None, message: Optional[str] = None) -> None:
        progress(progress_, total, message)

    @property
    def cancelled(self) -> bool:
        return cancelled()
