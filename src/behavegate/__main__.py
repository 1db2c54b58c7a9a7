"""`python -m behavegate`: the command line (cli.py)."""

import sys

from behavegate.cli import main

sys.exit(main())
