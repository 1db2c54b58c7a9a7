"""docs/contract.md's tables of checks, from the check rows (src/behavegate/contract/checks.py):
one line per row, its key, the report's kind, its doc line and the function that judges it.

    .venv/bin/python scripts/check_tables.py           rewrite both tables between their markers
    .venv/bin/python scripts/check_tables.py --check   exit 1 when the committed tables differ

tests/test_docs.py runs the check, so a check added or described anew shows in the reference.
"""

from __future__ import annotations

import sys
from pathlib import Path

from behavegate.contract.checks import CHECKS

ROOT = Path(__file__).resolve().parents[1]
CONTRACT = ROOT / "docs" / "contract.md"


def markers(version: int) -> tuple[str, str]:
    return f"<!-- checks:v{version} -->", f"<!-- /checks:v{version} -->"


def cell(text: str) -> str:
    return text.replace("|", "\\|")  # a table cell: a bar in the text is no column


def table(version: int) -> str:
    begin, end = markers(version)
    lines = [begin, "", "| key | kind | passes when | judged by |", "|---|---|---|---|"]
    for check in (check for check in CHECKS if check.version == version):
        module = check.judge.partition(".")[0]
        judge = f"[`{check.judge}`](../src/behavegate/judge/{module}.py)"
        lines.append(f"| `{check.key}` | `{check.kind}` | {cell(check.doc)} | {judge} |")
        lines.extend(f"| `{extra.key}` | (modifies `{check.key}`) | {cell(extra.doc)} | |" for extra in check.extras)
    return "\n".join([*lines, "", end])


def rewritten(text: str) -> str:
    for version in (1, 2):
        begin, end = markers(version)
        start, stop = text.index(begin), text.index(end) + len(end)
        text = text[:start] + table(version) + text[stop:]
    return text


def main() -> int:
    text = CONTRACT.read_text(encoding="utf-8")
    new = rewritten(text)
    if "--check" in sys.argv:
        return 0 if new == text else 1
    CONTRACT.write_text(new, encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
