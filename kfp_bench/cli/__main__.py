"""``python -m kfp_bench.cli``."""

import sys

from kfp_bench.cli import main

sys.exit(main())
