"""Contract regexes (``response.matches`` / ``not_matches``) under a time budget.

Python's ``re`` backtracks without bound: ``(a|a)+$`` on thirty ``a`` and a ``b`` runs for
minutes, and a linear engine (RE2) would refuse the backreferences and lookarounds users
write. The ``regex`` package reads the same syntax as ``re`` and stops a search at a
timeout, so each attempt gets one budget for all its patterns; a pattern that does not
finish in it is *incomplete*, never a pass or a failure.
"""

from __future__ import annotations

import time
from collections.abc import Sequence

from behavegate.frozen import Frozen
from behavegate.limits import REGEX_BUDGET_MS


class PatternResult(Frozen):
    match_at: int | None  # where the first match starts; None when there is none
    incomplete: str | None = None  # why the pattern could not be judged


def search_all(patterns: Sequence[str], text: str, budget_ms: float = REGEX_BUDGET_MS) -> tuple[PatternResult, ...]:
    """The first match of each pattern in ``text``, in order, within one shared budget."""
    import regex

    deadline = time.monotonic() + budget_ms / 1000
    results = []
    for pattern in patterns:
        left = deadline - time.monotonic()
        if left <= 0:
            results.append(PatternResult(None, f"regex not run: the attempt's regex time budget of {budget_ms:g} ms was used up"))
            continue
        try:
            # concurrent: release the GIL while matching, so a judge thread never stalls the event loop
            match = regex.search(pattern, text, timeout=left, concurrent=True)
        except TimeoutError:
            results.append(PatternResult(None, f"regex exceeded its time budget of {budget_ms:g} ms"))
            continue
        results.append(PatternResult(match.start() if match else None))
    return tuple(results)
