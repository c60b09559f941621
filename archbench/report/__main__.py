"""`python -m archbench.report CAMPAIGN`: build the report's generated inputs (archbench.report.build)."""

import sys

from archbench.report.build import main

sys.exit(main())
