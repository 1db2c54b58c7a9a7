import sys

from behavegate.cli import main

sys.exit(main())
