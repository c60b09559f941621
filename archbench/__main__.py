"""`python -m archbench`: the command line (archbench.cli.main)."""

import sys

from archbench.cli.main import main

sys.exit(main())
