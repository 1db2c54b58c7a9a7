"""Exit codes and the one exception hierarchy. Only the commands turn these
into messages; every one of them means exit 2 (the run could not be judged).

    BehavegateError
    ├── InputError         a file or path could not be used
    ├── UsageError         a flag value or combination is invalid
    ├── RunError           the run could not start (endpoint trust, credentials)
    │   └── RunIncomplete      it started and could not finish (version-1 time budget, report size)
    └── ValidationError    a file broke rules; every Problem (path, line) is kept
        ├── ContractError      the behavior contract
        ├── ObservationError   the observation file
        ├── TraceError         a trace file, or binding its traces to scenarios
        ├── BaselineError      the baseline report (--baseline)
        └── ShardError         a shard report, or shard reports that do not belong together

Each has a ``status`` for CI: "error" (the configuration is wrong: fix it and
re-run) or "incomplete" (the evidence could not be gathered or kept), so a
workflow can tell the two apart; both exit 2.
"""

from __future__ import annotations

import enum

from behavegate.frozen import Frozen


class ExitCode(enum.IntEnum):
    """What the process exit status says (failure beats incomplete beats pass)."""

    PASS = 0  # every requested assertion was evaluated and passed
    FAIL = 1  # a behavior was violated
    INCOMPLETE = 2  # the contract, the run or the evidence was invalid or incomplete
    ERROR = 2  # an alias: invalid usage or configuration exits as incomplete does (skylos's code)

    @classmethod
    def of(cls, status: str) -> ExitCode:
        return {"pass": cls.PASS, "fail": cls.FAIL}.get(status, cls.INCOMPLETE)


class Problem(Frozen):
    """One thing wrong with an input file.

    ``text`` is the message exactly as skylos words it (the JSON ``error`` field
    carries the first one); ``path`` and ``line`` locate it for humans.
    """

    text: str
    path: str = ""
    line: int | None = None
    human: str = ""  # what a person reads instead of ``text``, when skylos's words do not fit one line
    # The file ``line`` is in, relative to the contract's folder ("" = the contract): a golden set's
    # row (contract/datasets.py), whose ``path`` already names that file and line.
    file: str = ""

    def located(self) -> str:
        where = self.path or "(document)"
        if self.line is not None and not self.file:
            where = f"{where} (line {self.line})"
        return f"{where}: {self._detail()}"

    def detail(self) -> str:
        """What is wrong, without the path and line ``located`` puts before it."""
        return self._detail()

    def _detail(self) -> str:
        if self.human:
            return self.human
        # Avoid "x.y (line 3): x.y must be ..." (or "x.y: ...") by dropping the repeated path.
        for joint in (": ", " "):
            if self.path and self.text.startswith(self.path + joint):
                return self.text[len(self.path) + len(joint) :]
        return self.text


class BehavegateError(Exception):
    """Base of every error behavegate reports to a user (exit 2).

    ``message`` is the JSON ``error`` field (skylos's words where skylos has
    them); ``human``, when given, is what a person can act on (the path, the
    cause, the fix) and is shown instead, and kept in ``behavegate.problems``.
    """

    status = "error"

    def __init__(self, message: str, human: str = "") -> None:
        super().__init__(message)
        self.message = message
        self.human = human or message

    def __str__(self) -> str:
        return self.message

    def details(self) -> list[str]:
        """Every line worth showing a human; the first is the headline."""
        return [self.human]


class InputError(BehavegateError):
    """A file or path could not be used (missing, too large, outside the project)."""


class OutputClash(InputError):
    """Output flags naming one file, or a file the run reads: ``flags`` (as OutputPaths names
    them) are not written even to say why, or the error would do what it refuses."""

    def __init__(self, message: str, flags: tuple[str, ...]) -> None:
        super().__init__(message)
        self.flags = flags


class UsageError(BehavegateError):
    """A flag value or combination is invalid."""


class RunError(BehavegateError):
    """The run could not start: the endpoint may not be called, a credential is unusable."""


class RunIncomplete(RunError):
    """The run started and its evidence could not be gathered or kept (not a configuration error)."""

    status = "incomplete"


class ValidationError(BehavegateError):
    """A contract or evidence file broke one or more rules; all of them are kept."""

    def __init__(self, problems: list[Problem]) -> None:
        assert problems, "a ValidationError needs at least one problem"
        super().__init__(problems[0].text)
        self.problems = tuple(problems)

    def details(self) -> list[str]:
        return [problem.located() for problem in self.problems]


class ContractError(ValidationError):
    """The behavior contract is invalid."""


class ObservationError(ValidationError):
    """The observation file is invalid."""


class TraceError(ValidationError):
    """A trace file could not be read, or its traces could not be bound to scenarios."""


class BaselineError(ValidationError):
    """The baseline report (``--baseline``) is not a usable behavegate JSON report;
    each problem names its JSON path, each line the file."""

    def __init__(self, problems: list[Problem], source: str) -> None:
        super().__init__(problems)
        self.source = source
        self.message = self.details()[0]  # the JSON `error` names the file too

    def details(self) -> list[str]:
        return [f"baseline report {self.source}: {p.located() if p.path else p.text}" for p in self.problems]


class ShardError(ValidationError):
    """A shard report is invalid, or the shard reports given to merge are not one run's."""
