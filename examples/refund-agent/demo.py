"""`make demo`: judge the refund agent's captured evidence, good and regressed.

The good agent must pass (exit 0) and the regressed one must fail (exit 1);
the demo itself exits 0 only when both outcomes are as expected.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
CONTRACT = HERE.relative_to(ROOT) / "contract.yml"


def run(title: str, observations: str, expected_exit: int) -> bool:
    print(f"\n=== {title} ===", flush=True)
    command = [sys.executable, "-m", "behavegate", "test", str(CONTRACT),
               "--observations", str(HERE.relative_to(ROOT) / observations)]  # fmt: skip
    print("$ behavegate " + " ".join(command[3:]), flush=True)
    code = subprocess.run(command, cwd=ROOT, check=False).returncode
    ok = code == expected_exit
    print(f"-> exit {code} ({'as expected' if ok else f'expected {expected_exit}'})", flush=True)
    return ok


def main() -> int:
    results = [
        run("well-behaved agent (offline evidence)", "observations-good.json", 0),
        run("regressed agent: calls a forbidden tool, drops its source", "observations-regressed.json", 1),
    ]
    if all(results):
        print("\ndemo: both outcomes as expected (good agent passes, regressed agent is caught)")
        return 0
    print("\ndemo: UNEXPECTED outcome, see above", file=sys.stderr)
    return 1


if __name__ == "__main__":
    sys.exit(main())
