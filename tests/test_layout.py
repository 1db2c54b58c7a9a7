"""The house shows the pipeline: no module imports from a later stage, no
module-level import cycle, no module over ~400 lines, a thin cli.py."""

from __future__ import annotations

import ast
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
