"""``python -m kfp_bench.sandbox.kfp_server --port P [...]``: serve the local KFP API."""

import sys

from kfp_bench.sandbox.kfp_server.server import main

sys.exit(main())
