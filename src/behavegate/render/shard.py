"""``--format table`` for a shard (``--shard K/N``): what this shard judged, said so
that nobody takes it for the run's verdict (``behavegate merge`` gives that).

A shard judges some attempts of some scenarios: a scenario's verdict, pass rate
and the suite gates need every attempt, so none of them is shown here. Its own
attempts are counted, and the ones that did not pass are listed with why.
"""

from __future__ import annotations

from collections import Counter

from behavegate.model import ScenarioResult, Status, Verdict
from behavegate.report.result import Report
from behavegate.text import one_line

SHOWN = 20  # attempts listed that did not pass


def render(report: Report) -> str:
    shard = report.shard
    assert shard is not None, "render.shard renders a shard's report"
    by_id = {result.scenario.id: result for result in report.results}
    tries = {(sid, attempt): _attempt(by_id[sid], attempt) for sid, attempt in shard.pairs}
    counts = Counter(status for status, _ in tries.values())
    scenarios = len({sid for sid, _ in shard.pairs})
    out = [
        f"Shard {shard.index}/{shard.count}: {len(tries)} attempt{'s' if len(tries) != 1 else ''} of {scenarios} "
        f"scenario{'s' if scenarios != 1 else ''} judged: {counts['pass']} pass, {counts['fail']} fail, "
        f"{counts['incomplete']} incomplete.",
        f"This is not the run's verdict: `behavegate merge` of all {shard.count} shard reports gives it.",
    ]
    troubled = [(pair, status, verdicts) for pair, (status, verdicts) in tries.items() if status != "pass"]
    for (sid, attempt), status, verdicts in troubled[:SHOWN]:
        first = next((v for v in verdicts if v.status == status), None)
        why = f" {first.assertion}: {one_line(first.message, 300)}" if first else ""
        out.append(f"  {one_line(sid)} attempt {attempt + 1} ({status}):{why}")
    if len(troubled) > SHOWN:
        out.append(f"  ... and {len(troubled) - SHOWN} more attempts that did not pass (the JSON report has every one)")
    if report.run_dir:
        out.append(f"Run dir: {report.run_dir}")
    return "\n".join(out)


def _attempt(result: ScenarioResult, index: int) -> tuple[Status, tuple[Verdict, ...]]:
    if result.attempts:
        return result.attempts[index].status, result.attempts[index].verdicts
    return result.status, result.verdicts
