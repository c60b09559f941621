"""`python -m archbench ...`: see archbench/cli.py."""
import sys

from archbench.cli import main

sys.exit(main())
