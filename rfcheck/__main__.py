"""``python -m rfcheck``: the command line."""

import sys

from rfcheck.cli import main

sys.exit(main())
