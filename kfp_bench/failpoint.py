"""A test hook: make one named step of the kfp_bench pipeline fail, to prove the cleanup.

The exit handler must leave nothing behind whichever step fails. Most steps can be made to fail
from outside (a bad parameter, a manifest URL that stops answering, a KFP API fault on the local
server); the others (a run spawner or poller that dies, a load worker, aggregate, report) fail
only through a bug or a killed pod. For those, ``KFP_BENCH_FAIL_STEP`` names the steps to fail,
comma-separated, by component name (``spawn_runs``, ``poll_runs``, ``inference_load``,
``aggregate``, ``report``, ...). Each component calls ``fail_point`` once its work is done, just
before it hands on its outputs: everything the step would create then exists, the hardest case
for the cleanup. A step switched off by the parameters only says so and never reaches it.

The variable is read from the step's own environment: kfp.local's SubprocessRunner passes the
caller's on; in a cluster it is unset, and nothing changes.
"""

from __future__ import annotations

import os

from kfp_bench.errors import BenchError

FAIL_STEP_ENV = "KFP_BENCH_FAIL_STEP"


def fail_point(step: str) -> None:
    """Raise ``BenchError`` if ``$KFP_BENCH_FAIL_STEP`` names ``step``; else do nothing."""
    names = {n.strip() for n in os.environ.get(FAIL_STEP_ENV, "").split(",")}
    if step in names:
        raise BenchError(
            f"step {step} failed on purpose: {FAIL_STEP_ENV} names it (a test hook); "
            f"unset {FAIL_STEP_ENV} to run the step"
        )
