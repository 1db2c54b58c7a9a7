"""What a command was asked to show and write: the console format, the table's detail,
annotations and every output path, one frozen value built from the command line
(``commands/arguments.py``) and read by the commands and by ``github/outputs.py``."""

from __future__ import annotations

from typing import Literal

from behavegate.frozen import Frozen, field

Format = Literal["table", "json"]
Detail = Literal["quiet", "normal", "verbose"]


class OutputPaths(Frozen):
    """Every file a run may write, by its flag (None: not asked for); each is placed by the
    one path rule (``files.place_output``), relative to the project root."""

    output: str | None = None
    report: str | None = None
    junit: str | None = None
    summary: str | None = None
    html: str | None = None
    sarif: str | None = None
    github_output: str | None = None
    save_observations: str | None = None

    def by_flag(self) -> dict[str, str | None]:
        """Each path under its flag's name (``github_output`` is ``--github-output``), in this order."""
        return {
            "output": self.output,
            "report": self.report,
            "junit": self.junit,
            "summary": self.summary,
            "html": self.html,
            "sarif": self.sarif,
            "github_output": self.github_output,
            "save_observations": self.save_observations,
        }


class Views(Frozen):
    """How a judged run is shown: on the console (``--format``, ``--quiet``/``--verbose``),
    as annotations, and in the files of :class:`OutputPaths`."""

    format: Format = "table"
    detail: Detail = "normal"  # the table's: --quiet wins over --verbose
    annotations: bool = False
    paths: OutputPaths = field(default_factory=OutputPaths)

    @property
    def json_on_stdout(self) -> bool:
        """``--format json``: stdout is (or, if ``--output`` fails, becomes) one JSON
        document, so annotations go to stderr; the runner reads commands from both."""
        return self.format == "json"
