"""A loaded contract as JSON data, so ``behavegate merge`` need not load its YAML again.

Loading and validating a 10,000-scenario contract is most of what a merge of its
shard reports costs; decoding the contract the shards already loaded takes a
twentieth of that. So each shard report carries, as data, the scenarios whose first
attempt its shard runs (shard 1 also the scenarios no shard runs), each at its position
in the contract, and the contract's other parts (``behavegate.shard.contract_data``).

The data is only a faster way to the same Contract, never a different one:

* a shard writes it only when it decodes back to the very contract it loaded
  (:func:`contract_data` checks the round trip, field by field and as text);
* a merge uses it only when every shard ran and carries it, the positions cover
  the contract exactly once, and the contract file and every file it includes
  still have the SHA-256 the shards read (:func:`contract_from_data`).

Anything else, and the merge loads the contract from its YAML as a single run
does, with every check that brings. A shard report is trusted as much as the
verdicts it already holds: whoever can edit one can edit those.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

import msgspec

from behavegate.files import read_project_text
from behavegate.frozen import Frozen, fields, replace
from behavegate.limits import MAX_RUNS, MAX_TURNS, V2_MAX_INPUT_BYTES, V2_MAX_SCENARIOS
from behavegate.model import Contract, Scenario

FORMAT = 1
FORMULAS = ("scenarios", "runs")  # Gates.formula: a contract's, or an Oxy file's
# Set from where the merge runs, never from the data: paths differ between jobs.
_LOCAL = ("path", "project_root", "scenarios")


def contract_data(contract: Contract, positions: Sequence[int]) -> dict[str, Any] | None:
    """``contract`` as data, with the scenarios at ``positions`` (indexes into
    ``contract.scenarios``); None when the data would not decode to the same contract."""
    rest = {k: v for k, v in _compact(replace(contract, scenarios=())).items() if k not in _LOCAL}
    scenarios = [[position, _compact(contract.scenarios[position])] for position in positions]
    data = {"format": FORMAT, "contract": rest, "count": len(contract.scenarios), "scenarios": scenarios}
    try:
        decoded = _decode(data)
        if decoded is None:
            return None
        head, back = decoded
        # Compared with the local paths left out (they are never carried, and a file name that
        # is not UTF-8 cannot be encoded to compare).
        path, root = Path("contract"), Path(".")
        original = (replace(contract, scenarios=(), path=path, project_root=root), *(contract.scenarios[p] for p in positions))
        again = (replace(head, path=path, project_root=root), *(s for _, s in back))
        if again != original or _text(again) != _text(original):  # the text also holds the compare=False fields
            return None
    except (msgspec.MsgspecError, TypeError, ValueError):  # UnicodeEncodeError among them
        return None
    return data


def whole_contract_data(contract: Contract) -> dict[str, Any] | None:
    """Every scenario of ``contract`` as data: what a run directory carries so that
    ``behavegate replay`` can judge its recorded evidence again (None: it would not round-trip)."""
    return contract_data(contract, range(len(contract.scenarios)))


def carried_contract(data: Any, path: Path) -> Contract | None:
    """The contract a run directory carries (:func:`whole_contract_data`), every scenario at
    its position and within the loader's bounds; None when the data is no such contract.
    Nothing ties it to the contract file but the run's seal: replay re-judges against it."""
    try:
        decoded = _decode(data) if isinstance(data, dict) and data.get("format") == FORMAT else None
        if decoded is None:
            return None
        head, placed = decoded
        if [position for position, _ in placed] != list(range(data["count"])) or not _sound(head, (s for _, s in placed)):
            return None
        return replace(head, path=path, project_root=path.parent, scenarios=tuple(s for _, s in placed))
    except (msgspec.MsgspecError, TypeError, ValueError, RecursionError):
        return None


def written_bytes(data: Mapping[str, Any], depth: int) -> int:
    """The size of ``data`` as a report writes it: indented by two spaces, ``depth``
    levels in (each of its lines that much further)."""
    text = msgspec.json.format(msgspec.json.encode(data), indent=2)
    return len(text) + 2 * depth * text.count(b"\n")


def contract_from_data(parts: Sequence[Any], path: Path, root: Path) -> Contract | None:
    """The contract the shards loaded, from each shard's data (in any order), when the
    data is whole and consistent and ``path`` and its included files are unchanged
    since; None otherwise (the caller loads the contract from its YAML)."""
    try:
        return _from_data(parts, path, root)
    except (msgspec.MsgspecError, TypeError, ValueError, RecursionError):  # data no shard wrote: load the YAML
        return None


def _from_data(parts: Sequence[Any], path: Path, root: Path) -> Contract | None:
    if not parts or any(not isinstance(part, dict) or part.get("format") != FORMAT for part in parts):
        return None
    first = parts[0]
    if any(part.get("contract") != first.get("contract") or part.get("count") != first.get("count") for part in parts):
        return None
    decoded = []
    for part in parts:
        one = _decode(part)
        if one is None:
            return None
        decoded.append(one)
    count = first["count"]
    at: dict[int, Scenario] = {}
    for _, scenarios in decoded:
        for position, scenario in scenarios:
            if not 0 <= position < count or ((known := at.setdefault(position, scenario)) is not scenario and known != scenario):
                return None
    if len(at) != count:
        return None
    head = decoded[0][0]
    if not _sound(head, at.values()) or not _unchanged(path, root, head):
        return None
    return replace(head, path=path, project_root=root, scenarios=tuple(at[p] for p in range(count)))


def _sound(head: Contract, scenarios: Iterable[Scenario]) -> bool:
    """Within the bounds the loader puts on what a merge computes with, by the loader's own
    rules: the version, ids (unique) and tags, runs and turns (the partition lists every attempt),
    rates, the sequential design's error rates (it divides by them and takes their
    logarithms), the gate modes. Data outside them is no contract a shard loaded."""
    from behavegate.contract import rules as f
    from behavegate.contract.v2 import GATES, THRESHOLD_MODES
    from behavegate.contract.v2_run import error_rate
    from behavegate.contract.v2_values import positive_int, positive_number, rate

    def rates(*values: float | None) -> None:
        for value in values:
            if value is not None:
                rate(value, "")

    gates = head.gates
    if head.version not in (1, 2) or gates.threshold_mode not in THRESHOLD_MODES or gates.formula not in FORMULAS:
        return False
    seen: set[str] = set()
    try:
        rates(gates.min_pass_rate, gates.min_score)
        if gates.latency_p95_ms is not None:
            positive_number(gates.latency_p95_ms, "")
        for gate in gates.by_tag:
            if f.safe_id(gate.tag, "") != gate.tag:
                return False
            rates(gate.min_pass_rate, gate.min_score)
        for s in scenarios:
            if s.id in seen or s.gate not in GATES or any(f.safe_id(name, "") != name for name in (s.id, *s.tags)):
                return False
            positive_int(s.runs, "", high=MAX_RUNS)
            positive_int(s.max_turns, "", high=MAX_TURNS)
            rates(s.min_pass_rate)
            for value in msgspec.structs.astuple(s.sequential) if s.sequential is not None else ():
                error_rate(value, "")
            seen.add(s.id)
    except f.Bad:
        return False
    return len(seen) <= V2_MAX_SCENARIOS


def included_digests(names: Sequence[str], contract_path: Path, root: Path) -> dict[str, str]:
    """The SHA-256 of each included file's text, by its name as written (``builtin:``
    libraries ship with behavegate, whose version the shards and the merge share)."""
    from behavegate.contract.includes import include_text

    return {name: _sha256(include_text(name, contract_path.parent, root)) for name in names if not name.startswith("builtin:")}


def _unchanged(path: Path, root: Path, head: Contract) -> bool:
    from behavegate.contract.rules import Bad
    from behavegate.errors import InputError

    try:
        _, text = read_project_text(path, root, "Contract", V2_MAX_INPUT_BYTES)
        return _sha256(text) == head.digest and included_digests(list(head.included), path, root) == dict(head.included)
    except (InputError, Bad, OSError, ValueError):
        return False


def _decode(data: Mapping[str, Any]) -> tuple[Contract, list[tuple[int, Scenario]]] | None:
    scenarios = data.get("scenarios")
    if not isinstance(data.get("contract"), dict) or not isinstance(data.get("count"), int) or not isinstance(scenarios, list):
        return None
    head = msgspec.convert({**data["contract"], "path": "", "project_root": "", "scenarios": []}, Contract, dec_hook=_path)
    placed = msgspec.convert(scenarios, list[tuple[int, Scenario]])
    return head, placed


def _path(kind: type, value: Any) -> Any:
    if kind is Path and isinstance(value, str):
        return Path(value)
    raise NotImplementedError


def _compact(value: Any) -> Any:
    """A record as builtins, leaving out the fields at their default (most of an
    Expectation's); decoding puts the defaults back."""
    if isinstance(value, Frozen):
        shown: dict[str, Any] = {}
        for spec in fields(value):
            item = getattr(value, spec.name)
            if spec.default is not msgspec.NODEFAULT:
                default = spec.default
            elif spec.default_factory is not msgspec.NODEFAULT:
                default = spec.default_factory()
            else:
                shown[spec.name] = _compact(item)
                continue
            if type(item) is not type(default) or item != default:
                shown[spec.name] = _compact(item)
        return shown
    if isinstance(value, list | tuple):
        return [_compact(item) for item in value]
    if isinstance(value, Mapping):
        return {key: _compact(item) for key, item in value.items()}
    if isinstance(value, Path):
        return str(value)
    return value


def _text(records: tuple[Any, ...]) -> bytes:
    return msgspec.json.encode([_compact(record) for record in records])


def _sha256(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()
