"""How many verdicts today's behavegate gets right on the served agents recorded from real software.

``.venv/bin/python scripts/real_software/score_served.py [--json]`` runs every contract of
tests/fixtures/real/served/contracts against a loopback replay of its recorded answers (as
tests/test_real_served.py does), compares each verdict with expected.json (the right one, from
what really happened), and prints right/total per source and one line per mismatch:
``source contract scenario assertion: expected X, got Y``.
"""

import argparse
import json
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tests"))

from real_served import ROUTES, expected, mismatches, run_contract  # noqa: E402  (tests/ is put on the path above)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--json", action="store_true", help="print the score as JSON")
    arguments = parser.parse_args()
    right_by_source: dict[str, list[int]] = {}
    wrong: list[dict[str, str]] = []
    with tempfile.TemporaryDirectory(prefix="score-served-") as scratch:
        for contract, (source, _, _) in ROUTES.items():
            folder = Path(scratch) / contract
            folder.mkdir()
            run = run_contract(contract, folder)
            for scenario, verdicts in expected()[contract].items():
                missed = mismatches(contract, run, scenario)
                tally = right_by_source.setdefault(source, [0, 0])
                tally[0] += len(verdicts) - len(missed)
                tally[1] += len(verdicts)
                for assertion, want, got in missed:
                    wrong.append(
                        {
                            "source": source,
                            "contract": contract,
                            "scenario": scenario,
                            "assertion": assertion,
                            "expected": want,
                            "got": got,
                        }
                    )
    if arguments.json:
        score = {source: {"right": right, "total": total} for source, (right, total) in right_by_source.items()}
        print(json.dumps({"score": score, "mismatches": wrong}, indent=1))
        return 0
    for source, (right, total) in right_by_source.items():
        print(f"{source}: {right}/{total} verdicts right")
    for miss in wrong:
        print(
            f"  {miss['source']} {miss['contract']} {miss['scenario']} {miss['assertion']}: expected {miss['expected']}, got {miss['got']}"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
