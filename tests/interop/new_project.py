"""A plugin author's first hour, in one language: `warden new` in a fresh folder outside
the repository, the template README's commands (set up, unit tests), `warden build`,
`warden call` (exit 0, and 2 for arguments the schema refuses), then `warden dev` driven
by the official Python MCP client (mcp 2.3.0, 2025-11-25 wire): the template's `hello`
answers, and an edit that renames it to `greet` and changes its answer is rebuilt,
hot-reloaded and announced with notifications/tools/list_changed.

usage: python new_project.py WARDEN LANG WORKDIR CACHE_DIR [CARGO_TARGET_DIR]

WORKDIR is a new, empty folder outside the repository. CARGO_TARGET_DIR (Rust only)
is shared with other builds so that dependencies compile once. Prints each step with
its time and the component's size; exits 1 if any check failed.
"""

import asyncio
import json
import os
import re
import subprocess
import sys
import time

from mcp import Client, StdioServerParameters
from mcp.types import ToolListChangedNotification

from checks import Checks, texts

# The edit each language's author makes: (file, old, new) replacements that rename the
# tool `hello` to `greet` and make it say "Howdy" instead of "Hello".
EDITS = {
    "rust": [("src/lib.rs", "fn hello(", "fn greet("), ("src/lib.rs", "tools: [hello]", "tools: [greet]"),
             ("src/lib.rs", '"Hello, {}!"', '"Howdy, {}!"')],
    "python": [("app.py", "def hello(", "def greet("), ("app.py", 'f"Hello, {name}!"', 'f"Howdy, {name}!"')],
    "js": [("index.js", "'hello',", "'greet',"), ("hello.js", "`Hello, ${name}!`", "`Howdy, ${name}!`")],
}

SETUP = {
    "rust": [["cargo", "test", "--quiet"]],
    "python": [["python3", "-m", "venv", ".venv"],
               [".venv/bin/pip", "install", "--quiet", "--disable-pip-version-check", "-r", "requirements.txt"],
               ["python3", "-m", "unittest"]],
    "js": [["npm", "install", "--no-audit", "--no-fund", "--loglevel=error"], ["npm", "test", "--silent"]],
}

# How long a step may take on a loaded 2-core machine (a cold Rust build, a cold
# compile of a Python component by a debug Warden).
STEP_TIMEOUT = 900


def step(checks: Checks, what: str, argv: list[str], cwd: str, env=None, want: int = 0) -> subprocess.CompletedProcess:
    started = time.perf_counter()
    done = subprocess.run(argv, cwd=cwd, env=env, capture_output=True, text=True, timeout=STEP_TIMEOUT)
    took = time.perf_counter() - started
    ok = checks.true(f"{what}: exit {want}", done.returncode == want,
                     f"exit {done.returncode}\n--- stdout\n{done.stdout[-3000:]}\n--- stderr\n{done.stderr[-3000:]}")
    print(f"  {what}: exit {done.returncode} in {took:.1f} s{'' if ok else '  (FAILED)'}")
    return done


def save(path: str, text: str) -> None:
    """As an editor saves: a new file renamed over the old one."""
    temporary = path + ".saving"
    with open(temporary, "w") as file:
        file.write(text)
    os.replace(temporary, path)


async def dev(checks: Checks, warden: str, lang: str, project: str, cache: str, target_dir) -> None:
    args = ["dev", project, "--cache-dir", cache]
    if target_dir:
        args += ["--target-dir", target_dir]
    changed = asyncio.Event()
    announced = 0

    async def on_message(message) -> None:
        nonlocal announced
        if isinstance(message, ToolListChangedNotification):
            announced += 1
            changed.set()

    async def tools_once(client, want: list[str], deadline: float) -> list[str]:
        """Lists the tools until they are `want` (waiting for list_changed between tries)."""
        while True:
            changed.clear()
            names = sorted(tool.name for tool in (await client.list_tools()).tools)
            if names == want or time.perf_counter() > deadline:
                return names
            try:
                await asyncio.wait_for(changed.wait(), max(0.1, deadline - time.perf_counter()))
            except asyncio.TimeoutError:
                pass

    # warden dev's stderr (its build and reload lines) into a file the checks read.
    log_path = os.path.join(os.path.dirname(project), f"dev-{lang}.stderr")
    open(log_path, "w").close()
    server = StdioServerParameters(command="sh", args=["-c", f'exec "$0" "$@" 2>>"{log_path}"', warden] + args)
    started = time.perf_counter()
    async with Client(server, mode="legacy", message_handler=on_message) as client:
        names = await tools_once(client, ["hello"], started + STEP_TIMEOUT)
        checks.equal(f"[{lang}] warden dev: the first build serves", names, ["hello"])
        print(f"  warden dev: first build served after {time.perf_counter() - started:.1f} s")
        result = await client.call_tool("hello", {"name": "Ada"})
        checks.equal(f"[{lang}] warden dev: hello", [result.is_error, texts(result)], [False, ["Hello, Ada!"]])

        before = announced
        for file, old, new in EDITS[lang]:
            path = os.path.join(project, file)
            with open(path) as handle:
                text = handle.read()
            checks.true(f"[{lang}] the template's {file} has {old!r}", old in text, "not found")
            save(path, text.replace(old, new))
        edited = time.perf_counter()
        names = await tools_once(client, ["greet"], edited + STEP_TIMEOUT)
        checks.equal(f"[{lang}] warden dev: the edit is hot-reloaded", names, ["greet"])
        checks.true(f"[{lang}] warden dev: tools/list_changed announced it", announced > before,
                    f"{announced - before} notifications")
        print(f"  warden dev: saved → new tool listed in {time.perf_counter() - edited:.1f} s")
        result = await client.call_tool("greet", {"name": "Ada"})
        checks.equal(f"[{lang}] warden dev: greet", [result.is_error, texts(result)], [False, ["Howdy, Ada!"]])
        if lang in SAVES:
            await saves(checks, client, lang, project, log_path)


async def answer_within(client, want: str, deadline: float) -> list[str]:
    """Calls greet until it answers `want` (or the deadline passes)."""
    while True:
        result = texts(await client.call_tool("greet", {"name": "Ada"}))
        if result == [want] or time.perf_counter() > deadline:
            return result
        await asyncio.sleep(0.05)


# For the languages `warden dev` serves through a development build: the file that
# holds the greeting, a save that breaks it, and what the report of that says.
SAVES = {
    "python": ("app.py", ("def greet(", "def greet(:"), "SyntaxError"),
    "js": ("hello.js", ("`Howdy, ${name}!`", "`Howdy, ${name}!`!"), "ERROR: Unexpected"),
}


async def saves(checks: Checks, client, lang: str, project: str, log_path: str) -> None:
    """One build and one reload per save, however the editor writes; a save that breaks
    the plugin leaves the last good one serving; (Python) a new import builds the
    component again. Builds run one after another, so once a save's reload is seen, an
    extra build or reload from an earlier save would have been too."""
    name = f"hello-{lang}"
    file, (old, broken), reported = SAVES[lang]
    app = os.path.join(project, file)

    def log() -> str:
        with open(log_path) as file:
            return file.read()

    def counts() -> tuple[int, int, int]:
        text = log()
        return (text.count(f"warden dev: building {name}… ok in"), text.count(f"reloaded plugin `{name}`"),
                text.count(f"warden dev: building {name}… failed in"))

    async def until(what: str, done) -> None:
        deadline = time.perf_counter() + STEP_TIMEOUT
        while not done() and time.perf_counter() < deadline:
            await asyncio.sleep(0.05)
        checks.true(f"[{lang}] warden dev: {what}", done(), log()[-3000:])

    with open(app) as file:
        howdy = file.read()
    base = counts()
    timings = []

    def save_in_place(text: str) -> None:
        with open(app, "w") as file:
            file.write(text)

    for word, write in [("Hi", save), ("Yo", lambda _path, text: save_in_place(text))]:
        before = counts()
        edited = time.perf_counter()
        write(app, howdy.replace("Howdy", word))
        answer = await answer_within(client, f"{word}, Ada!", edited + STEP_TIMEOUT)
        timings.append(time.perf_counter() - edited)
        checks.equal(f"[{lang}] warden dev: the save ({word}) is the next answer", answer, [f"{word}, Ada!"])
        await until(f"the save ({word}) is reloaded", lambda: counts()[1] > before[1])
    # A save that changes nothing builds nothing: the next save's build is the only one.
    save(app, howdy.replace("Howdy", "Yo"))
    save(app, howdy)
    answer = await answer_within(client, "Howdy, Ada!", time.perf_counter() + STEP_TIMEOUT)
    checks.equal(f"[{lang}] warden dev: back to Howdy", answer, ["Howdy, Ada!"])
    await until("the last save is reloaded", lambda: counts()[1] >= base[1] + 3)
    checks.equal(f"[{lang}] warden dev: one build and one reload per save that changed the sources",
                 [counts()[0] - base[0], counts()[1] - base[1]], [3, 3])
    checks.true(f"[{lang}] warden dev: those saves built no component",
                log().count("(the sources only)") >= 3, log()[-3000:])

    # A save that does not run: reported, and the last good version keeps serving.
    save(app, howdy.replace(old, broken))
    await until("a broken save is reported", lambda: counts()[2] > base[2])
    checks.true(f"[{lang}] warden dev: the report names the error", reported in log(), log()[-3000:])
    result = await client.call_tool("greet", {"name": "Ada"})
    checks.equal(f"[{lang}] warden dev: the last good version keeps serving", texts(result), ["Howdy, Ada!"])
    if lang != "python":
        print(f"  warden dev: save → new answer {', '.join(f'{t:.2f}' for t in timings)} s")
        return

    # A module the component was not built with: built again, then served.
    before = counts()
    save(app, "import csv\n" + howdy.replace('f"Howdy, {name}!"', 'f"{csv.__name__}, {name}!"'))
    edited = time.perf_counter()
    answer = await answer_within(client, "csv, Ada!", edited + STEP_TIMEOUT)
    checks.equal(f"[{lang}] warden dev: a new import is built and served", answer, ["csv, Ada!"])
    await until("the new import's reload", lambda: counts()[1] > before[1])
    checks.equal(f"[{lang}] warden dev: one build and one reload for it",
                 [counts()[0] - before[0], counts()[1] - before[1]], [1, 1])
    print(f"  warden dev: save → new answer {', '.join(f'{t:.2f}' for t in timings)} s; "
          f"a new import {time.perf_counter() - edited:.1f} s")


def main() -> int:
    warden, lang, work, cache = sys.argv[1:5]
    target_dir = sys.argv[5] if len(sys.argv) > 5 else None
    checks = Checks()
    name = f"hello-{lang}"
    project = os.path.join(work, name)
    print(f"== {lang}: warden new {name} --lang {lang} --dir {work}")

    created = step(checks, "warden new", [warden, "new", name, "--lang", lang, "--dir", work], cwd=work)
    checks.true(f"[{lang}] warden new says what it created", f"created {project}" in created.stdout, created.stdout)
    for file in ["README.md", "warden.toml", ".gitignore", "vendor"]:
        checks.true(f"[{lang}] the project has {file}", os.path.exists(os.path.join(project, file)), "missing")
    step(checks, "warden new again (refused: the folder exists)",
         [warden, "new", name, "--lang", lang, "--dir", work], cwd=work, want=1)

    env = dict(os.environ)
    if target_dir:
        env["CARGO_TARGET_DIR"] = target_dir
    for argv in SETUP[lang]:
        step(checks, " ".join(argv), argv, cwd=project, env=env)

    build = [warden, "build"] + (["--target-dir", target_dir] if target_dir else [])
    built = step(checks, "warden build", build, cwd=project)
    lines = built.stdout.splitlines()
    wasm = os.path.join(project, "build", f"{name}.wasm")
    match = re.fullmatch(rf"build/{name}\.wasm \(([0-9.]+) (KiB|MiB)\) in [0-9.]+s", lines[0] if lines else "")
    if checks.true(f"[{lang}] warden build prints the component's path and size", match is not None, built.stdout):
        size = os.path.getsize(wasm)
        shown = float(match.group(1)) * (1024 if match.group(2) == "KiB" else 2**20)
        checks.true(f"[{lang}] the size printed is the file's", abs(shown - size) <= 0.05 * 2**20, f"{shown} vs {size}")
        print(f"  component: {size} bytes ({size / 2**20:.1f} MiB)")
    checks.equal(f"[{lang}] warden build names the manifest", lines[1:],
                 [f"build/{name}.toml (its manifest, from warden.toml)"])
    checks.true(f"[{lang}] build/{name}.toml is warden.toml",
                open(os.path.join(project, "build", f"{name}.toml")).read()
                == open(os.path.join(project, "warden.toml")).read(), "differs")

    called = step(checks, "warden call hello", [warden, "call", wasm, "hello", '{"name": "Ada"}', "--cache-dir", cache],
                  cwd=project)
    result = json.loads(called.stdout or "{}")
    result.pop("resultType", None)
    checks.equal(f"[{lang}] warden call hello", result,
                 {"content": [{"type": "text", "text": "Hello, Ada!"}], "isError": False})
    refused = step(checks, "warden call hello with a number for name (exit 2)",
                   [warden, "call", wasm, "hello", '{"name": 5}', "--cache-dir", cache], cwd=project, want=2)
    checks.true(f"[{lang}] the refusal is an isError result", json.loads(refused.stdout or "{}").get("isError") is True,
                refused.stdout)

    asyncio.run(dev(checks, warden, lang, project, cache, target_dir))
    return checks.report()


if __name__ == "__main__":
    sys.exit(main())
