"""detect-secrets 1.5.0's plugins on the safety corpus's secret sentences, for docs/safety.md.

detect-secrets is not a behavegate dependency; run this in a scratch virtual environment:

    python3 -m venv /tmp/dsvenv && /tmp/dsvenv/bin/pip install detect-secrets==1.5.0
    /tmp/dsvenv/bin/python bench/compare_detect_secrets.py

Each sentence is scanned line by line with ``scan_line`` under the default settings (every
plugin); a secret sentence counts as found when a non-entropy plugin reports something, and
the entropy plugins are counted separately on the sentences that hold no secret.
"""

from __future__ import annotations

import base64
import json
from collections import Counter
from pathlib import Path

from detect_secrets.core.scan import scan_line  # type: ignore[import-not-found]
from detect_secrets.settings import default_settings  # type: ignore[import-not-found]

CORPUS = Path(__file__).resolve().parents[1] / "tests" / "safety_corpus" / "corpus.jsonl"
SECRETS = ("aws_access_key", "github_token", "jwt", "private_key", "api_key", "connection_string")


def main() -> None:
    planted: Counter[str] = Counter()
    found: Counter[str] = Counter()
    others = flagged_by_patterns = flagged_by_entropy = 0
    with default_settings():
        for line in CORPUS.read_text(encoding="utf-8").splitlines():
            record = json.loads(line)
            text = base64.b64decode(record["text"]).decode() if record.get("encoding") else record["text"]
            types = [s.type for part in text.splitlines() for s in scan_line(part)]
            by_pattern = any("High Entropy" not in t for t in types)
            if record["detector"] in SECRETS:
                planted[record["group"]] += 1
                found[record["group"]] += by_pattern
            else:
                others += 1
                flagged_by_patterns += by_pattern
                flagged_by_entropy += any("High Entropy" in t for t in types)
    for group in sorted(planted):
        print(f"{group}: {found[group]}/{planted[group]}")
    print(f"recall (pattern plugins): {sum(found.values()) / sum(planted.values()):.1%}")
    print(f"non-secret sentences flagged by pattern plugins: {flagged_by_patterns}/{others}")
    print(f"non-secret sentences flagged by entropy plugins: {flagged_by_entropy}/{others}")


if __name__ == "__main__":
    main()
