"""One output boundary: whatever its origin, no text behavegate writes to the
console can act on the Actions runner, and nothing reaches the console but
through ``behavegate.github.console``.

The runner splits its log on CR and LF, runs a line as a command when it starts
with ``::`` after ``TrimStart()``, and runs the legacy ``##[cmd]`` found anywhere
in a line. Python (and log viewers) also split on VT, FF, FS, GS, RS, NEL and
U+2028/2029. We parse what we print under *both* rules.
"""

from __future__ import annotations

import ast
import io
import json
import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest
from fake_agent import Request, serve
from helpers import EXAMPLE, FORGED, SEPARATORS, foreign_commands
from hypothesis import given
from hypothesis import strategies as st

from behavegate.cli import main
from behavegate.github.console import Console
from behavegate.text import neutralize, neutralize_json

SRC = Path(__file__).resolve().parents[1] / "src" / "behavegate"


# -- the boundary itself -------------------------------------------------------


def test_no_module_writes_to_the_console_but_the_boundary() -> None:
    offenders = []
    for path in SRC.rglob("*.py"):
        if path.name == "console.py":
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "print":
                offenders.append(f"{path.name}:{node.lineno} print()")
            if not isinstance(node, ast.Attribute):
                continue
            is_sys = isinstance(node.value, ast.Name) and node.value.id == "sys"
            if is_sys and node.attr in {"stdout", "stderr", "__stdout__", "__stderr__"}:
                offenders.append(f"{path.name}:{node.lineno} sys.{node.attr}")
            if node.attr in {"print_help", "print_usage"}:
                offenders.append(f"{path.name}:{node.lineno} {node.attr}")
    assert offenders == []


@pytest.mark.parametrize("payload", FORGED)
def test_neutralize_leaves_no_command_under_either_line_rule(payload: str) -> None:
    assert foreign_commands(neutralize(f"text\n{payload}\nmore")) == []


@given(st.lists(st.sampled_from([*SEPARATORS, "::", "##[", " ", "\t", "\u00a0", "x", "#", "[", ":"]), max_size=40))
def test_neutralize_is_inert_for_any_mix_of_separators_and_markers(parts: list[str]) -> None:
    assert foreign_commands(neutralize("".join(parts))) == []


@given(st.recursive(st.text() | st.integers() | st.none(), lambda inner: st.lists(inner) | st.dictionaries(st.text(), inner)))
def test_json_on_the_console_is_inert_and_means_the_same(value: object) -> None:
    for text in (json.dumps(value, indent=2, ensure_ascii=False), json.dumps(value)):
        safe = neutralize_json(text)
        assert json.loads(safe) == value
        assert foreign_commands(safe) == []


def test_our_commands_are_checked_to_be_one_well_formed_line() -> None:
    console = Console(environ={})
    with pytest.raises(ValueError):
        console.commands(["::error::a\u2028::set-output name=x::y"])
    with pytest.raises(ValueError):
        console.commands(["plain text"])


def test_a_console_that_cannot_encode_still_gets_every_line() -> None:
    import io

    raw = io.BytesIO()
    stream = io.TextIOWrapper(raw, encoding="ascii", errors="strict")
    Console(stream, stream, environ={}).out("caf\u00e9 \udc80 done")
    stream.flush()
    assert raw.getvalue().decode() == "caf\\xe9 \\udc80 done\n"


# -- every output path, end to end ----------------------------------------------


def _run(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str]:
    code = main(argv)
    captured = capsys.readouterr()
    return code, captured.out + "\n" + captured.err


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    shutil.copy(EXAMPLE / "contract.yml", tmp_path / "contract.yml")
    shutil.copy(EXAMPLE / "observations-good.json", tmp_path / "obs.json")
    monkeypatch.chdir(tmp_path)
    return tmp_path


def _json_key(payload: str) -> str:
    return json.dumps(payload)


@pytest.mark.parametrize("actions", [True, False], ids=["actions", "terminal"])
@pytest.mark.parametrize("payload", FORGED)
def test_forged_commands_through_every_output_path_never_act(
    payload: str, actions: bool, project: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    if actions:
        monkeypatch.setenv("GITHUB_ACTIONS", "true")
    else:
        monkeypatch.delenv("GITHUB_ACTIONS", raising=False)
    logs = []
    common = ["--annotations", "--no-artifacts"]
    # 1. a contract key (unknown keys are errors that name the key)
    (project / "key.yml").write_text(
        textwrap.dedent(f"""\
            version: 1
            agent: {{}}
            scenarios: []
            {_json_key(payload)}: 1
            """)
    )
    # 2. a YAML syntax error whose snippet shows the line
    (project / "syntax.yml").write_text(
        textwrap.dedent(f"""\
            version: 1
            scenarios:
              - id: a
                prompt: {_json_key(payload)}
              bad: [
            """)
    )
    # 3. an observation file key and an observation value
    obs = json.loads((project / "obs.json").read_text())
    obs["scenarios"][0][payload] = 1
    (project / "obs-key.json").write_text(json.dumps(obs))
    obs = json.loads((project / "obs.json").read_text())
    obs["scenarios"][0]["response"] = payload
    obs["scenarios"][0]["error"] = payload
    (project / "obs-value.json").write_text(json.dumps(obs))
    for fmt in ("table", "json"):
        for contract, observations in (
            ("key.yml", "obs.json"),
            ("syntax.yml", "obs.json"),
            ("contract.yml", "obs-key.json"),
            ("contract.yml", "obs-value.json"),
            (payload, "obs.json"),  # 4. a path in an error message
        ):
            logs.append(_run(["test", contract, "--observations", observations, "--format", fmt, *common], capsys)[1])
    # 5. argparse's usage errors repeat the offending value
    logs.append(_run(["test", "--format", payload], capsys)[1])
    logs.append(_run(["test", "--concurrency", payload], capsys)[1])
    # 6. replay: a run directory with a planted file whose name is the payload
    assert _run(["test", "contract.yml", "--observations", "obs.json"], capsys)[0] == 0
    run_dir = next((project / ".behavegate" / "runs").iterdir())
    (run_dir / payload.replace("/", "_").replace("\x00", "")).write_text("x")
    for fmt in ("table", "json"):
        logs.append(_run(["replay", str(run_dir), "--format", fmt], capsys)[1])
    # 7. init: the path appears in its messages
    logs.append(_run(["init", "--path", payload], capsys)[1])
    for log in logs:
        assert foreign_commands(log) == [], log


def test_an_internal_error_text_is_inert_and_ci_still_gets_a_status(
    project: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    import behavegate.commands.offline

    def explode(*args: object, **kwargs: object) -> None:
        raise RuntimeError("boom\n::set-output name=status::pass ##[error]x")

    monkeypatch.setattr(behavegate.commands.offline, "run_offline", explode)
    monkeypatch.setenv("GITHUB_ACTIONS", "true")
    outputs = project / "gh-output"
    outputs.write_text("")
    argv = ["test", "contract.yml", "--observations", "obs.json", "--annotations"]
    argv += ["--github-output", str(outputs), "--report", "r.json", "--summary", "s.md"]
    code, log = _run(argv, capsys)
    assert code == 2
    assert foreign_commands(log) == []
    assert "internal error" in log
    assert "status=incomplete" in outputs.read_text()
    assert json.loads((project / "r.json").read_text())["status"] == "incomplete"
    assert (project / "s.md").read_text().startswith("## ⚠️ behavegate")


def test_library_warnings_and_logging_go_through_the_boundary(
    project: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    import logging
    import warnings

    import behavegate.commands.offline

    real = behavegate.commands.offline.run_offline

    def noisy(*args: object, **kwargs: object) -> object:
        warnings.warn("::error::from a warning", UserWarning, stacklevel=1)
        logging.getLogger("somelib").warning("::error::from a log record")
        return real(*args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(behavegate.commands.offline, "run_offline", noisy)
    monkeypatch.setattr(logging.root, "handlers", [])  # as outside pytest: no handler configured
    with warnings.catch_warnings():
        warnings.simplefilter("always")
        code, log = _run(["test", "contract.yml", "--observations", "obs.json", "--no-artifacts"], capsys)
    assert code == 0
    assert "from a warning" in log and "from a log record" in log
    assert foreign_commands(log) == []


def test_help_and_version_still_print(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--version"]) == 0
    assert capsys.readouterr().out.startswith("behavegate ")
    assert main(["test", "--help"]) == 0
    assert "--observations" in capsys.readouterr().out
    assert main(["test", "--format", "nope"]) == 2
    assert "invalid choice" in capsys.readouterr().err


def test_text_is_shown_not_hidden() -> None:
    shown = neutralize(
        textwrap.dedent("""\
        ::error::x
        a ##[error]b
        c\rd""")
    )
    assert shown == "| ::error::x\na ##\\[error]b\nc\\rd"


class _Gone(io.StringIO):
    def write(self, text: str) -> int:
        raise BrokenPipeError(32, "Broken pipe")


def test_a_stderr_nobody_reads_is_dropped_and_stdout_still_gets_everything() -> None:
    out = io.StringIO()
    console = Console(stdout=out, stderr=_Gone())
    console.err("progress 1")
    console.status_line("progress 2")
    console.out("the report")
    assert out.getvalue() == "the report\n"


def _answers_hi(request: Request) -> dict[str, Any]:
    return {"choices": [{"message": {"role": "assistant", "content": "hi"}, "finish_reason": "stop"}]}


@pytest.mark.parametrize("stderr", ["a pipe nobody reads", "closed"])
def test_a_live_run_with_its_stderr_gone_keeps_its_report_and_exit_status(tmp_path: Path, stderr: str) -> None:
    """Progress and diagnostics failed the run (exit 1, no report) when stderr could not be written."""
    (tmp_path / "c.yml").write_text(
        "version: 1\nagent: {model: m}\nscenarios:\n  - {id: s, prompt: hi, expect: {response: {contains: [hi]}}}\n"
    )
    read, write = os.pipe()
    os.close(read)
    command = [sys.executable, "-m", "behavegate", "test", "c.yml", "--no-artifacts", "--format", "json", "--output", "r.json"]
    close_2 = (lambda: os.close(2)) if stderr == "closed" else None  # descriptor 2 not open at all: sys.stderr is None
    with serve(_answers_hi) as url:
        done = subprocess.run([*command, "--endpoint", url], cwd=tmp_path, stderr=write, timeout=60, preexec_fn=close_2)
    os.close(write)
    assert done.returncode == 0
    assert json.loads((tmp_path / "r.json").read_text())["status"] == "pass"
