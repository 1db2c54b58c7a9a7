"""``response.judge`` and the ``judge:`` block in the contract: version 2 only, every
problem named with its path and line, the same spec from any mapping."""

from __future__ import annotations

import json
import textwrap
from typing import Any

import jsonschema
import pytest
from helpers import ROOT

from behavegate.contract import rules as f
from behavegate.contract.json_schema import schema
from behavegate.contract.load import parse_contract_text
from behavegate.contract.v2_judge import judge_spec
from behavegate.errors import ContractError
from behavegate.judged import JudgeSpec, JudgeTarget
from behavegate.model import Contract


def load(text: str) -> Contract:
    return parse_contract_text(textwrap.dedent(text), ROOT / "contract.yml", ROOT)


JUDGED = """\
    version: 2
    agent: {model: m}
    judge: {endpoint: "http://127.0.0.1:9/v1/chat/completions", model: judge-m, timeout_seconds: 5, max_requests: 7, max_tokens: 64}
    scenarios:
      - id: capital
        prompt: What is the capital of France?
        expect:
          response:
            judge: {expected: Paris, criteria: names one city, votes: 3}
    """


def test_a_version_2_contract_reads_response_judge_and_the_judge_block() -> None:
    contract = load(JUDGED)
    assert contract.scenarios[0].expect.judge == JudgeSpec("Paris", "names one city", 3)
    assert contract.scenarios[0].assertion_lines["response.judge"] == 9
    assert contract.judge == JudgeTarget("http://127.0.0.1:9/v1/chat/completions", "judge-m", 5.0, 7, 64)


def test_votes_default_to_one_and_criteria_to_none() -> None:
    contract = load(JUDGED.replace("{expected: Paris, criteria: names one city, votes: 3}", "{expected: Paris}"))
    assert contract.scenarios[0].expect.judge == JudgeSpec("Paris")


def test_version_1_refuses_response_judge_and_the_judge_block_as_unknown_keys() -> None:
    with pytest.raises(ContractError) as caught:
        load(JUDGED.replace("version: 2", "version: 1"))
    texts = [str(p.text) for p in caught.value.problems]
    assert "Unknown behavior contract key: judge" in texts
    assert "Unknown behavior contract key: scenarios[0].expect.response.judge" in texts


@pytest.mark.parametrize(
    ("spec", "path", "line"),
    [
        ("{criteria: c}", "scenarios[0].expect.response.judge.expected", 9),
        ("{expected: x, votes: 0}", "scenarios[0].expect.response.judge.votes", 9),
        ("{expected: x, votes: 10}", "scenarios[0].expect.response.judge.votes", 9),
        ("{expected: x, votes: two}", "scenarios[0].expect.response.judge.votes", 9),
        ("{expected: x, verdict: pass}", "scenarios[0].expect.response.judge.verdict", 9),
        ("{expected: '  '}", "scenarios[0].expect.response.judge.expected", 9),
        ("[x]", "scenarios[0].expect.response.judge", 9),
    ],
)
def test_a_bad_judge_spec_names_its_path_and_line(spec: str, path: str, line: int) -> None:
    with pytest.raises(ContractError) as caught:
        load(JUDGED.replace("{expected: Paris, criteria: names one city, votes: 3}", spec))
    assert [(p.path, p.line) for p in caught.value.problems] == [(path, line)]


def test_every_problem_of_one_spec_is_reported_at_once() -> None:
    with pytest.raises(ContractError) as caught:
        load(JUDGED.replace("{expected: Paris, criteria: names one city, votes: 3}", "{votes: 0, bogus: 1}"))
    assert sorted(p.path for p in caught.value.problems) == [
        "scenarios[0].expect.response.judge.bogus",
        "scenarios[0].expect.response.judge.expected",
        "scenarios[0].expect.response.judge.votes",
    ]


@pytest.mark.parametrize(
    ("block", "path"),
    [
        ("{auth_env: GITHUB_TOKEN}", "judge.auth_env"),  # a contract never picks the secret sent
        ("{timeout_seconds: 0}", "judge.timeout_seconds"),
        ("{max_requests: 0}", "judge.max_requests"),
        ("{max_tokens: 0}", "judge.max_tokens"),
        ("{endpoint: 3}", "judge.endpoint"),
    ],
)
def test_a_bad_judge_block_names_its_path(block: str, path: str) -> None:
    text = JUDGED.replace(
        '{endpoint: "http://127.0.0.1:9/v1/chat/completions", model: judge-m, timeout_seconds: 5, max_requests: 7, max_tokens: 64}',
        block,
    )
    with pytest.raises(ContractError) as caught:
        load(text)
    assert [(p.path, p.line) for p in caught.value.problems] == [(path, 3)]


def test_a_spec_reads_from_a_plain_mapping_as_from_a_contract() -> None:
    """Another format's case (an Oxy test file's ``expected``) builds the same spec."""
    c = f.Collector()
    assert judge_spec(c, {"expected": "Paris"}, "cases[0]") == JudgeSpec("Paris")
    assert judge_spec(c, {"expected": "Paris", "votes": 12}, "cases[1]") is None
    assert [(p.path, p.text) for p in c.problems] == [("cases[1].votes", "cases[1].votes must be between 1 and 9")]


def test_the_schema_accepts_the_judge_keys_and_refuses_them_in_version_1() -> None:
    import yaml

    document: Any = yaml.safe_load(textwrap.dedent(JUDGED))
    jsonschema.validate(document, schema())
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate({**document, "version": 1}, schema())
    bad = json.loads(json.dumps(document))
    bad["scenarios"][0]["expect"]["response"]["judge"] = {"criteria": "c"}
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(bad, schema())
