"""docs/layout.md's module map, from each module's docstring (its first sentence).

    .venv/bin/python scripts/layout_map.py           rewrite the map between its markers
    .venv/bin/python scripts/layout_map.py --check   exit 1 when the committed map differs

tests/test_docs.py runs the check, so a module added, moved or described anew shows in the map.
"""

from __future__ import annotations

import ast
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "src" / "behavegate"
LAYOUT = ROOT / "docs" / "layout.md"
BEGIN, END = "<!-- module-map -->", "<!-- /module-map -->"


def first_sentence(path: Path) -> str:
    doc = ast.get_docstring(ast.parse(path.read_text(encoding="utf-8"))) or ""
    text = " ".join(doc.split())
    cut = text.find(". ")
    return (text if cut == -1 else text[: cut + 1]) or "(no docstring)"


def module_map() -> str:
    lines = [BEGIN, "", "| module | what it holds |", "|---|---|"]
    for path in sorted(PACKAGE.rglob("*.py"), key=lambda p: p.relative_to(PACKAGE).parts):
        if path.name == "__init__.py" and path.parent != PACKAGE and not ast.get_docstring(ast.parse(path.read_text())):
            continue
        name = path.relative_to(PACKAGE).as_posix()
        said = first_sentence(path).replace("|", "\\|")  # a table cell
        lines.append(f"| `{name}` | {said} |")
    return "\n".join([*lines, "", END])


def rewritten(text: str) -> str:
    start, end = text.index(BEGIN), text.index(END) + len(END)
    return text[:start] + module_map() + text[end:]


def main() -> int:
    text = LAYOUT.read_text(encoding="utf-8")
    new = rewritten(text)
    if "--check" in sys.argv:
        return 0 if new == text else 1
    LAYOUT.write_text(new, encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
