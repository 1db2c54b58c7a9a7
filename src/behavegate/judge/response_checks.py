"""Checks of the final response: text (contains, excludes, icontains, patterns),
refusal and cited sources. Messages keep skylos's exact wording."""

from __future__ import annotations

from behavegate.judge.evidence import Evidence, checked, incomplete
from behavegate.model import Observation, Verdict

# --- final response -------------------------------------------------------------


def _response_text(assertion: str, kind: str, expected: str, ev: Evidence) -> str | Verdict:
    obs = ev.observation
    if ev.response_gap or obs is None or obs.response is None:
        return incomplete(assertion, kind, ev.response_gap or "final response text was not observed", expected)
    return obs.response


def judge_contains(assertion: str, spec: tuple[int, str], ev: Evidence) -> Verdict:
    expected = spec[1]
    text = _response_text(assertion, "response_contains", expected, ev)
    if isinstance(text, Verdict):
        return text
    return checked(
        assertion,
        "response_contains",
        expected in text,
        f"response contains {expected!r}",
        f"response does not contain {expected!r}",
        expected,
        {"response_length": len(text)},
    )


def judge_excludes(assertion: str, spec: tuple[int, str], ev: Evidence) -> Verdict:
    expected = spec[1]
    text = _response_text(assertion, "response_excludes", expected, ev)
    if isinstance(text, Verdict):
        return text
    return checked(
        assertion,
        "response_excludes",
        expected not in text,
        f"response excludes {expected!r}",
        f"response contains forbidden text {expected!r}",
        expected,
        {"response_length": len(text)},
    )


def _not_observed(what: str, obs: Observation | None) -> str:
    if obs is not None and obs.trace_id is not None:
        return f"explicit {what} evidence was not observed: OpenTelemetry traces do not record it"
    return f"explicit {what} evidence was not observed"  # skylos's words


def judge_refusal(assertion: str, expected: bool, ev: Evidence) -> Verdict:
    obs = ev.observation
    if ev.response_gap or obs is None or obs.refusal is None:
        return incomplete(assertion, "refusal", ev.response_gap or _not_observed("refusal", obs), expected)
    return checked(
        assertion,
        "refusal",
        obs.refusal is expected,
        f"explicit refusal is {expected}",
        f"explicit refusal is {obs.refusal}, expected {expected}",
        expected,
        obs.refusal,
    )


def judge_source(assertion: str, spec: tuple[int, str], ev: Evidence) -> Verdict:
    expected = spec[1]
    obs = ev.observation
    if ev.response_gap or obs is None or obs.sources is None:
        return incomplete(assertion, "source_required", ev.response_gap or _not_observed("source", obs), expected)
    present = expected in obs.sources
    return checked(
        assertion,
        "source_required",
        present,
        f"required source {expected!r} was observed",
        f"required source {expected!r} was not observed",
        expected,
        {"source_count": len(obs.sources), "present": present},
    )


# --- version 2: response text ---------------------------------------------------------------


def judge_icontains(assertion: str, spec: tuple[int, str], ev: Evidence) -> Verdict:
    expected = spec[1]
    text = _response_text(assertion, "response_icontains", expected, ev)
    if isinstance(text, Verdict):
        return text
    found = expected.casefold() in text.casefold()
    return checked(
        assertion,
        "response_icontains",
        found,
        f"response contains {expected!r} (any case)",
        f"expected the response to contain {expected!r} (any case), observed a {len(text)}-character response without it",
        expected,
        {"response_length": len(text)},
    )


def _judge_pattern(assertion: str, pattern: str, ev: Evidence, *, must_match: bool) -> Verdict:
    kind = "response_matches" if must_match else "response_not_matches"
    text = _response_text(assertion, kind, pattern, ev)
    if isinstance(text, Verdict):
        return text
    result = ev.patterns.get(assertion)
    if result is None:  # judged on its own, outside evaluate: the budget is this pattern's alone
        from behavegate.judge.user_regex import search_all

        result = search_all([pattern], text)[0]
    observed = {"response_length": len(text), "match_at": result.match_at}
    if result.incomplete is not None:
        return incomplete(assertion, kind, result.incomplete, pattern, observed)
    found = result.match_at is not None
    if must_match:
        return checked(
            assertion,
            kind,
            found,
            f"response matches /{pattern}/",
            f"expected the response to match /{pattern}/, observed no match in {len(text)} characters",
            pattern,
            observed,
        )
    return checked(
        assertion,
        kind,
        not found,
        f"response does not match /{pattern}/",
        f"expected no match of /{pattern}/, observed one at character {result.match_at or 0}",
        pattern,
        observed,
    )


def judge_matches(assertion: str, spec: tuple[int, str], ev: Evidence) -> Verdict:
    return _judge_pattern(assertion, spec[1], ev, must_match=True)


def judge_not_matches(assertion: str, spec: tuple[int, str], ev: Evidence) -> Verdict:
    return _judge_pattern(assertion, spec[1], ev, must_match=False)
