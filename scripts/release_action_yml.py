"""Point action.yml at a published image: the release commit's only change.

    python3 scripts/release_action_yml.py ghcr.io/acme/behavegate:1.2.0 [action.yml]

`uses: <owner>/behavegate@v1` reads action.yml at that tag; with `image: Dockerfile` every job
builds the image (base pulled, `pip install`), with `image: docker://...` the runner only pulls
the image the release published. The main branch keeps `image: Dockerfile`, so `uses: ./` and
any branch or commit ref still run their own code. Standard library only: the release job runs
it with the runner's python3, before any install.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

# The one line the release rewrites: `runs:` is the last block and its `image` is indented once.
SOURCE_LINE = re.compile(r"^(  image:) Dockerfile$", re.MULTILINE)
IMAGE = re.compile(r"^[a-z0-9.-]+(?::[0-9]+)?(?:/[a-z0-9._-]+)+:[A-Za-z0-9._-]+$")


class ReleaseError(Exception):
    """The image name or action.yml is not what a release can rewrite."""


def pinned(action_yml: str, image: str) -> str:
    if not IMAGE.fullmatch(image):
        raise ReleaseError(f"image: expected registry/owner/name:version in lower case, got {image!r}")
    found = SOURCE_LINE.findall(action_yml)
    if len(found) != 1:
        raise ReleaseError(f"action.yml: expected one line 'image: Dockerfile' under runs:, found {len(found)}")
    return SOURCE_LINE.sub(rf"\1 docker://{image}", action_yml)


def main(argv: list[str]) -> int:
    if len(argv) not in (1, 2):
        print(__doc__.strip().splitlines()[2].strip(), file=sys.stderr)
        return 2
    path = Path(argv[1] if len(argv) == 2 else "action.yml")
    try:
        path.write_text(pinned(path.read_text(encoding="utf-8"), argv[0]), encoding="utf-8")
    except (OSError, ReleaseError) as error:
        print(f"release_action_yml: {error}", file=sys.stderr)
        return 2
    print(f"{path}: runs.image is docker://{argv[0]}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
