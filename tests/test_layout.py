"""The house shows the pipeline: no module imports from a later stage, no
module-level import cycle, no module over ~400 lines, a thin cli.py."""

from __future__ import annotations

import ast
import functools
import re
from pathlib import Path

SRC = Path(__file__).resolve().parents[1] / "src" / "behavegate"
# Foundation first, then the pipeline in order. A module may import from its own
# stage or an earlier one, never a later one.
STAGES = ["foundation", "contract", "evidence", "judge", "report", "render", "github", "commands", "api", "cli"]
FOUNDATION = {
    "__init__",
    "errors",
    "frozen",
    "gating",
    "indented_json",
    "canonical_json",
    "finite_json",
    "json_formats",
    "limits",
    "model",
    "conversation",
    "judged",
    "oxy_file",
    "text",
    "files",
    "cost",
    "http_mapping",
    "magnitude",
}
ENTRY = {"__main__", "cli", "github.action"}  # entry points: the CLI and the Action's
API = {"api", "pytest_plugin"}  # the Python API over the commands, and the pytest plugin over it


def _module(path: Path) -> str:
    return ".".join(("behavegate", *path.relative_to(SRC).with_suffix("").parts)).removesuffix(".__init__")


def _stage(module: str) -> str:
    parts = module.split(".")
    if len(parts) == 1 or parts[1] in FOUNDATION:
        return "foundation"
    if parts[1] in API:
        return "api"
    return "cli" if ".".join(parts[1:]) in ENTRY else parts[1]


def _imports(path: Path, *, top_level_only: bool) -> set[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    nodes = tree.body if top_level_only else list(ast.walk(tree))
    found: set[str] = set()
    for node in nodes:
        if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("behavegate"):
            found.add(node.module)
            found.update(f"{node.module}.{alias.name}" for alias in node.names)
        elif isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names if alias.name.startswith("behavegate"))
    modules = {_module(p) for p in SRC.rglob("*.py")}
    return {name for name in found if name in modules}


def test_no_module_imports_from_a_later_pipeline_stage() -> None:
    late = []
    for path in SRC.rglob("*.py"):
        here = _stage(_module(path))
        for imported in _imports(path, top_level_only=False):
            if STAGES.index(_stage(imported)) > STAGES.index(here):
                late.append(f"{_module(path)} -> {imported}")
    assert late == []


def test_no_import_cycle_even_through_imports_inside_functions() -> None:
    graph = {_module(p): _imports(p, top_level_only=False) for p in SRC.rglob("*.py")}
    state: dict[str, int] = {}

    def visit(node: str, trail: list[str]) -> None:
        state[node] = 1
        for nxt in graph.get(node, ()):
            if nxt == node or nxt.startswith(node + "."):
                continue  # a package importing its own submodule
            if state.get(nxt) == 1:
                raise AssertionError(" -> ".join([*trail, node, nxt]))
            if nxt not in state:
                visit(nxt, [*trail, node])
        state[node] = 2

    for node in graph:
        if node not in state:
            visit(node, [])


def test_modules_are_small_and_the_cli_is_thin() -> None:
    """A module has one job: at most 320 statements (the parser's count, so formatting never
    matters: code is formatted by ruff as it is, never crammed to fit a line count). One that
    grows past it is split by meaning. The CLI only parses and dispatches."""
    import ast

    sizes = {
        _module(p): sum(isinstance(node, ast.stmt) for node in ast.walk(ast.parse(p.read_text(encoding="utf-8"))))
        for p in SRC.rglob("*.py")
    }
    assert {m: n for m, n in sizes.items() if n > 320} == {}
    assert sizes["behavegate.cli"] <= 80


# --- the tests' own house: one fake agent, one module of shared helpers ----------------------

TESTS = Path(__file__).resolve().parent
FAKE = TESTS / "fake_agent.py"
# The live conformance corpus's canned server stays its own: record.py runs it, stdlib only, beside
# the real skylos in a scratch venv to record the answers the corpus replays byte for byte.
SERVER_EXEMPT = {TESTS / "conformance" / "live" / "server.py"}
SERVER_MODULES = {"socketserver", "asyncio.start_server"}
SERVER_NAMES = {"HTTPServer", "ThreadingHTTPServer", "TCPServer", "ThreadingTCPServer", "start_server", "start_unix_server"}
HANDLER_BASES = {"BaseHTTPRequestHandler", "SimpleHTTPRequestHandler", "BaseRequestHandler", "StreamRequestHandler"}
RAW_HOOKS = {"__init__", "answer", "greet"}  # what a RawServer subclass may configure


@functools.cache
def _test_sources() -> tuple[tuple[Path, str], ...]:
    """Every module under tests/ but the conformance cases."""
    paths = sorted(p for p in TESTS.rglob("*.py") if "cases" not in p.relative_to(TESTS).parts)
    return tuple((path, path.read_text(encoding="utf-8")) for path in paths)


def _parsed(mentioning: str) -> list[tuple[Path, ast.Module]]:
    """The modules whose text matches ``mentioning``, parsed: the checks read the syntax, the
    pattern only spares them parsing 1.2 MB of modules that cannot match (seconds on a busy machine)."""
    return [(path, ast.parse(text)) for path, text in _test_sources() if re.search(mentioning, text, re.MULTILINE)]


def _servers_started(tree: ast.AST) -> list[str]:
    """Where a module builds a server of its own: a server class or a handler subclass, a
    listening socket, asyncio's start_server; or a RawServer subclass reaching past its hooks."""
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module in {"socketserver", "http.server"}:
            found += [f"line {node.lineno}: imports {alias.name}" for alias in node.names if alias.name in SERVER_NAMES]
            found += [f"line {node.lineno}: imports socketserver" for _ in [node] if node.module == "socketserver"]
        elif isinstance(node, ast.Import):
            found += [f"line {node.lineno}: imports {a.name}" for a in node.names if a.name in SERVER_MODULES]
        elif isinstance(node, ast.Attribute) and node.attr in SERVER_NAMES | {"listen"}:
            found.append(f"line {node.lineno}: .{node.attr}")
        elif isinstance(node, ast.ClassDef):
            bases = {b.id if isinstance(b, ast.Name) else b.attr if isinstance(b, ast.Attribute) else "" for b in node.bases}
            methods = {item.name for item in node.body if isinstance(item, ast.FunctionDef)}
            if bases & HANDLER_BASES or any(m.startswith("do_") and m[3:].isupper() for m in methods):
                found.append(f"line {node.lineno}: class {node.name} is a request handler")
            if "RawServer" in bases and methods - RAW_HOOKS:
                found.append(f"line {node.lineno}: class {node.name} overrides {sorted(methods - RAW_HOOKS)} of RawServer")
    return found


def test_every_test_that_needs_an_agent_configures_the_one_fake_in_fake_agent_py() -> None:
    started = {
        path.relative_to(TESTS).as_posix(): where
        for path, tree in _parsed(r"server|Server|Handler|listen|def do_[A-Z]")
        if path != FAKE and path not in SERVER_EXEMPT and (where := _servers_started(tree))
    }
    assert started == {}, "serve agents with tests/fake_agent.py (FakeAgent, or RawServer for exact bytes)"
    assert _servers_started(ast.parse(FAKE.read_text(encoding="utf-8")))  # the check sees the one server that exists


def test_no_test_file_imports_from_another_test_file() -> None:
    """Shared builders live in tests/helpers.py (and the fake in tests/fake_agent.py), never in a test_*.py."""
    crossing = {}
    for path, tree in _parsed(r"^\s*(from|import)\s.*\btest_"):
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom):
                names = [node.module or ""]
            elif isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            else:
                continue
            crossing.update(
                {f"{path.relative_to(TESTS)}:{node.lineno}": n for n in names if n.rpartition(".")[2].startswith("test_")}
            )
    assert crossing == {}
