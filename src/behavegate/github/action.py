"""The GitHub Action's entrypoint: ``INPUT_*`` variables in, one behavegate run out.

Inputs are read once, the way @actions/core reads them: the name upper-cased
with hyphens kept, the value trimmed, booleans only ``true|True|TRUE|false|
False|FALSE``. An input that is not set at all takes action.yml's default here
too: ``uses: docker://ghcr.io/<owner>/behavegate:<version>`` has no action.yml,
so the runner passes only what the workflow wrote under ``with:``. A token named
by ``auth-env`` is masked before anything else is printed. Files written into
the workspace are given back to its owner, since the container runs as root.
"""

from __future__ import annotations

import contextlib
import enum
import os
from collections.abc import Mapping
from pathlib import Path

from behavegate.errors import UsageError
from behavegate.frozen import Frozen
from behavegate.github.console import Console
from behavegate.render.annotations import command

TRUE, FALSE = {"true", "True", "TRUE"}, {"false", "False", "FALSE"}


class Kind(enum.Enum):
    """How an input becomes CLI arguments."""

    VALUE = "value"  # --flag VALUE
    SWITCH = "switch"  # true: --flag; false or absent: nothing
    ITEMS = "items"  # --flag A --flag B: one per line, commas also separate
    LINES = "lines"  # --flag=A --flag=B: one per line (values hold commas, or start with "-")


class FlagInput(Frozen):
    """An input that is exactly a CLI flag: absent (or empty) is the flag absent, so the
    CLI's default (and what it decides from the contract) holds; written is the flag."""

    name: str
    kind: Kind
    flag: str = ""  # the CLI flag; default: --<name>

    @property
    def cli_flag(self) -> str:
        return self.flag or f"--{self.name}"


# Every input that passes straight to the CLI, in the order the CLI is given them. The
# Action's own inputs (merge, report, junit, summary, summary-file, html, sarif,
# annotations, artifacts, comment, github-token, working-directory) are its views
# and set-up, handled below. tests/test_action.py holds each row to its CLI flag.
TEST_FLAGS = (
    FlagInput("observations", Kind.VALUE),
    FlagInput("traces", Kind.ITEMS),
    FlagInput("trace-format", Kind.VALUE),
    FlagInput("trace-bind", Kind.VALUE),
    FlagInput("trace-attribute", Kind.VALUE),
    FlagInput("endpoint", Kind.VALUE),
    FlagInput("allow-contract-endpoint", Kind.SWITCH),
    FlagInput("allow-remote", Kind.SWITCH),
    FlagInput("allow-host", Kind.ITEMS),
    FlagInput("mcp-listen", Kind.VALUE),
    FlagInput("mcp-port", Kind.VALUE),
    FlagInput("tools-mcp", Kind.VALUE),
    FlagInput("auth-env", Kind.VALUE),
    FlagInput("judge-endpoint", Kind.VALUE),
    FlagInput("judge-model", Kind.VALUE),
    FlagInput("judge-auth-env", Kind.VALUE),
    FlagInput("judge-max-requests", Kind.VALUE),
    FlagInput("judge-timeout", Kind.VALUE),
    FlagInput("judge-max-tokens", Kind.VALUE),
    FlagInput("judge-allow-remote", Kind.SWITCH),
    FlagInput("judge-allow-contract-endpoint", Kind.SWITCH),
    FlagInput("concurrency", Kind.VALUE),
    FlagInput("retries", Kind.VALUE),
    FlagInput("save-observations", Kind.VALUE),
    FlagInput("scenario", Kind.ITEMS),
    FlagInput("tag", Kind.ITEMS),
    FlagInput("case", Kind.LINES),
    FlagInput("runs", Kind.VALUE),
    FlagInput("min-pass-rate", Kind.VALUE),
    FlagInput("threshold-mode", Kind.VALUE),
    FlagInput("max-scenarios", Kind.VALUE),
    FlagInput("max-seconds", Kind.VALUE),
    FlagInput("max-tokens", Kind.VALUE),
    FlagInput("max-total-tokens", Kind.VALUE),
    FlagInput("max-cost", Kind.VALUE),
    FlagInput("shard", Kind.VALUE),
)
# What gates the verdict: the test job's and the merge job's.
GATE_FLAGS = (FlagInput("baseline", Kind.VALUE), FlagInput("fail-on", Kind.VALUE))
# Inputs of a shard job that have no place in the merge job.
SHARD_ONLY = (
    *("observations", "traces", "endpoint", "mcp-listen", "mcp-port", "tools-mcp"),
    *("shard", "scenario", "case", "tag", "runs"),
)

# action.yml's defaults (tests/test_action.py keeps the two equal), for runs
# without action.yml: the prebuilt image used as ``uses: docker://...``. Only the
# Action's own views and set-up have one: an input the CLI has is absent unless written.
DEFAULTS = {
    "report": "behavegate-report.json",
    "junit": "behavegate-junit.xml",
    "summary": "true",
    "summary-file": "behavegate-summary.md",
    "annotations": "true",
    "artifacts": "true",
    "working-directory": ".",
    "comment": "false",
    # Expanded by the runner from action.yml; a docker:// step without it gets the text
    # itself, which means no token (see github_token).
    "github-token": "${{ github.token }}",
}


class ActionInputError(UsageError):
    """An Action input is invalid (reported as an annotation; the step fails)."""


class Inputs(Frozen):
    raw: Mapping[str, str]

    def text(self, name: str) -> str:
        """The trimmed value; action.yml's default only when the input is absent
        (set but empty means empty, e.g. ``junit: ""`` for no JUnit file)."""
        return self.raw.get(f"INPUT_{name.replace(' ', '_').upper()}", DEFAULTS.get(name, "")).strip()

    def flag(self, name: str, default: bool = False) -> bool:
        value = self.text(name)
        if not value:
            return default
        if value in TRUE:
            return True
        if value in FALSE:
            return False
        raise ActionInputError(
            f'Input does not meet YAML 1.2 "Core Schema" specification: {name}. '
            "Support boolean input list: `true | True | TRUE | false | False | FALSE`"
        )

    def lines(self, name: str) -> list[str]:
        """A list input of values that may hold commas: one value per line (``\n`` only:
        a prompt may hold a U+2028 or a form feed)."""
        return [line.strip() for line in self.text(name).split("\n") if line.strip()]

    def items(self, name: str) -> list[str]:
        """A list input: one value per line (commas also separate)."""
        return [part.strip() for line in self.text(name).splitlines() for part in line.split(",") if part.strip()]


def flag_argv(inputs: Inputs, rows: tuple[FlagInput, ...]) -> list[str]:
    """The CLI arguments of the rows' inputs the workflow wrote, nothing for the others."""
    argv: list[str] = []
    for row in rows:
        if row.kind is Kind.SWITCH:
            argv += [row.cli_flag] * inputs.flag(row.name)
        elif row.kind is Kind.ITEMS:
            for value in inputs.items(row.name):
                argv += _value(row.cli_flag, value)
        elif row.kind is Kind.LINES:
            # One argument each, so a case named "-x" or "--help" is a value, not an option.
            argv += [f"{row.cli_flag}={value}" for value in inputs.lines(row.name)]
        elif inputs.text(row.name):
            argv += _value(row.cli_flag, inputs.text(row.name))
    return argv


def _value(flag: str, value: str) -> list[str]:
    """A flag and its value; one argument when the value starts with "-", so it stays a value."""
    return [f"{flag}={value}"] if value.startswith("-") else [flag, value]


def build_argv(inputs: Inputs, environ: Mapping[str, str]) -> list[str]:
    """One CLI call: the workflow's inputs as the flags they are, then the Action's views.
    Every value is checked by the CLI, in the CLI's words."""
    if inputs.items("merge"):
        return _merge_argv(inputs, environ)
    argv = ["test", *flag_argv(inputs, TEST_FLAGS), *flag_argv(inputs, GATE_FLAGS)]
    # A shard's report is part of the evidence: the merge job renders the verdict and gates it.
    argv += _views(inputs, environ, verdict=not inputs.text("shard"))
    # The contract last, after "--": a path such as "--allow-remote" is a path, never a flag.
    return argv + (["--", inputs.text("contract")] if inputs.text("contract") else [])


def _merge_argv(inputs: Inputs, environ: Mapping[str, str]) -> list[str]:
    """``merge``: the shard reports' folders or files in, one run's verdict out."""
    clashing = [name for name in SHARD_ONLY if inputs.text(name)]
    if clashing:
        raise ActionInputError(f"merge combines shard reports; {', '.join(clashing)} belong to the shard jobs")
    argv = ["merge", *inputs.items("merge")]
    if inputs.text("contract"):
        argv += [f"--contract={inputs.text('contract')}"]
    return argv + flag_argv(inputs, GATE_FLAGS) + _views(inputs, environ, verdict=True)


def check_argv(argv: list[str]) -> None:
    """The CLI's own parse of the call, before it runs: a value it refuses is an invalid
    input, annotated under the input's name rather than as a usage screen."""
    import io
    import re

    from behavegate.cli import build_parser
    from behavegate.github.console import ParserExit

    try:
        build_parser(Console(stdout=io.StringIO(), stderr=io.StringIO())).parse_args(argv)
    except ParserExit as refused:
        if refused.code:
            raise ActionInputError(re.sub(r"argument --([a-z-]+)", r"input \1", refused.message or "invalid input")) from None


def _views(inputs: Inputs, environ: Mapping[str, str], *, verdict: bool) -> list[str]:
    argv = [] if inputs.flag("artifacts", True) else ["--no-artifacts"]
    argv += ["--report", inputs.text("report") or DEFAULTS["report"]]
    summary = summary_target(inputs, environ)
    if verdict and inputs.text("junit"):
        argv += ["--junit", inputs.text("junit")]
    if verdict and summary:
        argv += ["--summary", summary]
    for view in ("html", "sarif"):
        if verdict and inputs.text(view):
            argv += [f"--{view}", inputs.text(view)]
    if verdict and inputs.flag("annotations", True):
        argv.append("--annotations")
    if environ.get("GITHUB_OUTPUT"):
        argv += ["--github-output", environ["GITHUB_OUTPUT"]]
    return argv


def summary_target(inputs: Inputs, environ: Mapping[str, str]) -> str:
    """Where the CLI writes the summary: the workspace file (copied into the job
    summary afterwards, so a later step can upload or post it), else the runner's
    step summary itself; empty for none."""
    if inputs.text("summary-file"):
        return inputs.text("summary-file")
    if inputs.flag("summary", True) and environ.get("GITHUB_STEP_SUMMARY"):
        return environ["GITHUB_STEP_SUMMARY"]
    return ""


def copy_summary(name: str, before: object, workdir: Path, env: Mapping[str, str]) -> None:
    """Append this run's summary file to ``$GITHUB_STEP_SUMMARY``. Only a file this
    run wrote (its lstat changed): a stale one from the checkout, or one the run
    refused to write, is never shown as this run's. Read and written by the output
    rule (no link followed)."""
    from behavegate.errors import BehavegateError
    from behavegate.files import place_output, read_placed, write_file
    from behavegate.limits import SUMMARY_MAX_BYTES

    if not env.get("GITHUB_STEP_SUMMARY") or _signature(workdir / name) in (None, before):
        return
    with contextlib.suppress(BehavegateError, OSError):
        text = read_placed(place_output(name, workdir, "summary-file", env, workdir), SUMMARY_MAX_BYTES)
        if text:
            write_file(place_output(env["GITHUB_STEP_SUMMARY"], workdir, "--summary", env, workdir), text, "--summary")


def _github_token(inputs: Inputs, env: Mapping[str, str]) -> str:
    """The token for the PR comment: the input (action.yml defaults it to the workflow's
    token), else ``GITHUB_TOKEN``; an unexpanded expression (a docker:// step) is none."""
    token = inputs.text("github-token")
    if token.startswith("${{"):
        token = ""
    return token or env.get("GITHUB_TOKEN", "")


def sticky_comment(
    inputs: Inputs, summary_file: str, before: object, workdir: Path, env: Mapping[str, str], token: str, console: Console
) -> None:
    """Post (or update) the pull request's sticky comment with this run's summary. Any
    failure is a warning: the comment never changes the verdict or the exit code."""
    from behavegate.errors import BehavegateError
    from behavegate.files import place_output, read_placed
    from behavegate.github.outputs import output_block, write_output
    from behavegate.github.pr_comment import CommentError, post
    from behavegate.limits import SUMMARY_MAX_BYTES

    if _signature(workdir / summary_file) in (None, before):
        console.commands([command("warning", "comment: skipped, this run wrote no summary file", title="behavegate: PR comment")])
        return
    try:
        text = read_placed(place_output(summary_file, workdir, "summary-file", env, workdir), SUMMARY_MAX_BYTES)
        url = post(text or "", _contract_shown(inputs), token, env)
    except (CommentError, BehavegateError, OSError) as error:
        console.commands([command("warning", str(error), title="behavegate: PR comment")])
        return
    console.commands([command("notice", f"behavegate summary posted to the pull request: {url}", title="behavegate: PR comment")])
    if env.get("GITHUB_OUTPUT"):
        with contextlib.suppress(BehavegateError, OSError):
            write_output(env["GITHUB_OUTPUT"], output_block({"comment-url": url}), workdir, "--github-output", append=True)


def _contract_shown(inputs: Inputs) -> str:
    """The contract as the marker names it: its path from the workspace, as the inputs give it
    (the report is not read again: a large run's JSON report is hundreds of megabytes)."""
    import posixpath

    return posixpath.normpath(posixpath.join(inputs.text("working-directory") or ".", inputs.text("contract") or "(discovered)"))


def _signature(path: Path) -> tuple[int, int, int] | None:
    try:
        info = path.lstat()
    except OSError:
        return None
    return (info.st_ino, info.st_mtime_ns, info.st_size)


def give_back(paths: list[Path], workspace: Path) -> None:
    """chown what we wrote to the workspace owner (the runner mounts it from the host)."""
    if not hasattr(os, "geteuid") or os.geteuid() != 0:
        return
    owner = workspace.stat()
    for path in paths:
        try:
            path.resolve().relative_to(workspace.resolve())
        except (ValueError, OSError):
            continue
        targets = [path]
        if path.is_dir() and not path.is_symlink():
            targets += list(path.rglob("*"))
        for target in targets:
            with contextlib.suppress(OSError):
                os.chown(target, owner.st_uid, owner.st_gid, follow_symlinks=False)


def refused_outputs(env: Mapping[str, str]) -> None:
    """An input the CLI would refuse (``runs: abc``) ends the step before the CLI runs: the
    outputs still say so (status=error), so a later step's ``if:`` is not left reading nothing.
    Best effort: the error itself is annotated already."""
    from behavegate.errors import BehavegateError
    from behavegate.github.outputs import output_block, write_output

    if not env.get("GITHUB_OUTPUT"):
        return
    values = dict.fromkeys(("report", "junit", "summary", "html", "sarif", "run-dir", "regressions", "cost"), "")
    block = output_block({"status": "error", "passed": "0", "failed": "0", "incomplete": "0", **values})
    root = Path(env.get("GITHUB_WORKSPACE") or os.getcwd())
    with contextlib.suppress(BehavegateError, OSError):
        write_output(env["GITHUB_OUTPUT"], block, root, "--github-output", append=True)


def main(environ: Mapping[str, str] | None = None) -> int:
    from behavegate.cli import main as cli_main

    env = dict(os.environ if environ is None else environ)
    console = Console(environ=env)
    inputs = Inputs(env)
    for token_var in (inputs.text("auth-env"), inputs.text("judge-auth-env")):
        if token_var and env.get(token_var):
            # Before anything else is printed: the runner hides this value from now on.
            console.mask(env[token_var])
    github_token = _github_token(inputs, env)
    if github_token:
        console.mask(github_token)
    try:
        workspace = Path(env.get("GITHUB_WORKSPACE") or os.getcwd())
        workdir = (workspace / (inputs.text("working-directory") or ".")).resolve()
        try:
            workdir.relative_to(workspace.resolve())
        except ValueError:
            raise ActionInputError("working-directory must stay inside the workspace") from None
        if not workdir.is_dir():
            raise ActionInputError(f"working-directory {inputs.text('working-directory')!r} is not a directory")
        argv = build_argv(inputs, env)
        check_argv(argv)
        for flag in ("summary", "annotations", "artifacts", "comment"):
            inputs.flag(flag)  # validate every boolean, even unused ones
        if inputs.flag("comment") and not inputs.text("summary-file"):
            raise ActionInputError("comment: true posts the summary file: set summary-file (default behavegate-summary.md)")
    except ActionInputError as error:
        console.commands([command("error", str(error), title="behavegate: invalid input")])
        refused_outputs(env)
        return 2
    summary_file = inputs.text("summary-file")
    before = _signature(workdir / summary_file) if summary_file else None
    os.chdir(workdir)
    code = cli_main(argv)
    if summary_file and inputs.flag("summary", True):
        copy_summary(summary_file, before, workdir, env)
    report_path = workdir / (inputs.text("report") or DEFAULTS["report"])
    written = [report_path, workdir / ".behavegate"]
    if inputs.flag("comment") and not inputs.text("shard"):
        sticky_comment(inputs, summary_file, before, workdir, env, github_token, console)
    for name in ("junit", "save-observations", "summary-file", "html", "sarif"):
        if inputs.text(name):
            written.append(workdir / inputs.text(name))
    give_back([p for p in written if p.exists()], workspace)
    return code  # the CLI's: --fail-on decided it (report/suite.py exit_status)
