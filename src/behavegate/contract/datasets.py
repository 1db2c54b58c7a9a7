"""Golden sets from CSV and JSON Lines files: ``queries: golden.csv`` in a golden-query file.

A row is one query; its columns are the golden-query fields (``id``, ``query``,
``expected_tools``, ``expected_elements``, ``category``) and ``expect``, a JSON object
holding any other version-2 expectation. A CSV list cell is a JSON array, or values
separated by ``|``; an empty cell is a column left out. A JSON Lines row is an object
with the same keys, decoded by msgspec into one typed record.

Every problem is named ``file:line:column: message`` (the line a row starts on, counting
the header and the lines a quoted CSV cell spans), including the problems the contract
reader finds later in a row's expectations (:func:`locate`); the row's scenario points at
that file and line too (:func:`placed`), so annotations, SARIF and the summary land on the
row. Sizes are bounded by limits.py: the file as a contract is, rows as scenarios are, each
cell as any text is, and reading stops after ``DATASET_MAX_PROBLEMS`` problems.
"""

from __future__ import annotations

import csv
import hashlib
import io
import json
import re
from collections.abc import Iterable, Iterator, Mapping
from pathlib import Path
from typing import Any

import msgspec

from behavegate.contract import rules as f
from behavegate.errors import ContractError, InputError, Problem
from behavegate.files import read_project_text
from behavegate.frozen import Frozen, replace
from behavegate.limits import DATASET_MAX_PROBLEMS, INPUT_MAX_TEXT, V2_INPUT_MAX_VALUES, V2_MAX_INPUT_BYTES, V2_MAX_SCENARIOS
from behavegate.model import Contract
from behavegate.text import one_line

COLUMNS = ("id", "query", "expected_tools", "expected_elements", "category", "expect")
LIST_COLUMNS = ("expected_tools", "expected_elements")
SUFFIXES = (".csv", ".jsonl")


class Origin(Frozen):
    """Where one query of a golden set came from."""

    file: str  # as the contract names it (relative to the contract's folder)
    line: int  # the line the row starts on (header = 1; a quoted CSV cell may span lines)


class Dataset(Frozen):
    queries: tuple[dict[str, Any], ...]  # each a golden query, as a YAML file would hold it
    origins: tuple[Origin, ...]  # one per query
    digest: str  # SHA-256 of the file's text: kept with the included files' (a shard's merge compares them)


class _Row(msgspec.Struct, forbid_unknown_fields=True):
    """One JSON Lines row: the golden-query fields, typed."""

    query: str
    id: str | None = None
    expected_tools: list[str] | None = None
    expected_elements: list[str] | None = None
    category: str | None = None
    expect: dict[str, Any] | None = None


class _Stop(Exception):
    """Enough problems were found to act on."""


class _Problems:
    def __init__(self, file: str) -> None:
        self.file = file
        self.found: list[Problem] = []

    def add(self, line: int, column: str, message: str) -> None:
        where = f"{self.file}:{line}:{column}" if column else f"{self.file}:{line}"
        self.found.append(Problem(f"{where}: {message}", where, line, file=self.file))
        if len(self.found) >= DATASET_MAX_PROBLEMS:
            raise _Stop


def read_dataset(name: str, contract_dir: Path, root: Path) -> Dataset:
    """The golden set ``name`` (relative to the contract, inside the project), or a ContractError
    listing every problem (each ``file:row:column: message``)."""
    suffix = Path(name).suffix.lower()
    if suffix not in SUFFIXES:
        raise f.Bad(f"queries names a golden set file: a .csv or .jsonl file, got {name!r}")
    try:
        _, text = read_project_text(contract_dir / name, root, "Golden set", V2_MAX_INPUT_BYTES)
    except InputError as error:
        raise f.Bad(error.human) from None
    problems = _Problems(name)
    queries: list[dict[str, Any]] = []
    origins: list[Origin] = []
    rows = _csv_rows(text, problems) if suffix == ".csv" else _jsonl_rows(text.split("\n"), problems)
    try:
        for line, query in rows:
            if len(queries) == V2_MAX_SCENARIOS:
                problems.add(line, "", f"a golden set holds at most {V2_MAX_SCENARIOS:,} rows")
                break
            queries.append(query)
            origins.append(Origin(name, line))
    except _Stop:
        pass
    if problems.found:
        raise ContractError(problems.found)
    if not queries:
        raise f.Bad(f"the golden set {name} holds no rows")
    return Dataset(tuple(queries), tuple(origins), hashlib.sha256(text.encode("utf-8")).hexdigest())


# --- CSV ------------------------------------------------------------------------------------


def _csv_rows(text: str, problems: _Problems) -> Iterator[tuple[int, dict[str, Any]]]:
    # The file reader normalised newlines; a quoted cell keeps its own.
    reader = csv.reader(io.StringIO(text.removeprefix("\ufeff"), newline=""), strict=True)
    records = _records(reader, problems)
    header = next(records, None)
    if header is None:
        return
    columns = _header(header[1], problems)
    for row, cells in records:
        if not any(cell.strip() for cell in cells):
            continue  # a blank line, or a row of empty cells
        if len(cells) != len(header[1]):
            problems.add(row, "", f"has {len(cells)} cells, the header has {len(header[1])}")
            continue
        query: dict[str, Any] = {}
        for column, cell in zip(columns, cells, strict=True):
            if column is None or not cell.strip():
                continue  # an unknown column (reported with the header), or a value left out
            if len(cell) > INPUT_MAX_TEXT:
                problems.add(row, column, f"a cell holds at most {INPUT_MAX_TEXT:,} characters")
            elif column in LIST_COLUMNS:
                query[column] = _list_cell(cell, row, column, problems)
            elif column == "expect":
                query[column] = _expect_cell(cell, row, problems)
            else:
                query[column] = cell
        if columns and "query" not in query and "query" in columns:
            problems.add(row, "query", "is empty: every row asks one query")
        yield row, query


def _records(reader: Any, problems: _Problems) -> Iterator[tuple[int, list[str]]]:
    """Each record with the line it starts on (the reader counts the lines it has read, a
    quoted cell's included); a CSV syntax error is the last problem of the file."""
    while True:
        line = reader.line_num + 1
        try:
            cells = next(reader)
        except StopIteration:
            return
        except csv.Error as error:  # an unclosed quote, a cell past the csv module's field limit
            problems.add(line, "", f"not readable as CSV: {error}")
            return
        yield line, cells


def _header(cells: list[str], problems: _Problems) -> list[str | None]:
    columns: list[str | None] = []
    for cell in cells:
        name = cell.strip()
        if name not in COLUMNS:
            problems.add(1, one_line(name, 80), f"unknown column{f.did_you_mean(name, COLUMNS)}; columns: {', '.join(COLUMNS)}")
            columns.append(None)
        elif name in columns:
            problems.add(1, name, "is a column twice")
            columns.append(None)
        else:
            columns.append(name)
    if "query" not in columns:
        problems.add(1, "query", "no query column: the header must name it (and may name " + ", ".join(COLUMNS[2:]) + ")")
    return columns


def _list_cell(cell: str, row: int, column: str, problems: _Problems) -> list[Any] | None:
    text = cell.strip()
    if not text.startswith("["):
        return [part.strip() for part in text.split("|") if part.strip()]
    value = _json_cell(text, row, column, problems)
    if value is not None and not isinstance(value, list):
        problems.add(row, column, "must be a JSON array, or values separated by |")
        return None
    return value


def _expect_cell(cell: str, row: int, problems: _Problems) -> dict[str, Any] | None:
    value = _json_cell(cell, row, "expect", problems)
    if value is not None and not isinstance(value, dict):
        problems.add(row, "expect", 'must be a JSON object, e.g. {"safety": {"injection": true}}')
        return None
    return value


def _json_cell(text: str, row: int, column: str, problems: _Problems) -> Any:
    try:
        value = json.loads(text, object_pairs_hook=_unique)
        f.check_shape(value, "A cell", V2_INPUT_MAX_VALUES)
    except _Duplicate as duplicate:
        problems.add(row, column, f"key {duplicate} is written twice")
    except f.Bad as bad:
        problems.add(row, column, bad.problem.text)
    except (ValueError, RecursionError) as error:
        problems.add(row, column, f"not valid JSON: {one_line(str(error), 200)}")
    else:
        return value
    return None


class _Duplicate(Exception):
    pass


def _unique(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    found: dict[str, Any] = {}
    for key, value in pairs:
        if key in found:
            raise _Duplicate(json.dumps(key))
        found[key] = value
    return found


# --- JSON Lines -------------------------------------------------------------------------------

_AT = re.compile(r" - at `\$(?:\.([A-Za-z_]+)|\[)?[^`]*`$")
_UNKNOWN = re.compile(r"Object contains unknown field `(.*)`")


def jsonl_queries(name: str, lines: Iterable[str]) -> Iterator[tuple[Origin, dict[str, Any]]]:
    """The golden queries of a JSON Lines golden set read a line at a time, each with where it
    came from (a streamed run: commands/stream_offline.py). The first problem raises
    ContractError; the whole-file limits (rows, size) are the caller's."""
    problems = _Problems(name)
    for line, query in _jsonl_rows(lines, problems):
        if problems.found:
            break
        yield Origin(name, line), query
    if problems.found:
        raise ContractError(problems.found)


def _jsonl_rows(lines: Iterable[str], problems: _Problems) -> Iterator[tuple[int, dict[str, Any]]]:
    decoder = msgspec.json.Decoder(_Row)
    for line, raw in enumerate(lines, start=1):
        if not raw.strip():
            continue
        try:
            record = decoder.decode(raw.encode("utf-8", "surrogatepass"))
        except msgspec.ValidationError as error:
            column, message = _where(str(error))
            problems.add(line, column, message)
            continue
        except msgspec.DecodeError as error:
            problems.add(line, "", f"not valid JSON: {one_line(str(error), 200)}")
            continue
        query = {key: getattr(record, key) for key in COLUMNS if getattr(record, key) is not None}
        try:  # depth, value count and text length, as for any contract (walked only when the line could break them)
            if not f.surely_within(raw, V2_INPUT_MAX_VALUES):
                f.check_shape(query, "A row", V2_INPUT_MAX_VALUES)
        except f.Bad as bad:
            problems.add(line, "", bad.problem.text)
            continue
        yield line, query


def _where(message: str) -> tuple[str, str]:
    """msgspec's message as (column, what is wrong)."""
    unknown = _UNKNOWN.match(message)
    if unknown:
        name = unknown[1]
        return one_line(name, 80), f"unknown key{f.did_you_mean(name, COLUMNS)}; keys: {', '.join(COLUMNS)}"
    if message.startswith("Object missing required field `query`"):
        return "query", "missing: every row asks one query"
    at = _AT.search(message)
    column = (at[1] or "") if at else ""
    return column, (message[: at.start()] if at else message)


# --- problems the contract reader finds in a row ------------------------------------------------

_QUERY = re.compile(r"(?:scenarios|queries)\[(\d+)\](.*)", re.S)
_COLUMN_OF = (
    (".id", "id"),
    (".prompt", "query"),
    (".query", "query"),
    (".tags", "category"),
    (".category", "category"),
    (".expect.tools.set", "expected_tools"),
    (".expected_tools", "expected_tools"),
    (".expect.response.icontains", "expected_elements"),
    (".expected_elements", "expected_elements"),
    (".expect", "expect"),
)


def locate(problem: Problem, origins: Mapping[int, Origin]) -> Problem:
    """A problem in the scenario made from a golden-set row, named by its file, line and column."""
    found = _QUERY.match(problem.path)
    if found is None or int(found[1]) not in origins:
        return problem
    origin, rest = origins[int(found[1])], found[2]
    column = next((name for prefix, name in _COLUMN_OF if rest.startswith(prefix)), "")
    where = f"{origin.file}:{origin.line}:{column}" if column else f"{origin.file}:{origin.line}"
    # "scenarios[2].expect.tools.max_calls must be ..." reads "expect.tools.max_calls must be ...".
    inner = re.compile(rf"\b(?:scenarios|queries)\[{found[1]}\]\.?")
    human = inner.sub("", problem.human) if problem.human else ""
    return Problem(f"{where}: {inner.sub('', problem.text)}", where, origin.line, human, origin.file)


_DUPLICATE_IDS = "Duplicate scenario id: "


def _ids(translated: Mapping[str, Any]) -> list[Any]:
    """Each translated golden query's scenario id, by its index."""
    return [item.get("id") if isinstance(item, dict) else None for item in translated.get("scenarios") or ()]


def located(problems: Iterable[Problem], origins: Mapping[int, Origin], translated: Mapping[str, Any]) -> list[Problem]:
    """The contract reader's problems, those in a golden set's rows named by file and line
    (:func:`locate`); a scenario id repeated among the rows is named at each later row with
    the lines of the rows before it (``translated``: the contract golden_queries made)."""
    out: list[Problem] = []
    for problem in problems:
        if problem.path == "scenarios" and problem.text.startswith(_DUPLICATE_IDS) and (rows := _repeated(origins, translated)):
            out += rows
        else:
            out.append(locate(problem, origins))
    return out


def _repeated(origins: Mapping[int, Origin], translated: Mapping[str, Any]) -> list[Problem]:
    ids = _ids(translated)
    lines: dict[Any, list[Origin]] = {}
    for index, origin in origins.items():
        if index < len(ids) and isinstance(ids[index], str):
            lines.setdefault(ids[index], []).append(origin)
    found: list[Problem] = []
    for scenario_id, rows in lines.items():
        for later, origin in enumerate(rows[1:], start=1):
            where = f"{origin.file}:{origin.line}:id"
            before = ", ".join(str(row.line) for row in rows[:later])
            text = f"{where}: {_DUPLICATE_IDS}{[scenario_id]}, also on line{'s' * (later > 1)} {before}"
            found.append(Problem(text, where, origin.line, file=origin.file))
    return found


def placed(contract: Contract, origins: Mapping[int, Origin], translated: Mapping[str, Any]) -> Contract:
    """The contract with each golden-set row's scenario (``origins``: by its index in the
    ``translated`` contract) at its file and line, every one of its assertions on that line:
    what annotations, SARIF and the summary point at."""
    if not origins:
        return contract
    ids = _ids(translated)
    where = {ids[index]: origin for index, origin in origins.items() if index < len(ids)}
    scenarios = tuple(
        replace(
            scenario,
            file=origin.file,
            line=origin.line,
            assertion_lines={assertion: origin.line for assertion in scenario.assertion_lines},
        )
        if not scenario.source and (origin := where.get(scenario.id)) is not None
        else scenario
        for scenario in contract.scenarios
    )
    return replace(contract, scenarios=scenarios)
