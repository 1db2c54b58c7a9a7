"""Screenshot ``behavegate view``'s compare page: the refund agent's well-behaved run against
its regressed run, served by the viewer and opened in headless chromium (tests/browser.py).

Runs behavegate as a user would, in a scratch copy of examples/refund-agent (the
version-1 contract judged from the good, then the regressed observations), serves the
runs with ``behavegate view`` on a free loopback port and saves the compare page.
Needs chromium (``apt-get install chromium``).

    .venv/bin/python scripts/view_screenshot.py [--out /tmp/view-compare.png] [--height 1400]
"""

from __future__ import annotations

import argparse
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
EXAMPLE = ROOT / "examples" / "refund-agent"
sys.path.insert(0, str(ROOT / "tests"))

from browser import Browser, chromium  # noqa: E402  # the tests' DevTools client


def test_run(project: Path, observations: str) -> str:
    done = subprocess.run(
        [sys.executable, "-m", "behavegate", "test", "contract.yml", "--observations", observations],
        cwd=project,
        capture_output=True,
        text=True,
        check=False,
    )
    found = re.search(r"^Run dir: .*/([^/\s]+)$", done.stdout, re.MULTILINE)
    if found is None:
        raise SystemExit(f"no run directory in: {done.stdout[-500:]}")
    return found.group(1)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", default="/tmp/view-compare.png")
    parser.add_argument("--height", type=int, default=1400)
    options = parser.parse_args()
    binary = chromium()
    if binary is None:
        print("chromium is not installed: apt-get install chromium", file=sys.stderr)
        return 2
    with tempfile.TemporaryDirectory(prefix="behavegate-view-") as scratch:
        project = Path(scratch)
        for name in ("contract.yml", "observations-good.json", "observations-regressed.json"):
            shutil.copy(EXAMPLE / name, project / name)
        a = test_run(project, "observations-good.json")
        time.sleep(1)  # run ids begin with the second they started: the list shows A before B
        b = test_run(project, "observations-regressed.json")
        server = subprocess.Popen([sys.executable, "-m", "behavegate", "view"], cwd=project, stdout=subprocess.PIPE, text=True)
        try:
            assert server.stdout is not None
            url = re.search(r"http://\S+", server.stdout.readline())
            if url is None:
                print("behavegate view printed no address", file=sys.stderr)
                return 1
            with Browser(binary, 1280, options.height) as browser:
                page = browser.open(f"{url.group(0)}compare?a={a}&b={b}")
                problems = page.console_errors() + page.requests()
                page.screenshot(Path(options.out))
        finally:
            server.terminate()
            server.wait(10)
    if problems:
        print(f"the page reported: {problems}", file=sys.stderr)
        return 1
    print(f"wrote {options.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
