"""Write docs/html-report.png: the refund agent's HTML report, as a reviewer sees it.

Runs behavegate as a user would on the example (examples/refund-agent): the
version-2 contract judged from the well-behaved agent's recorded traces (the
baseline), then from the regressed agent's with ``--baseline`` and ``--html``;
opens the HTML report in headless chromium (tests/browser.py) and saves a
screenshot. Needs chromium (``apt-get install chromium``).

    .venv/bin/python scripts/html_screenshot.py [--dark] [--out docs/html-report.png]
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
EXAMPLE = ROOT / "examples" / "refund-agent"
sys.path.insert(0, str(ROOT / "tests"))

from browser import Browser, chromium  # noqa: E402  # the tests' DevTools client


def behavegate(*args: str) -> int:
    return subprocess.run([sys.executable, "-m", "behavegate", "test", "contract-v2.yml", "--no-artifacts", *args],
                          cwd=EXAMPLE, stdout=subprocess.DEVNULL, check=False).returncode  # fmt: skip


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", default=str(ROOT / "docs" / "html-report.png"))
    parser.add_argument("--dark", action="store_true", help="the dark color scheme")
    parser.add_argument("--height", type=int, default=1700)
    options = parser.parse_args()
    binary = chromium()
    if binary is None:
        print("chromium is not installed: apt-get install chromium", file=sys.stderr)
        return 2
    folder = EXAMPLE / "screenshot"  # inside the project (the output rule); named as the report shows it
    if folder.exists():
        print(f"{folder} exists; remove it first", file=sys.stderr)
        return 2
    folder.mkdir()
    try:
        work = folder.name
        behavegate("--traces", "traces/good.jsonl", "--report", f"{work}/baseline.json")
        code = behavegate(
            "--traces", "traces/regressed.jsonl", "--baseline", f"{work}/baseline.json", "--html", f"{work}/report.html"
        )
        if code != 1:
            print(f"expected the regressed agent to fail (exit 1), got {code}", file=sys.stderr)
            return 1
        with Browser(binary, 1280, options.height) as browser:
            page = browser.open((Path(folder) / "report.html").as_uri())
            page.emulate_dark(options.dark)
            page.evaluate(
                "document.querySelectorAll('details.scenario')[1].open = false"
            )  # two open: one failure, one incomplete
            assert page.console_errors() == [] and page.requests() == []
            page.screenshot(Path(options.out))
    finally:
        shutil.rmtree(folder)
    print(f"wrote {options.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
